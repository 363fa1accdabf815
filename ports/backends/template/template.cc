// The template port: the smallest complete port, built and tested with the
// host tests so that the recipe of docs/ports.md stays true. To start a port,
// copy this folder to ports/backends/<name>/, rename Port::kTemplate and
// "template" below, and add its line to tinyattn/port_list.h. The table
// starts as the scalar port's; replace its entries one at a time with your
// own kernels (the commented line shows how): every suite runs each compiled
// port against the contract (tinyattn/kernels.h).
#include "backends/scalar/scalar.h"
#include "port.h"

namespace tinyattn {
namespace template_port {
namespace {

// An entry of its own, here a row maximum (NaN wins, as the contract says).
float row_max(const float* x, size_t n) {
  float m = x[0];
  for (size_t j = 1; j < n; ++j) {
    if (x[j] != x[j]) return x[j];
    if (x[j] > m) m = x[j];
  }
  return m;
}

constexpr KernelsF32 make_table() {
  KernelsF32 k = scalar::table_f32("template");
  k.row_max = row_max;  // k.scores = my_scores; ...
  return k;
}

constexpr KernelsF32 kKernels = make_table();

}  // namespace
}  // namespace template_port

template <>
const KernelsF32* port_kernels_f32<Port::kTemplate>() {
  return &template_port::kKernels;
}
// Attention<S>'s plain calls run on the whole table (a port whose table is
// large cuts it for them, as ports/backends/mve/mve.cc does).
TINYATTN_PORT_EXTENT_TABLES_ARE_THE_TABLE(kTemplate)

}  // namespace tinyattn
