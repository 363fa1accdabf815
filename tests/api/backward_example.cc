// The compile-time example of tinyattn/backward.h, compiled and run: Attention
// returns the log-sum-exp that AttentionBackward's recompute mode takes, and
// the gradients agree with the saved-weights mode. check_header_example.cmake
// holds the header's lines and these to the same text.
#include <cmath>

#include "tatest.h"
#include "tinyattn/tinyattn.h"

namespace {

using S = tinyattn::Shape<5, 7, 4, 3, 2, 1>;

template <class A>
void fill(A& a, float step) {
  for (size_t i = 0; i < a.size(); ++i) a[i] = step * static_cast<float>(static_cast<int>(i % 7) - 3);
}

template <class A>
float max_abs_diff(const A& a, const A& b) {
  float worst = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) worst = std::fmax(worst, std::fabs(a[i] - b[i]));
  return worst;
}

}  // namespace

TA_CASE("api: backward.h's example: Attention returns lse, AttentionBackward recomputes from it") {
  using Fwd = tinyattn::Attention<S>;
  static Fwd::Q q, dq;
  static Fwd::K k, dk;
  static Fwd::V v, dv;
  static Fwd::Y y, dy;
  static Fwd::Lse lse;
  fill(q, 0.25f);
  fill(k, -0.5f);
  fill(v, 1.0f);
  fill(dy, 0.125f);

  // The example, verbatim (its statuses are checked below through the outputs:
  // on an error nothing is written).
  static tinyattn::Attention<S> attn;
  static tinyattn::AttentionBackward<S> grad;  // kRecompute by default
  attn(q, k, v, y, lse);                       // forward, keeping lse
  grad(q, k, v, dy, lse, dq, dk, dv);          // RAM: sizeof(grad)

  // The lse overload computes what the pointer form does, bit for bit.
  static Fwd::Y y2;
  static Fwd::Lse lse2;
  tinyattn::ForwardIo io{q.data(), k.data(), v.data(), y2.data(), nullptr, lse2.data()};
  TA_CHECK(attn.run(io) == tinyattn::Status::kOk);
  TA_CHECK(max_abs_diff(y, y2) == 0.0f);
  TA_CHECK(max_abs_diff(lse, lse2) == 0.0f);
  static Fwd::Weights a;
  TA_CHECK(attn(q, k, v, y2, tinyattn::Mask{}, &a) == tinyattn::Status::kOk);

  // Recomputing A from lse gives the gradients of the saved weights.
  static tinyattn::AttentionBackward<S, tinyattn::BackwardMode::kSavedWeights> saved;
  static Fwd::Q dq2;
  static Fwd::K dk2;
  static Fwd::V dv2;
  TA_CHECK(saved(q, k, v, dy, a, dq2, dk2, dv2) == tinyattn::Status::kOk);
  TA_CHECK(max_abs_diff(dq2, Fwd::Q{}) > 0.0f);  // non-trivial gradients
  TA_CHECK_MSG(max_abs_diff(dq, dq2) <= 1e-5f, "dq differs by %g", double(max_abs_diff(dq, dq2)));
  TA_CHECK_MSG(max_abs_diff(dk, dk2) <= 1e-5f, "dk differs by %g", double(max_abs_diff(dk, dk2)));
  TA_CHECK_MSG(max_abs_diff(dv, dv2) <= 1e-5f, "dv differs by %g", double(max_abs_diff(dv, dv2)));
}
