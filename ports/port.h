// What a port defines besides its kernels: its tables, as the explicit
// specializations of these two templates for its Port value, e.g.
//   template <> const KernelsF32* port_kernels_f32<Port::kScalar>() { ... }
// port_kernels_f32 may return nullptr where this CPU can run none of the
// port's code; port_kernels_i8 is needed only where the port's int8 column
// in tinyattn/port_list.h is 1. The registries (registry.cc, registry_i8.cc)
// reach a table only when its port is compiled in, so no port's header is
// included anywhere else.
#pragma once

#include "tinyattn/kernels.h"
#include "tinyattn/kernels_i8.h"

namespace tinyattn {

template <Port P>
const KernelsF32* port_kernels_f32();
template <Port P>
const KernelsI8* port_kernels_i8();

// Declared for every port of the list so that every translation unit sees
// them before any use; each is defined by its port only.
#define TINYATTN_PORT_SPECIALIZATIONS(e, name, fused, int8) \
  template <>                                               \
  const KernelsF32* port_kernels_f32<Port::e>();            \
  template <>                                               \
  const KernelsI8* port_kernels_i8<Port::e>();
TINYATTN_PORT_LIST(TINYATTN_PORT_SPECIALIZATIONS)
#undef TINYATTN_PORT_SPECIALIZATIONS

// KernelsF32::attend_fixed for a port whose fixed-extent kernels are
// compiled for Dk = Dv only (a kernel per (Dk, Dv) pair is code in every
// image and every SIMD target for shapes attention layers rarely have):
// entry detail::fixed_extent(w, w) runs the kernel for width w, every
// other entry the port's attend_block. The order comes from fixed_extent.
struct SquareFixedExtents {
  using Attend = bool (*)(const AttendBlock&);
  Attend entry[detail::kFixedExtents];
};
constexpr SquareFixedExtents square_fixed_extents(SquareFixedExtents::Attend attend_block,
                                                  SquareFixedExtents::Attend w8, SquareFixedExtents::Attend w16,
                                                  SquareFixedExtents::Attend w32, SquareFixedExtents::Attend w64) {
  SquareFixedExtents t{};
  for (SquareFixedExtents::Attend& e : t.entry) e = attend_block;
  t.entry[detail::fixed_extent(8, 8)] = w8;
  t.entry[detail::fixed_extent(16, 16)] = w16;
  t.entry[detail::fixed_extent(32, 32)] = w32;
  t.entry[detail::fixed_extent(64, 64)] = w64;
  return t;
}

}  // namespace tinyattn
