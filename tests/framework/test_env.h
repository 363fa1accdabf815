// What every test binary prints first: the ports compiled in and the SIMD
// target each one executes, so a misconfigured build cannot pass as SIMD.
#pragma once

namespace tatest {

// Writes one line of text to the test output (stdout, or semihosting on boards).
void out(const char* text);

// Applies run-time selections from the environment (hosted: TINYATTN_HWY_TARGET
// forces one Highway target) and prints "tinyattn ports: ..." .
void announce_environment();

}  // namespace tatest
