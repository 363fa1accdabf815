// Configure-time probe (try_compile, never linked into anything): spells out
// which Highway targets this compiler and these flags compile, so CMake can
// register one test run per target. Read from the object file as a string.
#include <hwy/highway.h>


extern "C" __attribute__((used)) const char tinyattn_hwy_probe[] =
    "TINYATTN_HWY_TARGETS="
#if HWY_TARGETS & HWY_AVX3_DL
    "AVX3_DL,"
#endif
#if HWY_TARGETS & HWY_AVX3
    "AVX3,"
#endif
#if HWY_TARGETS & HWY_AVX2
    "AVX2,"
#endif
#if HWY_TARGETS & HWY_SSE4
    "SSE4,"
#endif
#if HWY_TARGETS & HWY_SSSE3
    "SSSE3,"
#endif
#if HWY_TARGETS & HWY_SVE2_128
    "SVE2_128,"
#endif
#if HWY_TARGETS & HWY_SVE_256
    "SVE_256,"
#endif
#if HWY_TARGETS & HWY_SVE2
    "SVE2,"
#endif
#if HWY_TARGETS & HWY_SVE
    "SVE,"
#endif
#if HWY_TARGETS & HWY_NEON
    "NEON,"
#endif
#if HWY_TARGETS & HWY_RVV
    "RVV,"
#endif
#if HWY_TARGETS & HWY_PPC8
    "PPC8,"
#endif
#if HWY_TARGETS & HWY_WASM_EMU256
    "WASM_EMU256,"
#endif
#if HWY_TARGETS & HWY_WASM
    "WASM,"
#endif
#if HWY_TARGETS & HWY_EMU128
    "EMU128,"
#endif
#if HWY_TARGETS & HWY_SCALAR
    "SCALAR,"
#endif
    ":STATIC="
#if HWY_STATIC_TARGET == HWY_AVX3_DL
    "AVX3_DL"
#elif HWY_STATIC_TARGET == HWY_AVX3
    "AVX3"
#elif HWY_STATIC_TARGET == HWY_AVX2
    "AVX2"
#elif HWY_STATIC_TARGET == HWY_SSE4
    "SSE4"
#elif HWY_STATIC_TARGET == HWY_SSSE3
    "SSSE3"
#elif HWY_STATIC_TARGET == HWY_SVE2_128
    "SVE2_128"
#elif HWY_STATIC_TARGET == HWY_SVE_256
    "SVE_256"
#elif HWY_STATIC_TARGET == HWY_SVE2
    "SVE2"
#elif HWY_STATIC_TARGET == HWY_SVE
    "SVE"
#elif HWY_STATIC_TARGET == HWY_NEON
    "NEON"
#elif HWY_STATIC_TARGET == HWY_RVV
    "RVV"
#elif HWY_STATIC_TARGET == HWY_PPC8
    "PPC8"
#elif HWY_STATIC_TARGET == HWY_WASM_EMU256
    "WASM_EMU256"
#elif HWY_STATIC_TARGET == HWY_WASM
    "WASM"
#elif HWY_STATIC_TARGET == HWY_EMU128
    "EMU128"
#elif HWY_STATIC_TARGET == HWY_SCALAR
    "SCALAR"
#endif
    ":END";
