// Which native fp16 kernels (if any) F16Compute::kNativeF16Products runs.
// This file is built for the baseline target: on aarch64 it asks the kernel
// whether the CPU has FP16 vector arithmetic before the kernels (compiled for
// ARMv8.2-A FP16 in their own file) may run, so a plain ARMv8.0 CPU gets
// kUnsupported instead of an illegal instruction.
#include "f16_native.h"
#include "tinyattn/forward_f16.h"

#if defined(__aarch64__) && defined(__linux__) && !defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#define TINYATTN_F16_NATIVE_A64_CHECK 1
#endif

namespace tinyattn {
namespace detail {

const KernelsF16Native* f16_native_kernels() {
#if defined(__aarch64__) && defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
  return &kF16NativeA64;  // the whole build targets FP16 arithmetic
#elif defined(TINYATTN_F16_NATIVE_A64_CHECK)
  return (getauxval(AT_HWCAP) & HWCAP_ASIMDHP) != 0 ? &kF16NativeA64 : nullptr;
#elif defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
  return &kF16NativeMve;
#else
  return nullptr;
#endif
}

}  // namespace detail

bool f16_native_products_available() { return detail::f16_native_kernels() != nullptr; }

const char* f16_native_products_name() {
  const detail::KernelsF16Native* k = detail::f16_native_kernels();
  return k ? k->name : "none";
}

}  // namespace tinyattn
