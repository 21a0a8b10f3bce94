//===- tensorboard_events.cpp - the TensorBoard plugin (Event messages) ---===//
//
// libtcc_tensorboard.so.0: tensorboard.Event messages built with the C++
// that protoc generated from TensorBoard's own .proto files, serialized for
// the trainer's TFRecord writer (tensorboard.cpp).
//
//===----------------------------------------------------------------------===//

#include "runtime/trainer/tensorboard_events.h"

#include "tensorboard/compat/proto/event.pb.h"
#include "tensorboard/compat/proto/summary.pb.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace {

void fill(const tcc_tensorboard_event &spec, tensorboard::Event &event) {
  event.set_wall_time(spec.wall_time);
  event.set_step(spec.step);
  switch (spec.kind) {
  case TCC_TENSORBOARD_FILE_VERSION:
    event.set_file_version("brain.Event:2");
    break;
  case TCC_TENSORBOARD_SESSION_START:
    event.mutable_session_log()->set_status(tensorboard::SessionLog::START);
    break;
  case TCC_TENSORBOARD_SCALARS:
    for (int32_t i = 0; i < spec.num_scalars; ++i) {
      tensorboard::Summary::Value *v = event.mutable_summary()->add_value();
      v->set_tag(spec.tags[i]);
      v->set_simple_value(spec.values[i]);
    }
    break;
  default: { // TCC_TENSORBOARD_TEXT
    tensorboard::Summary::Value *v = event.mutable_summary()->add_value();
    v->set_tag(spec.text_tag);
    // The text plugin's format: a string tensor tagged with the plugin.
    v->mutable_metadata()->mutable_plugin_data()->set_plugin_name("text");
    tensorboard::TensorProto *tensor = v->mutable_tensor();
    tensor->set_dtype(tensorboard::DT_STRING);
    tensor->mutable_tensor_shape();
    tensor->add_string_val(spec.text);
  }
  }
}

} // namespace

extern "C" __attribute__((visibility("default"))) int
tcc_tensorboard_encode(const tcc_tensorboard_event *spec, char **out_data, size_t *out_size) {
  if (!spec || spec->kind < TCC_TENSORBOARD_FILE_VERSION || spec->kind > TCC_TENSORBOARD_TEXT)
    return -1;
  try {
    tensorboard::Event event;
    fill(*spec, event);
    std::string bytes = event.SerializeAsString();
    char *data = static_cast<char *>(std::malloc(bytes.size() ? bytes.size() : 1));
    if (!data)
      return -1;
    std::memcpy(data, bytes.data(), bytes.size());
    *out_data = data;
    *out_size = bytes.size();
    return 0;
  } catch (const std::bad_alloc &) {
    return -1;
  }
}

extern "C" __attribute__((visibility("default"))) void tcc_tensorboard_free(char *data) {
  std::free(data);
}
