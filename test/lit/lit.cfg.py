# lit configuration for Kiln's FileCheck tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Kiln"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".onnxtxt"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "onnx-assemble.py", "import-check.sh"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test", "lit")

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.kiln_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["kiln-opt", "kiln"], [config.kiln_tools_dir, config.llvm_tools_dir])
# Debian's python has the onnx package; the pyenv one on PATH may not.
config.substitutions.append(("%debian-python", "/usr/bin/python3"))
config.substitutions.append(
    ("%import-check", os.path.join(config.test_source_root, "import-check.sh")))
config.substitutions.append(
    ("%onnx-assemble",
     "/usr/bin/python3 " + os.path.join(config.test_source_root, "onnx-assemble.py")))
config.substitutions.append(("%kiln_src", config.kiln_src_root))

# mlir-runner executes lowered IR for numeric lowering tests.
runner_libs = ",".join(
    os.path.join("/usr/lib/llvm-22/lib", lib)
    for lib in ["libmlir_c_runner_utils.so", "libmlir_runner_utils.so"])
config.substitutions.append(
    ("%mlir-runner",
     os.path.join(config.llvm_tools_dir, "mlir-runner") +
     " -e main -entry-point-result=void -shared-libs=" + runner_libs))
