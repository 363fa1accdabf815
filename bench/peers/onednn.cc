// oneDNN 2.6 as a bench peer: matmul (scale as an output scale), softmax and
// matmul primitives, created once per shape, run on one thread at the ISA oneDNN picks.
// Without the softmax: its two matmuls alone, the best GEMM here for the bound.
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "peers.h"

namespace bench {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

class OneDnn : public Forward {
 public:
  OneDnn(const Problem& p, bool with_softmax)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), with_softmax_(with_softmax) {
    y_.resize(p.n * p.dv);
    s_.resize(p.n * p.m);
    const memory::dim n = p.n, m = p.m, dk = p.dk, dv = p.dv;
    const memory::desc q_md({n, dk}, dt::f32, tag::ab);
    const memory::desc kt_md({dk, m}, dt::f32, tag::ba);  // K[M][Dk] read as K^T
    const memory::desc s_md({n, m}, dt::f32, tag::ab);
    const memory::desc v_md({m, dv}, dt::f32, tag::ab);
    const memory::desc y_md({n, dv}, dt::f32, tag::ab);
    dnnl::primitive_attr scaled;
    scaled.set_output_scales(0, {p.scale});
    scores_ = dnnl::matmul({dnnl::matmul::desc(q_md, kt_md, s_md), scaled, engine_});
    softmax_ = dnnl::softmax_forward(
        {dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, s_md, 1), engine_});
    values_ = dnnl::matmul({dnnl::matmul::desc(s_md, v_md, y_md), engine_});
    q_ = memory(q_md, engine_, const_cast<float*>(p.q.data()));
    kt_ = memory(kt_md, engine_, const_cast<float*>(p.k.data()));
    v_ = memory(v_md, engine_, const_cast<float*>(p.v.data()));
    s_mem_ = memory(s_md, engine_, s_.data());
    y_mem_ = memory(y_md, engine_, y_.data());
  }
  void run() override {
    scores_.execute(stream_, {{DNNL_ARG_SRC, q_}, {DNNL_ARG_WEIGHTS, kt_}, {DNNL_ARG_DST, s_mem_}});
    if (with_softmax_) softmax_.execute(stream_, {{DNNL_ARG_SRC, s_mem_}, {DNNL_ARG_DST, s_mem_}});
    values_.execute(stream_, {{DNNL_ARG_SRC, s_mem_}, {DNNL_ARG_WEIGHTS, v_}, {DNNL_ARG_DST, y_mem_}});
    stream_.wait();
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  bool with_softmax_;
  std::vector<float> s_;
  dnnl::matmul scores_, values_;
  dnnl::softmax_forward softmax_;
  memory q_, kt_, v_, s_mem_, y_mem_;
};

void one_onednn_thread() {
  // One thread, like every peer; the ISA is oneDNN's own choice (AVX-512
  // where the CPU has it), as a user gets it: the shares of peak are of the
  // widest vectors' peak.
  static const bool once = [] {
    omp_set_num_threads(1);
    return true;
  }();
  (void)once;
}

}  // namespace

bool limit_onednn_to_avx2() { return dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx2) == dnnl::status::success; }

std::unique_ptr<Forward> make_onednn(const Problem& p) {
  one_onednn_thread();
  return std::make_unique<OneDnn>(p, true);
}

std::unique_ptr<Forward> make_onednn_products(const Problem& p) {
  one_onednn_thread();
  return std::make_unique<OneDnn>(p, false);
}

}  // namespace bench
