// What both files of the C API use: C enum fields read as integers, the
// options converted, and the C++ results as C statuses. An enum field from C may hold any integer, so it
// is read as int32_t (the enums are 32 bits, asserted in c_api.cc) and checked
// before any becomes a C++ enumerator.
#ifndef TINYATTN_SRC_C_API_COMMON_H_
#define TINYATTN_SRC_C_API_COMMON_H_

#include <cstdint>
#include <cstring>

#include "tinyattn/attention.h"
#include "tinyattn/forward_f16.h"
#include "tinyattn/half.h"
#include "tinyattn/status.h"
#include "tinyattn/tinyattn_c.h"

namespace tinyattn {
namespace c_api {

template <class E>
inline int32_t raw(const E& e) {
  int32_t v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

inline tinyattn_status to_c(Status s) { return static_cast<tinyattn_status>(s); }

inline const half* as_half(const uint16_t* p) { return reinterpret_cast<const half*>(p); }
inline half* as_half(uint16_t* p) { return reinterpret_cast<half*>(p); }

inline bool port_ok(tinyattn_port p) { return static_cast<unsigned>(p) < static_cast<unsigned>(TINYATTN_PORT_COUNT); }
inline bool options_ok(const tinyattn_options* c) {
  return !c || (raw(c->port) >= 0 && raw(c->port) < TINYATTN_PORT_COUNT);
}

inline Options to_cxx(const tinyattn_options* c) {
  Options o;
  if (!c) return o;
  if (c->use_scale) o.scale = c->scale;
  if (c->use_softcap) o.softcap = c->softcap;
  o.port = static_cast<Port>(c->port);
  return o;
}

// fp16 options: a port or compute value outside its enum is refused before
// the conversion.
inline tinyattn_status options_f16_status(const tinyattn_options_f16* c) {
  if (c && !options_ok(&c->options)) return TINYATTN_PORT_UNAVAILABLE;
  if (c && raw(c->compute) != TINYATTN_F16_WIDEN_TO_F32 && raw(c->compute) != TINYATTN_F16_NATIVE_F16_PRODUCTS)
    return TINYATTN_UNSUPPORTED;
  return TINYATTN_OK;
}
inline OptionsF16 to_cxx(const tinyattn_options_f16* c) {
  OptionsF16 o(to_cxx(c ? &c->options : nullptr));
  if (c) o.compute = static_cast<F16Compute>(c->compute);
  return o;
}

}  // namespace c_api
}  // namespace tinyattn

#endif  // TINYATTN_SRC_C_API_COMMON_H_
