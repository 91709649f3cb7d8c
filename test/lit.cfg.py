# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "MLA"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".ll", ".s", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mla_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [os.path.join(config.mla_obj_root, "bin"), config.llvm_tools_dir]
tools = ["mla-opt", "mla-compile", "mla-run", "mla-perf", "mlir-opt", "llc", "llvm-mc",
         "llvm-readelf", "llvm-objdump"]
llvm_config.add_tool_substitutions(
    [t for t in tools if any(os.path.exists(os.path.join(d, t)) for d in tool_dirs)],
    tool_dirs)
config.substitutions.append(("%llvm_tools_dir", config.llvm_tools_dir))
config.substitutions.append(("%mla_src_root", config.mla_src_root))
