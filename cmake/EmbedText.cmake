# cmake -DINPUT=file -DOUTPUT=file.inc -DNAME=identifier -P EmbedText.cmake
# Writes a C++ file that defines `static const char NAME[]` holding INPUT's
# text, so a tool carries the file instead of pointing at the source tree.
file(READ "${INPUT}" text)
set(delimiter "kiln_embed")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/EmbedText.cmake; do not edit.\n"
  "static const char ${NAME}[] = R\"${delimiter}(${text})${delimiter}\";\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
