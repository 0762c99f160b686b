# kiln_add_model(TARGET target MODEL model.onnx
#                [NAME name] [TARGET_CPU cpu] [MAX_BATCH n] [STATIC]
#                [OPTIONS kiln-compile-option...] [DEPENDS file...])
#
# Compiles MODEL (.onnx, .mlir or .mlirbc) with `kiln compile` at build
# time into <build>/kiln_models/<name>/<name>.so (or .a with STATIC) and
# <name>.h, and links it into `target` with the Kiln runtime:
#   - the header's folder is on target's include path (#include "<name>.h"),
#   - the artifact is linked, so `&kiln_model_descriptor` is the model
#     (kiln_model_from_abi); KILN_MODEL_<NAME>_PATH names the file for
#     kiln_model_load as well.
# The compile re-runs when the model, the options, the kiln binary or a
# DEPENDS file (an ONNX model's external data, a kiln IR model's weights
# file) change. NAME defaults to the model file's name without its
# extension.
# Only one model per target can be reached through kiln_model_descriptor.
function(kiln_add_model)
  cmake_parse_arguments(ARG "STATIC" "TARGET;MODEL;NAME;TARGET_CPU;MAX_BATCH" "OPTIONS;DEPENDS"
                        ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_model: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  foreach(required TARGET MODEL)
    if(NOT ARG_${required})
      message(FATAL_ERROR "kiln_add_model: ${required} is required")
    endif()
  endforeach()
  if(NOT TARGET ${ARG_TARGET})
    message(FATAL_ERROR "kiln_add_model: '${ARG_TARGET}' is not a target")
  endif()
  if(NOT KILN_EXECUTABLE)
    message(FATAL_ERROR "kiln_add_model: this Kiln package has no compiler (install the kiln package)")
  endif()
  # Every artifact defines kiln_model_descriptor: two static ones in one
  # program would collide at link time, so say it here.
  if(ARG_STATIC)
    get_target_property(previous ${ARG_TARGET} KILN_STATIC_MODEL)
    if(previous)
      message(FATAL_ERROR "kiln_add_model: '${ARG_TARGET}' already links the static model "
        "'${previous}'; a program links at most one model statically (each defines "
        "kiln_model_descriptor): make the others shared and load them by path")
    endif()
  endif()
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "kiln_add_model: no model at '${model}'")
  endif()
  set(inputs "${model}")
  foreach(file IN LISTS ARG_DEPENDS)
    get_filename_component(file "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND inputs "${file}")
  endforeach()
  set(name "${ARG_NAME}")
  if(NOT name)
    get_filename_component(name "${model}" NAME_WE)
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "kiln_add_model: NAME '${name}' must be a C identifier (pass NAME)")
  endif()
  set(ext .so)
  if(ARG_STATIC)
    set(ext .a)
  endif()
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/kiln_models/${name}")
  set(artifact "${dir}/${name}${ext}")
  set(header "${dir}/${name}.h")
  set(args compile "${model}" -o "${artifact}")
  if(ARG_TARGET_CPU)
    list(APPEND args "--cpu=${ARG_TARGET_CPU}")
  endif()
  if(ARG_MAX_BATCH)
    list(APPEND args --dynamic-batch "--max-batch" "${ARG_MAX_BATCH}")
  endif()
  list(APPEND args ${ARG_OPTIONS})
  # The command line in a file that changes only when it does: the
  # compile depends on it, so new options re-run it with any generator.
  string(REPLACE ";" "\n" options_text "${args}")
  file(CONFIGURE OUTPUT "${dir}/options.txt" CONTENT "${options_text}\n")
  add_custom_command(OUTPUT "${artifact}" "${header}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${dir}"
    COMMAND "${KILN_EXECUTABLE}" ${args} --quiet
    DEPENDS ${inputs} "${KILN_EXECUTABLE}" "${dir}/options.txt"
    COMMENT "kiln: compiling ${name} (${ARG_MODEL})"
    VERBATIM)
  add_custom_target(kiln_model_${name} DEPENDS "${artifact}" "${header}")
  add_dependencies(${ARG_TARGET} kiln_model_${name})
  target_include_directories(${ARG_TARGET} PRIVATE "${dir}")
  string(TOUPPER "${name}" upper)
  target_compile_definitions(${ARG_TARGET} PRIVATE "KILN_MODEL_${upper}_PATH=\"${artifact}\"")
  # The artifact as an imported library, linked by its full path.
  set(lib kiln_model_${name}_artifact)
  if(ARG_STATIC)
    add_library(${lib} STATIC IMPORTED)
  else()
    add_library(${lib} SHARED IMPORTED)
  endif()
  set_target_properties(${lib} PROPERTIES IMPORTED_LOCATION "${artifact}")
  if(NOT ARG_STATIC)
    set_target_properties(${lib} PROPERTIES IMPORTED_SONAME "${name}.so")
  endif()
  add_dependencies(${lib} kiln_model_${name})
  target_link_libraries(${ARG_TARGET} PRIVATE ${lib} Kiln::runtime)
  if(ARG_STATIC)
    set_target_properties(${ARG_TARGET} PROPERTIES KILN_STATIC_MODEL "${name}")
    # The generated code calls libm.
    target_link_libraries(${ARG_TARGET} PRIVATE m)
  endif()
endfunction()
