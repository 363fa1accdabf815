// The attention of tiny transformers' layers on the host, one pinned core:
// per model, all heads of one layer.
//
//   models_bench [--quick] [--out DIR]
//
// prefill: one forward() over the whole sequence (causal for decoders), fp32
// and int8 (forward_i8 with a plan); decode: one attend of a static KvCache
// filled to the context (the last token appended first, outside the timed
// call), fp32, KvInt8<> (int8 storage, fp32 compute) and int8_t storage.
// FLOPs count 2 * Hq * (visible (query, key) pairs) * (Dk + Dv): a causal
// prefill of N tokens has N(N+1)/2 pairs per head, a decode step over C
// cached tokens C. Every time is the median over repetitions
// (bench/peers/timing.h); the ratio tables sample both sides in the same
// rounds. Prints markdown tables and, with --out, writes them to
// DIR/models.md. Nothing here asserts a time.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "peers/timing.h"
#if defined(TINYATTN_MODELS_PEERS)
#include "peers/peers.h"
#endif
#include "tinyattn/attention.h"
#include "tinyattn/kv_cache.h"
#include "tinyattn/quant.h"

namespace {

using bench::Sampler;
using bench::TimingConfig;

void fill(float* x, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = static_cast<float>(static_cast<int32_t>(seed >> 8) - (1 << 23)) / static_cast<float>(1 << 23);
  }
}

void fill(int8_t* x, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = static_cast<int8_t>(static_cast<int32_t>(seed >> 24) - 128);
  }
}

void check(tinyattn::Status s, const char* what) {
  if (s != tinyattn::Status::kOk) {
    std::fprintf(stderr, "models_bench: %s: status %d\n", what, static_cast<int>(s));
    std::exit(1);
  }
}

// The per-tensor quantization of bench/board/forward_i8_insns.cc.
const float kScaleIn = 0.025f, kScaleY = 0.02f;
const int32_t kZeroQ = 3, kZeroK = -5, kZeroV = 7, kZeroY = -1;

std::vector<tinyattn::Int8HeadPlan> plan_for(const tinyattn::Dims& d) {
  tinyattn::Int8Scheme s;
  s.q = {&kScaleIn, &kZeroQ, 1};
  s.k = {&kScaleIn, &kZeroK, 1};
  s.v = {&kScaleIn, &kZeroV, 1};
  s.y = {&kScaleY, &kZeroY, 1};
  std::vector<tinyattn::Int8HeadPlan> plans(d.hq);
  check(tinyattn::plan_int8(d, s, plans.data(), plans.size()), "plan_int8");
  return plans;
}

// ---- prefill -----------------------------------------------------------------------------------

struct Prefill {
  const char* model;
  size_t hq, hkv, n, d;
  bool causal;
};

double prefill_flops(size_t hq, size_t n, size_t d, bool causal) {
  const double pairs = causal ? 0.5 * static_cast<double>(n) * static_cast<double>(n + 1)
                              : static_cast<double>(n) * static_cast<double>(n);
  return 2.0 * static_cast<double>(hq) * pairs * 2.0 * static_cast<double>(d);
}

template <class T>
struct PrefillState {
  tinyattn::Dims dims;
  tinyattn::Mask mask;
  std::vector<T> q, k, v, y;
  std::vector<unsigned char> ws;
  std::vector<tinyattn::Int8HeadPlan> plans;

  PrefillState(size_t hq, size_t hkv, size_t n, size_t d, bool causal)
      : dims{n, n, d, d, hq, hkv},
        mask(causal ? tinyattn::Mask::causal_top_left() : tinyattn::Mask{}),
        q(dims.q_elems()),
        k(dims.k_elems()),
        v(dims.v_elems()),
        y(dims.y_elems()) {
    fill(q.data(), q.size(), 1);
    fill(k.data(), k.size(), 2);
    fill(v.data(), v.size(), 3);
    if constexpr (std::is_same<T, float>::value) {
      ws.resize(tinyattn::forward_workspace_bytes(dims, false));
    } else {
      ws.resize(tinyattn::forward_i8_workspace_bytes(dims));
      plans = plan_for(dims);
    }
  }
  tinyattn::Status run() {
    const tinyattn::Workspace w{ws.data(), ws.size()};
    if constexpr (std::is_same<T, float>::value)
      return tinyattn::forward(dims, {q.data(), k.data(), v.data(), y.data(), nullptr, nullptr}, w, mask);
    else
      return tinyattn::forward_i8(dims, {q.data(), k.data(), v.data(), y.data(), nullptr, nullptr},
                                  tinyattn::Int8Plan{plans.data(), plans.size()}, w, mask);
  }
};

