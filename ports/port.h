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
#include "tinyattn/kernels_i16.h"
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

// A port with TFLite-mode int8 kernels (KernelsI8Tflite) also defines
// port_tflite_kernels_i8, which only the paths that run Int8Mode::kTflite
// reach (tflite_kernels_i8). The ports that have them:
constexpr bool port_has_tflite_i8(Port p) { return p == Port::kDsp || p == Port::kMve; }
template <Port P>
const KernelsI8Tflite* port_tflite_kernels_i8();
template <>
const KernelsI8Tflite* port_tflite_kernels_i8<Port::kDsp>();
template <>
const KernelsI8Tflite* port_tflite_kernels_i8<Port::kMve>();

// A port with int16 kernels of its own (KernelsI16) defines
// port_kernels_i16; the others run the scalar port's (registry_i16.cc).
// The ports that have them:
constexpr bool port_has_i16(Port p) { return p == Port::kScalar || p == Port::kMve || p == Port::kDsp; }
template <Port P>
const KernelsI16* port_kernels_i16();
template <>
const KernelsI16* port_kernels_i16<Port::kScalar>();
template <>
const KernelsI16* port_kernels_i16<Port::kMve>();
template <>
const KernelsI16* port_kernels_i16<Port::kDsp>();

// The TFLite-16 kernels (KernelsI16Tflite) of the ports that have them:
constexpr bool port_has_tflite_i16(Port p) { return p == Port::kDsp || p == Port::kMve; }
template <Port P>
const KernelsI16Tflite* port_tflite_kernels_i16();
template <>
const KernelsI16Tflite* port_tflite_kernels_i16<Port::kDsp>();
template <>
const KernelsI16Tflite* port_tflite_kernels_i16<Port::kMve>();

// Every port also defines, for each square fixed extent E = fixed_extent(w,
// w), the table Attention<S>'s plain call attn(q, k, v, y) of that extent
// on full blocks runs on when the port is the default
// (default_kernels_f32_extent): its own table
// (TINYATTN_PORT_EXTENT_TABLES_ARE_THE_TABLE), or one cut to what that call
// reaches (fixed_extent_table below; Helium, DSP), so that an image of one
// shape links the kernels of full blocks of that extent and not the port's
// others (the rows of a decode step, the other extents).
template <Port P, int kExtent>
const KernelsF32* port_kernels_f32_extent();

// The square fixed extents, as indices of KernelsF32::attend_fixed.
#define TINYATTN_SQUARE_EXTENTS(X, e) \
  X(e, 0)                             \
  X(e, 5)                             \
  X(e, 10)                            \
  X(e, 15)
static_assert(detail::fixed_extent(8, 8) == 0 && detail::fixed_extent(16, 16) == 5 &&
                  detail::fixed_extent(32, 32) == 10 && detail::fixed_extent(64, 64) == 15,
              "TINYATTN_SQUARE_EXTENTS lists fixed_extent(w, w)");
#define TINYATTN_PORT_EXTENT_DECLARATION(e, extent) \
  template <>                                       \
  const KernelsF32* port_kernels_f32_extent<Port::e, extent>();
#define TINYATTN_PORT_EXTENT_DECLARATIONS(e, name, fused, int8) \
  TINYATTN_SQUARE_EXTENTS(TINYATTN_PORT_EXTENT_DECLARATION, e)
TINYATTN_PORT_LIST(TINYATTN_PORT_EXTENT_DECLARATIONS)
#undef TINYATTN_PORT_EXTENT_DECLARATIONS
#undef TINYATTN_PORT_EXTENT_DECLARATION

// For a port that keeps its whole table for every extent (in the port's
// source file, at namespace tinyattn scope).
#define TINYATTN_PORT_EXTENT_TABLE_IS_THE_TABLE(e, extent)          \
  template <>                                                       \
  const KernelsF32* port_kernels_f32_extent<Port::e, extent>() {    \
    return port_kernels_f32<Port::e>();                             \
  }
#define TINYATTN_PORT_EXTENT_TABLES_ARE_THE_TABLE(e) TINYATTN_SQUARE_EXTENTS(TINYATTN_PORT_EXTENT_TABLE_IS_THE_TABLE, e)

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

// attend_fixed with one entry: `attend` at `extent`, no kernel elsewhere.
constexpr SquareFixedExtents one_fixed_extent(int extent, SquareFixedExtents::Attend attend) {
  SquareFixedExtents t{};
  t.entry[extent] = attend;
  return t;
}

// A fused port's table cut to what Attention<S>'s plain call of one fixed
// extent reaches (port_kernels_f32_extent): the port's kernel of that
// extent, which takes every call whose values are finite, and for the calls
// it declines (an inf or NaN, an overflowing logit) `portable`'s kernels, the
// scalar port's under the port's name, which are small. `one`:
// one_fixed_extent's entries.
constexpr KernelsF32 fixed_extent_table(KernelsF32 portable, const SquareFixedExtents& one,
                                        size_t fixed_multi_block_keys) {
  portable.attend_fixed = one.entry;
  portable.fixed_multi_block_keys = fixed_multi_block_keys;
  return portable;
}

}  // namespace tinyattn
