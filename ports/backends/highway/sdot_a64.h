// The Highway port's int8 scores with the Armv8.2-A dot-product instructions
// (FEAT_DotProd, SDOT). Highway 1.0.3 has no op for them, so they are written
// with NEON intrinsics in sdot_a64.cc, the one file built with +dotprod; the
// NEON target's int8 table uses them only when the CPU reports the feature.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__aarch64__) && defined(__linux__)
#define TINYATTN_HWY_SDOT 1
#else
#define TINYATTN_HWY_SDOT 0
#endif

#if TINYATTN_HWY_SDOT
namespace tinyattn {
namespace highway {

// Whether this CPU executes SDOT (HWCAP_ASIMDDP), asked once.
bool cpu_has_sdot();

// KernelsI8::scores with SDOT (same integers as every other port).
int32_t scores_sdot(const int8_t* q, const int8_t* k, size_t ldk, size_t count, size_t dk, int32_t q_zero,
                    int32_t k_zero, int32_t* s);

}  // namespace highway
}  // namespace tinyattn
#endif