template <class T>
Sampler prefill_sampler(size_t hq, size_t hkv, size_t n, size_t d, bool causal) {
  auto s = std::make_shared<PrefillState<T>>(hq, hkv, n, d, causal);
  check(s->run(), "prefill");
  return bench::make_sampler([s] {
    s->run();
    bench::keep(s->y[0]);
  });
}

// ---- decode --------------------------------------------------------------------------------------

template <class T, size_t Hq, size_t Hkv, size_t D, size_t Ctx>
using Cache = tinyattn::KvCache<T, Hq, Hkv, D, D, Ctx>;

// One static cache per type and copy (Copy: a second one for a pair of
// fillings timed in the same rounds).
template <class T, size_t Hq, size_t Hkv, size_t D, size_t Ctx, int Copy>
Cache<T, Hq, Hkv, D, Ctx>& cache_instance() {
  static Cache<T, Hq, Hkv, D, Ctx> cache;
  return cache;
}

template <class T, size_t Hq, size_t Hkv, size_t D, size_t Ctx, int Copy = 0>
Sampler decode_sampler(size_t filled) {
  auto& cache = cache_instance<T, Hq, Hkv, D, Ctx, Copy>();
  using V = typename Cache<T, Hq, Hkv, D, Ctx>::Value;
  cache.clear();
  std::vector<V> k(Hkv * D), v(Hkv * D);
  for (size_t t = 0; t < filled; ++t) {
    fill(k.data(), k.size(), static_cast<uint32_t>(2 * t + 2));
    fill(v.data(), v.size(), static_cast<uint32_t>(2 * t + 3));
    check(cache.append(k.data(), v.data(), 1), "append");
  }
  auto q = std::make_shared<std::vector<V>>(Hq * D);
  auto y = std::make_shared<std::vector<V>>(Hq * D);
  fill(q->data(), q->size(), 1);
  if constexpr (std::is_same<T, int8_t>::value) {
    auto plans = std::make_shared<std::vector<tinyattn::Int8HeadPlan>>(plan_for(Cache<T, Hq, Hkv, D, Ctx>::dims));
    const tinyattn::Int8Plan plan{plans->data(), plans->size()};
    check(cache.attend(q->data(), y->data(), 1, plan), "attend");
    return bench::make_sampler([&cache, q, y, plans, plan] {
      cache.attend(q->data(), y->data(), 1, plan);
      bench::keep((*y)[0]);
    });
  } else {
    check(cache.attend(q->data(), y->data(), 1), "attend");
    return bench::make_sampler([&cache, q, y] {
      cache.attend(q->data(), y->data(), 1);
      bench::keep((*y)[0]);
    });
  }
}

struct DecodeRow {
  const char* model;
  size_t hq, hkv, d, ctx;
  size_t bytes[3];  // kStorageBytes: float, KvInt8<>, int8_t
  Sampler samplers[3];
};

template <size_t Hq, size_t Hkv, size_t D, size_t Ctx>
DecodeRow decode_row(const char* model) {
  return DecodeRow{
      model,
      Hq,
      Hkv,
      D,
      Ctx,
      {Cache<float, Hq, Hkv, D, Ctx>::kStorageBytes, Cache<tinyattn::KvInt8<>, Hq, Hkv, D, Ctx>::kStorageBytes,
       Cache<int8_t, Hq, Hkv, D, Ctx>::kStorageBytes},
      {decode_sampler<float, Hq, Hkv, D, Ctx>(Ctx), decode_sampler<tinyattn::KvInt8<>, Hq, Hkv, D, Ctx>(Ctx),
       decode_sampler<int8_t, Hq, Hkv, D, Ctx>(Ctx)}};
}

// A streaming read of `bytes` (a sum of floats in 64 independent lanes, so
// the adds' latency never bounds it): what reading a cache of that size
// costs at best on this core, the bound a memory-bound decode step is held to.
Sampler read_sampler(size_t bytes) {
  auto buf = std::make_shared<std::vector<float>>(bytes / sizeof(float));
  fill(buf->data(), buf->size(), 7);
  return bench::make_sampler([buf] {
    constexpr size_t kLanes = 64;
    float acc[kLanes] = {};
    const float* x = buf->data();
    const size_t n = buf->size() / kLanes * kLanes;
    for (size_t i = 0; i < n; i += kLanes)
      for (size_t l = 0; l < kLanes; ++l) acc[l] += x[i + l];
    float total = 0.0f;
    for (float a : acc) total += a;
    bench::keep(total);
  });
}

