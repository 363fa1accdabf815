// A call's tensors carved from one pool of canary bytes, so that a rejected
// call can be checked to have written nothing: after it, the whole pool
// (inputs, outputs, workspace, masks) must be byte-identical to its copy
// taken before the call. The status suites (tests/hardening/status*_test.cc)
// build their fixtures on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "support.h"
#include "tatest.h"
#include "tinyattn/status.h"

namespace tatest {

class CanaryPool {
 public:
  static constexpr unsigned char kCanary = 0xA5;

  // In the test arena (the caller's Arena::Scope holds it).
  explicit CanaryPool(size_t bytes)
      : bytes_(bytes), pool_(alloc<unsigned char>(bytes)), before_(alloc<unsigned char>(bytes)) {
    if (pool_ && before_) std::memset(pool_, kCanary, bytes_);
  }

  // n elements of T at the next 64-byte boundary, a 64-byte canary gap after
  // them; nullptr once the pool is used up (ok() is then false).
  template <class T>
  T* carve(size_t n) {
    const size_t at = used_;
    used_ += (n * sizeof(T) + 63) / 64 * 64 + 64;
    return pool_ && used_ <= bytes_ ? reinterpret_cast<T*>(pool_ + at) : nullptr;
  }

  // Whether the pool exists and held every carve.
  bool ok() const { return pool_ && before_ && used_ <= bytes_; }
  void snapshot() { std::memcpy(before_, pool_, bytes_); }
  bool untouched() const { return std::memcmp(before_, pool_, bytes_) == 0; }

 private:
  size_t bytes_, used_ = 0;
  unsigned char* pool_;
  unsigned char* before_;
};

// p one byte past where it was: misaligned for any tensor type.
template <class T>
T* misalign(T* p) {
  return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(p) + 1);
}

// Builds a Call (a valid call on a CanaryPool: `ok`, `pool`, run()), lets
// `edit` break it, runs it and requires `want`; unless kOk, the pool must be
// untouched. `api` prefixes the messages ("", "backward ").
template <class Call, class Edit>
void expect_status(const char* api, tinyattn::Status want, const char* what, Edit edit) {
  Arena::Scope scope;
  Call c;
  TA_CHECK_MSG(c.ok, "%s%s: the fixture did not fit its pool", api, what);
  if (!c.ok) return;
  edit(c);
  c.pool.snapshot();
  const tinyattn::Status got = c.run();
  TA_CHECK_MSG(got == want, "%s%s: got %s, want %s", api, what, tinyattn::to_string(got), tinyattn::to_string(want));
  if (want != tinyattn::Status::kOk)
    TA_CHECK_MSG(c.pool.untouched(), "%s%s: rejected with %s but wrote to its buffers", api, what,
                 tinyattn::to_string(got));
}

}  // namespace tatest
