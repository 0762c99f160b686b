# Helpers shared by Kiln's CMakeLists files.

# kiln_add_library(name SOURCES... [DEPENDS tgt...] [LINK libs...] [MLIR_LINK libs...])
# A static library of compiler code. MLIR_LINK libraries go through
# mlir_target_link_libraries so that they resolve to the shared libMLIR.so.
function(kiln_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;LINK;MLIR_LINK" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES} ${ARG_UNPARSED_ARGUMENTS})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  if(ARG_LINK)
    target_link_libraries(${name} PUBLIC ${ARG_LINK})
  endif()
  if(ARG_MLIR_LINK)
    mlir_target_link_libraries(${name} PUBLIC ${ARG_MLIR_LINK})
    # libMLIR.so leaves LLVM's support code to the shared libLLVM.so.
    target_link_libraries(${name} PUBLIC LLVM)
  endif()
endfunction()

# kiln_enable_exceptions(target): for the few targets (Catch2, Protobuf/ONNX
# glue) that need C++ exceptions; LLVM's flags turn them off everywhere else.
function(kiln_enable_exceptions target)
  target_compile_options(${target} PRIVATE -fexceptions)
endfunction()
