# lit configuration for tcc: every .mlir and .onnxtxt under test/ is a test.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "tcc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.excludes = ["unit", "Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tcc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%tcc_src", config.tcc_src_root))
config.substitutions.append(("%onnx_testdata", config.onnx_testdata_dir))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["tcc-opt", "tcc"], [config.tcc_tools_dir])

if os.path.isdir(config.onnx_testdata_dir):
    config.available_features.add("onnx-testdata")
