# Writes the bytes of INPUT as a C++ array `NAME` (and `NAME_size`) to OUTPUT.
# Used to embed the self-test code object, which is built from source at build time.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" length)
math(EXPR bytes "${length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," array "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){32})" "\\1\n" array "${array}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT}; do not edit.\n#include <cstddef>\n#include <cstdint>\nextern const uint8_t ${NAME}[] = {\n${array}\n};\nextern const size_t ${NAME}_size = ${bytes};\n")
