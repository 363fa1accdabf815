// The part of libhwy that dynamic dispatch needs, for targets without a usable
// libhwy (Debian ships no static libhwy, none for riscv64, and libhwy:armhf
// 1.0.3 never reports NEON): SupportedTargets, SetSupportedTargetsForTest,
// GetChosenTarget, plus DisableTargets and Abort so the ABI is complete.
// Selected by TINYATTN_HWY_RUNTIME=builtin; never linked together with libhwy.
// Heap-free. CPU detection asks the OS (auxv) or cpuid for what each Highway
// target's ops need.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "hwy/base.h"
#include "hwy/targets.h"

#if defined(__linux__) && (HWY_ARCH_ARM_A64 || HWY_ARCH_ARM_V7)
#include <sys/auxv.h>
#endif

namespace hwy {
namespace {

int64_t g_forced = 0;    // SetSupportedTargetsForTest; 0 = detect
int64_t g_disabled = 0;  // DisableTargets

int64_t DetectTargets() {
  int64_t bits = HWY_SCALAR | HWY_EMU128 | HWY_ENABLED_BASELINE;
#if HWY_ARCH_X86 && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  // Highway 1.0.3's SSE4 target also uses AES and CLMUL; AVX2 adds FMA, BMI2, F16C.
  const bool ssse3 = __builtin_cpu_supports("ssse3");
  const bool sse4 = ssse3 && __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul") &&
                    __builtin_cpu_supports("aes");
  const bool avx2 = sse4 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("f16c");
  const bool avx3 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
  if (ssse3) bits |= HWY_SSSE3;
  if (sse4) bits |= HWY_SSE4;
  if (avx2) bits |= HWY_AVX2;
  if (avx3) bits |= HWY_AVX3;
#elif defined(__linux__) && HWY_ARCH_ARM_A64
  const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  if (hwcap & (1UL << 3)) bits |= HWY_NEON;  // HWCAP_AES: Highway's A64 NEON target uses AES
  if (hwcap & (1UL << 22)) {                 // HWCAP_SVE
    bits |= HWY_SVE;
    uint64_t vector_bytes = 0;
    __asm__ volatile(".arch_extension sve\n\trdvl %0, #1" : "=r"(vector_bytes));
    if (vector_bytes == 32) bits |= HWY_SVE_256;  // SVE_256 code assumes exactly 256-bit vectors
    if ((hwcap2 & (1UL << 1)) && (hwcap2 & (1UL << 2))) {  // HWCAP2_SVE2, HWCAP2_SVEAES
      bits |= HWY_SVE2;
      if (vector_bytes == 16) bits |= HWY_SVE2_128;
    }
  }
#elif defined(__linux__) && HWY_ARCH_ARM_V7
  const unsigned long hwcap = getauxval(AT_HWCAP);
  if ((hwcap & (1UL << 12)) && (hwcap & (1UL << 16))) bits |= HWY_NEON;  // HWCAP_NEON, HWCAP_VFPv4
#endif
  return bits;
}

}  // namespace

HWY_DLLEXPORT int64_t SupportedTargets() {
  int64_t targets = g_forced != 0 ? g_forced : DetectTargets();
  targets &= ~g_disabled;
  return targets != 0 ? targets : HWY_STATIC_TARGET;  // never 0, as libhwy promises
}

HWY_DLLEXPORT void DisableTargets(int64_t disabled_targets) {
  g_disabled = disabled_targets;
  GetChosenTarget().DeInit();  // the next dispatch chooses again
}

HWY_DLLEXPORT void SetSupportedTargetsForTest(int64_t targets) {
  g_forced = targets;
  GetChosenTarget().DeInit();
}

HWY_DLLEXPORT ChosenTarget& GetChosenTarget() {
  static ChosenTarget chosen;
  return chosen;
}

HWY_DLLEXPORT HWY_NORETURN void HWY_FORMAT(3, 4) Abort(const char* file, int line, const char* format, ...) {
  char message[200];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  std::fprintf(stderr, "Abort at %s:%d: %s\n", file, line, message);
  std::abort();
}

}  // namespace hwy
