// The template port's int8 table (see template.cc): the scalar port's int8
// kernels under the port's name. Replace entries with your own; they must
// return exactly the scalar port's integers (tinyattn/kernels_i8.h). A port
// without int8 kernels leaves this file out and sets the int8 column of its
// line in tinyattn/port_list.h to 0: kernels_i8() then gives it the scalar
// table (the int8 path is integer-exact, so it loses speed, never results).
#include "backends/scalar/scalar.h"
#include "port.h"

namespace tinyattn {
namespace template_port {
namespace {
constexpr KernelsI8 kKernelsI8 = scalar::table_i8("template");
}  // namespace
}  // namespace template_port

template <>
const KernelsI8* port_kernels_i8<Port::kTemplate>() {
  return &template_port::kKernelsI8;
}

}  // namespace tinyattn
