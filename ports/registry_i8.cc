// Maps Port values to int8 kernel tables. A compiled port without int8
// kernels of its own (its int8 column in tinyattn/port_list.h is 0) runs the
// scalar ones (same integers, less speed).
#include "backends/scalar/scalar.h"
#include "registry.h"

namespace tinyattn {
namespace {

template <Port P, bool kOwnTable>
const KernelsI8* table_i8() {
  if constexpr (registry::built(P) && kOwnTable) {
    return port_kernels_i8<P>();
  } else {
    return port_kernels_i8<Port::kScalar>();
  }
}

// The int8 column of tinyattn/port_list.h for a port.
struct Int8Column {
  Port port;
  bool own;
};
constexpr Int8Column kInt8Columns[] = {
#define TINYATTN_PORT_ENTRY(e, name, fused, int8) {Port::e, (int8) != 0},
    TINYATTN_PORT_LIST(TINYATTN_PORT_ENTRY)
#undef TINYATTN_PORT_ENTRY
};
constexpr bool own_table_i8(Port port) {
  for (const Int8Column& c : kInt8Columns)
    if (c.port == port) return c.own;
  return false;
}

template <Port P>
const KernelsI8Tflite* tflite_table_i8() {
  if constexpr (registry::built(P) && port_has_tflite_i8(P)) {
    return port_tflite_kernels_i8<P>();
  } else {
    return nullptr;
  }
}

}  // namespace

const KernelsI8Tflite* default_tflite_kernels_i8() { return tflite_table_i8<Port::TINYATTN_DEFAULT_PORT>(); }

TfliteRouteI8 default_tflite_route_i8() {
  constexpr Port kPort = Port::TINYATTN_DEFAULT_PORT;
  if constexpr (registry::built(kPort) && port_has_tflite_i8(kPort)) {
    const KernelsI8Tflite* t = port_tflite_kernels_i8<kPort>();
    return {t->scores, t->weighted_sum, t};
  } else if constexpr (!(registry::built(kPort) && own_table_i8(kPort)) || kPort == Port::kScalar) {
    // The scalar products by name: the scalar table would link its softmax.
    return {scalar::i8::scores, scalar::i8::weighted_sum, nullptr};
  } else {
    const KernelsI8* k = table_i8<kPort, own_table_i8(kPort)>();
    return {k->scores, k->weighted_sum, nullptr};
  }
}

const KernelsI8Tflite* tflite_kernels_i8(Port port) {
  if (port == Port::kDefault) port = default_port();
  if (!port_compiled(port)) return nullptr;
  switch (port) {
#define TINYATTN_PORT_CASE(e, name, fused, int8) \
  case Port::e:                                  \
    return tflite_table_i8<Port::e>();
    TINYATTN_PORT_LIST(TINYATTN_PORT_CASE)
#undef TINYATTN_PORT_CASE
    default: return nullptr;
  }
}

const KernelsI8* default_kernels_i8() {
  constexpr Port kPort = Port::TINYATTN_DEFAULT_PORT;
  return table_i8<kPort, own_table_i8(kPort)>();
}

const KernelsI8* kernels_i8(Port port) {
  if (port == Port::kDefault) port = default_port();
  // Not kernels_f32(port): that would link every fp32 table into int8-only images.
  if (!port_compiled(port)) return nullptr;
  switch (port) {
#define TINYATTN_PORT_CASE(e, name, fused, int8) \
  case Port::e:                                  \
    return table_i8<Port::e, (int8) != 0>();
    TINYATTN_PORT_LIST(TINYATTN_PORT_CASE)
#undef TINYATTN_PORT_CASE
    default: return nullptr;
  }
}

}  // namespace tinyattn
