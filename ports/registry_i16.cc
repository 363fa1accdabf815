// Maps Port values to int16 kernel tables. A compiled port without int16
// kernels of its own (port_has_i16 in port.h) runs the scalar ones (same
// integers, less speed).
#include "backends/scalar/scalar.h"
#include "registry.h"

namespace tinyattn {
namespace {

template <Port P>
const KernelsI16* table_i16() {
  if constexpr (registry::built(P) && port_has_i16(P)) {
    return port_kernels_i16<P>();
  } else {
    return port_kernels_i16<Port::kScalar>();
  }
}

template <Port P>
const KernelsI16Tflite* tflite_table_i16() {
  if constexpr (registry::built(P) && port_has_tflite_i16(P)) {
    return port_tflite_kernels_i16<P>();
  } else {
    return nullptr;
  }
}

}  // namespace

const KernelsI16* default_kernels_i16() { return table_i16<Port::TINYATTN_DEFAULT_PORT>(); }

const KernelsI16* kernels_i16(Port port) {
  if (port == Port::kDefault) port = default_port();
  if (!port_compiled(port)) return nullptr;
  switch (port) {
#define TINYATTN_PORT_CASE(e, name, fused, int8) \
  case Port::e:                                  \
    return table_i16<Port::e>();
    TINYATTN_PORT_LIST(TINYATTN_PORT_CASE)
#undef TINYATTN_PORT_CASE
    default: return nullptr;
  }
}

const KernelsI16Tflite* default_tflite_kernels_i16() { return tflite_table_i16<Port::TINYATTN_DEFAULT_PORT>(); }

TfliteRouteI16 default_tflite_route_i16() {
  constexpr Port kPort = Port::TINYATTN_DEFAULT_PORT;
  if constexpr (registry::built(kPort) && port_has_tflite_i16(kPort)) {
    const KernelsI16Tflite* t = port_tflite_kernels_i16<kPort>();
    return {t->scores, t->weighted_sum, t};
  } else if constexpr (!(registry::built(kPort) && port_has_i16(kPort)) || kPort == Port::kScalar) {
    // The scalar products by name: the scalar table would link its softmax.
    return {scalar::i16::scores, scalar::i16::weighted_sum, nullptr};
  } else {
    const KernelsI16* k = table_i16<kPort>();
    return {k->scores, k->weighted_sum, nullptr};
  }
}

const KernelsI16Tflite* tflite_kernels_i16(Port port) {
  if (port == Port::kDefault) port = default_port();
  if (!port_compiled(port)) return nullptr;
  switch (port) {
#define TINYATTN_PORT_CASE(e, name, fused, int8) \
  case Port::e:                                  \
    return tflite_table_i16<Port::e>();
    TINYATTN_PORT_LIST(TINYATTN_PORT_CASE)
#undef TINYATTN_PORT_CASE
    default: return nullptr;
  }
}

}  // namespace tinyattn
