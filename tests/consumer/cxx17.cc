// The consumer's project asks for C++14; linking tinyattn::tinyattn must
// raise this file to C++17 (GCC 12 and Clang 16 default to C++17, hence the
// explicit 14 in CMakeLists.txt).
static_assert(__cplusplus >= 201703L, "tinyattn::tinyattn did not bring C++17 to its consumer");