// Median seconds per call of one sampler.
double median(Sampler s, const TimingConfig& cfg) {
  std::vector<Sampler> one{std::move(s)};
  return bench::interleaved_median_seconds(one, cfg)[0];
}

// ---- output ---------------------------------------------------------------------------------------

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

std::string ns(double seconds) { return fmt("%.0f ns", seconds * 1e9); }
std::string gflops(double flops, double seconds) { return fmt("%.2f", flops / seconds * 1e-9); }

std::string machine_line() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

}  // namespace

int main(int argc, char** argv) {
  TimingConfig cfg;
  std::string out_dir;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      cfg.repetitions = 5;
      cfg.min_sample_s = 1e-3;
    } else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_dir = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--out DIR]\n", argv[0]);
      return 2;
    }
  }
  const int cpu = bench::pin_to_one_core();
  std::ostringstream md;
  md << "Model shapes measured on " << machine_line() << ", pinned to CPU " << cpu << ", " << cfg.repetitions
     << " repetitions (medians), port " << tinyattn::port_name(tinyattn::default_port()) << ".\n\n";
  auto emit = [&md](const std::string& line) {
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
    md << line;
  };

  const Prefill prefills[] = {
      {"stories260K", 8, 4, 512, 8, true},    {"stories15M", 6, 6, 256, 48, true},
      {"stories42M", 8, 8, 256, 64, true},    {"stories42M", 8, 8, 1024, 64, true},
      {"SmolLM2-135M", 9, 3, 2048, 64, true}, {"KWT-1", 1, 1, 99, 64, false},
      {"MobileViT-XXS", 4, 4, 64, 20, false}, {"MobileViT-XXS", 4, 4, 256, 16, false},
      {"MobileViT-XXS", 4, 4, 16, 24, false}, {"TinyBERT-4", 12, 12, 128, 26, false},
  };
  emit(
      "| prefill | Hq/Hkv | D | N | causal | fp32 time | fp32 GFLOP/s | int8 time | int8 GOP/s |\n"
      "|---|---:|---:|---:|---|---:|---:|---:|---:|\n");
  for (const Prefill& p : prefills) {
    const double f32 = median(prefill_sampler<float>(p.hq, p.hkv, p.n, p.d, p.causal), cfg);
    const double i8 = median(prefill_sampler<int8_t>(p.hq, p.hkv, p.n, p.d, p.causal), cfg);
    const double flops = prefill_flops(p.hq, p.n, p.d, p.causal);
    std::ostringstream row;
    row << "| " << p.model << " | " << p.hq << "/" << p.hkv << " | " << p.d << " | " << p.n << " | "
        << (p.causal ? "yes" : "no") << " | " << ns(f32) << " | " << gflops(flops, f32) << " | " << ns(i8) << " | "
        << gflops(flops, i8) << " |\n";
    emit(row.str());
  }

  emit(
      "\n| decode | Hq/Hkv | D | context | KV cache bytes fp32 | KV cache bytes KvInt8 | KV cache bytes int8 | fp32 "
      "time | "
      "fp32 GFLOP/s | KvInt8 time | KvInt8 GFLOP/s | int8 time | int8 GOP/s |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::vector<DecodeRow> decodes;
  decodes.push_back(decode_row<8, 4, 8, 512>("stories260K"));
  decodes.push_back(decode_row<6, 6, 48, 256>("stories15M"));
  decodes.push_back(decode_row<8, 8, 64, 256>("stories42M"));
  decodes.push_back(decode_row<8, 8, 64, 1024>("stories42M"));
  decodes.push_back(decode_row<9, 3, 64, 2048>("SmolLM2-135M"));
  for (DecodeRow& r : decodes) {
    const double flops = 2.0 * static_cast<double>(r.hq * r.ctx * 2 * r.d);
    std::ostringstream row;
    row << "| " << r.model << " | " << r.hq << "/" << r.hkv << " | " << r.d << " | " << r.ctx << " | " << r.bytes[0]
        << " | " << r.bytes[1] << " | " << r.bytes[2];
    for (Sampler& s : r.samplers) {
      const double t = median(s, cfg);
      row << " | " << ns(t) << " | " << gflops(flops, t);
    }
    row << " |\n";
    emit(row.str());
  }

  // Decode at contexts past L2: the KV cache's bytes over the step's time
  // against a streaming read of as many bytes, sampled in the same rounds
  // (every visible key and value is read once per step: one token attends
  // the whole cache, a group's query heads together in fp32).
  emit(
      "\n| memory-bound decode | storage | KV cache bytes | decode GB/s | read GB/s, same bytes | decode / read | goal "
      "|\n|---|---|---:|---:|---:|---:|---:|\n");
  {
    struct Bound {
      const char* model;
      Sampler (*make)(size_t);
      size_t bytes;
      const char* storage;
    };
    const Bound bounds[] = {
        {"stories42M, 1024 tokens", decode_sampler<float, 8, 8, 64, 1024, 2>,
         Cache<float, 8, 8, 64, 1024>::kStorageBytes, "fp32"},
        {"stories42M, 1024 tokens", decode_sampler<tinyattn::KvInt8<>, 8, 8, 64, 1024, 2>,
         Cache<tinyattn::KvInt8<>, 8, 8, 64, 1024>::kStorageBytes, "KvInt8"},
        {"SmolLM2-135M, 2048 tokens", decode_sampler<float, 9, 3, 64, 2048, 2>,
         Cache<float, 9, 3, 64, 2048>::kStorageBytes, "fp32"},
        {"SmolLM2-135M, 2048 tokens", decode_sampler<tinyattn::KvInt8<>, 9, 3, 64, 2048, 2>,
         Cache<tinyattn::KvInt8<>, 9, 3, 64, 2048>::kStorageBytes, "KvInt8"},
    };
    for (const Bound& b : bounds) {
      std::vector<Sampler> pair{b.make(b.model[0] == 's' ? 1024 : 2048), read_sampler(b.bytes)};
      const std::vector<double> t = bench::interleaved_median_seconds(pair, cfg);
      const double gb = static_cast<double>(b.bytes) * 1e-9;
      std::ostringstream row;
      row << "| " << b.model << " | " << b.storage << " | " << b.bytes << " | " << fmt("%.1f", gb / t[0]) << " | "
          << fmt("%.1f", gb / t[1]) << " | " << fmt("%.2fx", t[1] / t[0]) << " | >= 0.80x |\n";
      emit(row.str());
    }
  }

  // Odd head widths against a power of two at the same heads, N and M,
  // both sampled in the same rounds.
  struct Odd {
    const char* model;
    size_t hq, hkv, n;
    bool causal;
    size_t d, pow2;
    double goal;
  };
  const Odd odds[] = {{"stories15M", 6, 6, 256, true, 48, 64, 0.9},
                      {"MobileViT-XXS", 4, 4, 64, false, 20, 32, 0.75},
                      {"MobileViT-XXS", 4, 4, 16, false, 24, 32, 0.75},
                      {"TinyBERT-4", 12, 12, 128, false, 26, 32, 0.75}};
  emit(
      "\n| odd head width (Hq/Hkv, N, causal) | Dk vs Dk | fp32 GFLOP/s | fp32 ratio | int8 GOP/s | int8 ratio | "
      "goal |\n|---|---|---:|---:|---:|---:|---:|\n");
  for (const Odd& o : odds) {
    std::ostringstream row;
    row << "| " << o.model << " (" << o.hq << "/" << o.hkv << ", " << o.n << ", "
        << (o.causal ? "causal" : "not causal") << ") | " << o.d << " vs " << o.pow2;
    std::vector<Sampler> f32{prefill_sampler<float>(o.hq, o.hkv, o.n, o.d, o.causal),
                             prefill_sampler<float>(o.hq, o.hkv, o.n, o.pow2, o.causal)};
    std::vector<Sampler> i8{prefill_sampler<int8_t>(o.hq, o.hkv, o.n, o.d, o.causal),
                            prefill_sampler<int8_t>(o.hq, o.hkv, o.n, o.pow2, o.causal)};
    for (std::vector<Sampler>* pair : {&f32, &i8}) {
      const std::vector<double> t = bench::interleaved_median_seconds(*pair, cfg);
      const double a = prefill_flops(o.hq, o.n, o.d, o.causal) / t[0] * 1e-9;
      const double b = prefill_flops(o.hq, o.n, o.pow2, o.causal) / t[1] * 1e-9;
      row << " | " << fmt("%.2f", a) << " vs " << fmt("%.2f", b) << " | " << fmt("%.2fx", a / b);
    }
    row << " | >= " << fmt("%.2fx", o.goal) << " |\n";
    emit(row.str());
  }

  // Odd key counts: KWT-1's 99 tokens against 100, a decode step over 255
  // cached tokens against 256; GFLOP/s (of the visible pairs), sampled in
  // the same rounds.
  emit(
      "\n| odd key count | fp32 GFLOP/s | fp32 ratio | KvInt8 GFLOP/s | KvInt8 ratio | int8 GOP/s | int8 ratio |\n"
      "|---|---:|---:|---:|---:|---:|---:|\n");
  {
    std::ostringstream row;
    row << "| KWT-1 prefill (1 head, D 64), 99 vs 100 tokens";
    const double fa = prefill_flops(1, 99, 64, false), fb = prefill_flops(1, 100, 64, false);
    std::vector<Sampler> f32{prefill_sampler<float>(1, 1, 99, 64, false), prefill_sampler<float>(1, 1, 100, 64, false)};
    std::vector<Sampler> i8{prefill_sampler<int8_t>(1, 1, 99, 64, false),
                            prefill_sampler<int8_t>(1, 1, 100, 64, false)};
    for (std::vector<Sampler>* pair : {&f32, &i8}) {
      const std::vector<double> t = bench::interleaved_median_seconds(*pair, cfg);
      row << " | " << fmt("%.2f", fa / t[0] * 1e-9) << " vs " << fmt("%.2f", fb / t[1] * 1e-9) << " | "
          << fmt("%.2fx", fa / t[0] / (fb / t[1]));
      if (pair == &f32) row << " | – | –";
    }
    row << " |\n";
    emit(row.str());
  }
  {
    std::ostringstream row;
    row << "| stories42M decode (8 heads, D 64), 255 vs 256 cached tokens";
    const double fa = 2.0 * 8 * 255 * 128, fb = 2.0 * 8 * 256 * 128;
    std::vector<Sampler> pairs[3] = {
        {decode_sampler<float, 8, 8, 64, 256, 1>(255), decode_sampler<float, 8, 8, 64, 256>(256)},
        {decode_sampler<tinyattn::KvInt8<>, 8, 8, 64, 256, 1>(255),
         decode_sampler<tinyattn::KvInt8<>, 8, 8, 64, 256>(256)},
        {decode_sampler<int8_t, 8, 8, 64, 256, 1>(255), decode_sampler<int8_t, 8, 8, 64, 256>(256)}};
    for (std::vector<Sampler>& pair : pairs) {
      const std::vector<double> t = bench::interleaved_median_seconds(pair, cfg);
      row << " | " << fmt("%.2f", fa / t[0] * 1e-9) << " vs " << fmt("%.2f", fb / t[1] * 1e-9) << " | "
          << fmt("%.2fx", fa / t[0] / (fb / t[1]));
    }
    row << " |\n";
    emit(row.str());
  }

#if defined(TINYATTN_MODELS_PEERS)
  // The encoders' heads (not causal: the peers take no mask) against the
  // peers of bench/peers, one head each, sampled in the same rounds, beside
  // a square shape of the grid: the margin a model shape keeps.
  emit(
      "\n| prefill against the peers, one head | N | D | tinyattn | Eigen | oneDNN | fastest peer / tinyattn |\n"
      "|---|---:|---:|---:|---:|---:|---:|\n");
  {
    struct Head {
      const char* model;
      size_t n, d;
    };
    const Head heads[] = {{"KWT-1", 99, 64},          {"MobileViT-XXS", 64, 20}, {"MobileViT-XXS", 256, 16},
                          {"MobileViT-XXS", 16, 24},  {"TinyBERT-4", 128, 26},   {"grid (128,128,64,64)", 128, 64}};
    for (const Head& h : heads) {
      const bench::Problem p(h.n, h.n, h.d, h.d);
      std::unique_ptr<bench::Forward> fs[] = {bench::make_tinyattn(p, tinyattn::Port::kDefault), bench::make_eigen(p),
                                              bench::make_onednn(p)};
      std::vector<Sampler> samplers;
      for (auto& f : fs) {
        bench::Forward* raw = f.get();
        samplers.push_back(bench::make_sampler([raw] {
          raw->run();
          bench::keep(raw->y()[0]);
        }));
      }
      const std::vector<double> t = bench::interleaved_median_seconds(samplers, cfg);
      std::ostringstream row;
      row << "| " << h.model << " | " << h.n << " | " << h.d << " | " << ns(t[0]) << " | " << ns(t[1]) << " | "
          << ns(t[2]) << " | " << fmt("%.2fx", (t[1] < t[2] ? t[1] : t[2]) / t[0]) << " |\n";
      emit(row.str());
    }
  }
#endif

  if (!out_dir.empty()) {
    const std::string path = out_dir + "/models.md";
    std::ofstream(path) << md.str();
    std::printf("\nwrote %s\n", path.c_str());
  }
  return 0;
}
