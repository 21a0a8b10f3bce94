#!/usr/bin/env bash
# Regenerates tensorboard/compat/proto/*.proto from a TensorBoard wheel.
# The wheel ships the compiled descriptors (*_pb2.py), not the .proto
# sources, and PyPI has no source distribution; so each file's serialized
# FileDescriptorProto is read out of its _pb2.py (Debian's /usr/bin/python3
# with python3-protobuf) and printed back as .proto text by protobuf's own
# FileDescriptor::DebugString (a throwaway C++ program, libprotobuf-dev).
#   third_party/tensorboard/extract_protos.sh [VERSION]   (default 2.21.0)
set -euo pipefail
cd "$(dirname "$0")"
VERSION=${1:-2.21.0}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 -m pip download -q --no-deps "tensorboard==$VERSION" -d "$TMP"
unzip -q "$TMP"/tensorboard-*.whl 'tensorboard/compat/proto/*' -d "$TMP/w"
/usr/bin/python3 - "$TMP" <<'PY'
import ast, sys
from google.protobuf import descriptor_pb2
tmp = sys.argv[1]
fds = descriptor_pb2.FileDescriptorSet()
# event.proto and what it imports, dependencies first.
for n in ["types", "tensor_shape", "resource_handle", "tensor", "histogram", "summary", "event"]:
    src = open(f"{tmp}/w/tensorboard/compat/proto/{n}_pb2.py").read()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "AddSerializedFile":
            fds.file.add().ParseFromString(node.args[0].value)
open(f"{tmp}/set.pb", "wb").write(fds.SerializeToString())
PY
cat >"$TMP/print.cpp" <<'CPP'
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <fstream>
#include <sstream>
int main(int, char **argv) {
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  google::protobuf::FileDescriptorSet set;
  set.ParseFromString(bytes.str());
  google::protobuf::DescriptorPool pool;
  for (const auto &file : set.file())
    std::ofstream(argv[2] + ("/" + file.name())) << pool.BuildFile(file)->DebugString();
}
CPP
g++ -O0 "$TMP/print.cpp" -o "$TMP/print" -lprotobuf
mkdir -p tensorboard/compat/proto
"$TMP/print" "$TMP/set.pb" .
echo "extracted $(ls tensorboard/compat/proto | wc -l) files from tensorboard $VERSION"
