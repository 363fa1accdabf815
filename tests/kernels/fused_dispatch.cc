// Which blocks forward() hands to a port's fused block (KernelsF32::attend_block).
// A white-box check through the driver's entry point on an explicit table
// (lib/src/detail.h): the port's own table, with attend_block wrapped to count
// its calls. The fused path is compiled only where a port has it
// (lib/src/forward.cc), so a build that loses that switch fails here instead
// of silently running the slower composed path.
#include <cmath>

#include "detail.h"
#include "support.h"
#include "tatest.h"

using namespace tatest;

namespace {

const tinyattn::KernelsF32* g_port = nullptr;
size_t g_calls = 0;

bool counting_attend_block(const tinyattn::AttendBlock& b) {
  ++g_calls;
  return g_port->attend_block(b);
}

// forward() on `table` through the driver (no validation: the problems below
// are valid); returns the number of attend_block calls.
size_t fused_calls(const tinyattn::KernelsF32& table, Problem& p, const tinyattn::Mask& mask, bool with_weights) {
  tinyattn::KernelsF32 counted = table;
  counted.attend_block = counting_attend_block;
  g_port = &table;
  g_calls = 0;
  const tinyattn::ForwardIo io{p.q, p.k, p.v, p.y, with_weights ? p.weights : nullptr, p.lse};
  const tinyattn::Workspace ws{p.workspace, tinyattn::forward_workspace_bytes(p.d, with_weights)};
  const float scale = 1.0f / std::sqrt(static_cast<float>(p.d.dk));
  tinyattn::detail::forward_validated(counted, p.d, io, ws, mask, scale);
  return g_calls;
}

}  // namespace

TA_CASE("forward: blocks without element masks or weights output go to the port's attend_block") {
  tinyattn::Port ports[4];
  const size_t n_ports = ports_under_test(ports, 4);
  size_t ports_with = 0;
  for (size_t pi = 0; pi < n_ports; ++pi) {
    const tinyattn::KernelsF32& k = *tinyattn::kernels_f32(ports[pi]);
    if (!k.attend_block) continue;
    ++ports_with;
    const tinyattn::Dims d{9, 40, 16, 8, 2, 1};  // 3 blocks of rows per head (4, 4, 1)
    const size_t blocks = d.hq * ((d.n + tinyattn::kBlockRows - 1) / tinyattn::kBlockRows);
    Problem p = make_problem(d, 4242 + pi);
    if (!p.ok) TA_IGNORE("the test arena cannot hold the problem");

    // Structured masks keep the fused path (each row gets its key range).
    const tinyattn::Mask structured[] = {tinyattn::Mask::none(), tinyattn::Mask::causal_bottom_right(),
                                         tinyattn::Mask::key_padding(29)};
    for (const tinyattn::Mask& mask : structured) {
      TA_CHECK(fused_calls(k, p, mask, false) == blocks);
      run_reference(p, mask);
      const Result y = close(p.y, p.y_ref, d.y_elems(), kOutAtol * max_abs(p.v, d.v_elems()), kOutRtol);
      TA_CHECK_MSG(y.ok, "%s: output %zu off by %g (bound %g)", tinyattn::port_name(ports[pi]), y.index, y.worst,
                   y.bound);
    }
    // The weights output and element masks take the composed path.
    TA_CHECK(fused_calls(k, p, tinyattn::Mask::none(), true) == 0);
    float* bias = alloc<float>(d.n * d.m);
    if (!bias) TA_IGNORE("the test arena cannot hold the bias");
    for (size_t x = 0; x < d.n * d.m; ++x) bias[x] = 0.0f;
    TA_CHECK(fused_calls(k, p, tinyattn::Mask::additive(bias), false) == 0);
  }
  if (ports_with == 0) TA_IGNORE("no port in this build has attend_block");
}
