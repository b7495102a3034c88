# -*- Python -*-
# lit configuration for Kiln's regression tests.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "KILN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".c"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "fuzz"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%kiln_version", config.kiln_version))
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.kiln_tools_dir, config.llvm_tools_dir]
tools = [
    ToolSubst("kiln-opt", unresolved="fatal"),
    ToolSubst("kiln-compile", unresolved="fatal"),
    ToolSubst("kiln-capi-test", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Tests that build GPU kernel binaries need the CUDA toolkit's ptxas (kiln-compile
# also looks in /usr/local/cuda); no GPU is needed.
if shutil.which("ptxas") or os.access("/usr/local/cuda/bin/ptxas", os.X_OK):
    config.available_features.add("ptxas")
