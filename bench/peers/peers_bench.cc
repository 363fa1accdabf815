// The host bench: tinyattn against its peers on one pinned core.
//
//   peers_bench [--quick] [--softmax] [--small] [--avx2-cpu] [--out DIR]
//
// --softmax: the softmax rows table alone (no forward tables, no files).
// --avx2-cpu: an AVX2 CPU on this one: every implementation and the peak
// at AVX2 (limit_onednn_to_avx2, limit_fma_peak_to_avx2; Highway forced to
// its AVX2 target unless TINYATTN_HWY_TARGET says otherwise); the forward,
// parts, small shapes and softmax tables only.
// TINYATTN_HWY_TARGET=<T> (e.g. AVX2) forces Highway's target, as for the
// test suites (ports/backends/highway/test_select_target.cc), so the kernels
// of a CPU without AVX-512 can be timed on one that has it.
//
// Prints markdown tables and writes them to DIR/peers.md with an SVG plot of
// GFLOP/s against shape (DIR/forward_gflops.svg). FLOPs count as
// 2*N*M*Dk + 2*N*M*Dv; every time is the median over repetitions; ratios are
// computed within this one run. Nothing here asserts a time.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "peers.h"
#include "tinyattn/attention.h"
#include "tinyattn/softmax.h"

// Highway's test hook, linked where the build has Highway (weak: absent otherwise).
extern "C" __attribute__((weak)) const char* tinyattn_test_select_target(const char* request);

namespace {

using namespace bench;

struct Shape {
  size_t n, m, dk, dv;
};
const Shape kShapes[] = {{8, 8, 16, 16},     {16, 16, 32, 32},   {64, 64, 64, 64},
                         {128, 128, 64, 64}, {256, 256, 64, 64}, {512, 512, 128, 128}};

std::string machine_line() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string today() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

std::string shape_name(const Shape& s) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "(%zu,%zu,%zu,%zu)", s.n, s.m, s.dk, s.dv);
  return buf;
}

std::string port_label(tinyattn::Port p) {
  const tinyattn::KernelsF32* k = tinyattn::kernels_f32(p);
  // The port a default build runs (Port::kDefault) says so.
  const bool is_default = k == tinyattn::kernels_f32(tinyattn::Port::kDefault);
  return std::string("tinyattn/") + k->port + " (" + k->simd_target() + ")" + (is_default ? " default" : "");
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::fmax(worst, std::fabs(double(a[i]) - double(b[i])));
  return worst;
}

struct Row {
  std::string impl;
  double seconds;
  double gflops;
  bool peer;
};

// One implementation, or one part of one, in a table of parts.
struct Part {
  std::string name;
  std::unique_ptr<Forward> run;
};

// Median seconds of each part, sampled in alternating rounds; with_peak: one
// more sampler last, the FMA peak loop.
std::vector<double> median_seconds_in_rounds(const std::vector<Part>& parts, bool with_peak,
                                             const TimingConfig& cfg) {
  std::vector<Sampler> samplers;
  for (const Part& part : parts) samplers.push_back(make_sampler([f = part.run.get()] { f->run(); }));
  if (with_peak) samplers.push_back(make_sampler(fma_peak_loop));
  return interleaved_median_seconds(samplers, cfg);
}

// GFLOP/s against shape, one polyline per implementation.
std::string svg_plot(const std::vector<std::string>& impls, const std::vector<std::vector<double>>& gflops,
                     double peak, const std::string& caption) {
  // The legend's column is as wide as its longest label (about 7 px a
  // character at 12 px): a fixed width cut the longer ones off.
  size_t longest = 0;
  for (const std::string& impl : impls) longest = impl.size() > longest ? impl.size() : longest;
  const double pw = 640, left = 70, right = 46 + 7.0 * static_cast<double>(longest), top = 50, bottom = 60;
  const double w = left + pw + right, h = 460, ph = h - top - bottom;
  const size_t ns = sizeof kShapes / sizeof kShapes[0];
  double ymax = peak;
  for (const auto& series : gflops)
    for (double g : series) ymax = std::fmax(ymax, g);
  ymax *= 1.05;
  const char* colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
  auto x_at = [&](size_t i) { return left + pw * (static_cast<double>(i) + 0.5) / static_cast<double>(ns); };
  auto y_at = [&](double g) { return top + ph * (1.0 - g / ymax); };
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << w << "' height='" << h
    << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n";
  o << "<text x='" << left << "' y='20' font-size='14'>fp32 forward attention, one core, GFLOP/s by shape (N,M,Dk,Dv)</text>\n";
  o << "<text x='" << left << "' y='37' fill='#555'>" << caption << "</text>\n";
  for (int t = 0; t <= 5; ++t) {
    const double g = ymax * t / 5.0;
    o << "<line x1='" << left << "' x2='" << left + pw << "' y1='" << y_at(g) << "' y2='" << y_at(g)
      << "' stroke='#ddd'/><text x='" << left - 8 << "' y='" << y_at(g) + 4 << "' text-anchor='end'>"
      << static_cast<int>(std::lround(g)) << "</text>\n";
  }
  o << "<line x1='" << left << "' x2='" << left + pw << "' y1='" << y_at(peak) << "' y2='" << y_at(peak)
    << "' stroke='black' stroke-dasharray='4,3'/><text x='" << left + 6 << "' y='" << y_at(peak) - 5
    << "'>FMA peak, " << 32 * fma_peak_lanes() << "-bit vectors: " << static_cast<int>(std::lround(peak))
    << "</text>\n";
  for (size_t i = 0; i < ns; ++i)
    o << "<text x='" << x_at(i) << "' y='" << top + ph + 20 << "' text-anchor='middle' font-size='11'>"
      << shape_name(kShapes[i]) << "</text>\n";
  o << "<text x='16' y='" << top + ph / 2 << "' transform='rotate(-90 16 " << top + ph / 2
    << ")' text-anchor='middle'>GFLOP/s</text>\n";
  for (size_t s = 0; s < impls.size(); ++s) {
    const char* c = colors[s % 8];
    o << "<polyline fill='none' stroke='" << c << "' stroke-width='2' points='";
    for (size_t i = 0; i < gflops[s].size(); ++i) o << x_at(i) << ',' << y_at(gflops[s][i]) << ' ';
    o << "'/>\n";
    for (size_t i = 0; i < gflops[s].size(); ++i)
      o << "<circle cx='" << x_at(i) << "' cy='" << y_at(gflops[s][i]) << "' r='3' fill='" << c << "'/>\n";
    const double ly = top + 20.0 * static_cast<double>(s) + 40;
    o << "<line x1='" << left + pw + 10 << "' x2='" << left + pw + 30 << "' y1='" << ly << "' y2='" << ly
      << "' stroke='" << c << "' stroke-width='2'/><text x='" << left + pw + 36 << "' y='" << ly + 4 << "'>"
      << impls[s] << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

std::string softmax_table(const TimingConfig& cfg) {
  // Softmax rows: tinyattn's public API, one call per row and one call for
  // all rows, against libmvec's expf (vectorised by GCC and called
  // directly; 8-lane, and 16-lane where the CPU has AVX-512F) and Eigen's
  // row softmax.
  struct MvecForm {
    const char* name;
    void (*row)(float*, size_t);
  };
  std::vector<MvecForm> mvec_forms = {{"libmvec 8-lane vectorised", softmax_row_libmvec},
                                      {"libmvec 8-lane direct", softmax_row_libmvec_direct}};
  if (libmvec512_available()) {
    mvec_forms.push_back({"libmvec 16-lane vectorised", softmax_row_libmvec512});
    mvec_forms.push_back({"libmvec 16-lane direct", softmax_row_libmvec512_direct});
  }
  const size_t forms = mvec_forms.size();
  // Eigen, and Eigen built for AVX-512 where the CPU has it; "x Eigen" is
  // against the faster.
  std::vector<MvecForm> eigen_forms = {{"Eigen", softmax_row_eigen}};
  if (eigen512_available()) eigen_forms.push_back({"Eigen (AVX-512)", softmax_row_eigen512});
  const size_t eigens = eigen_forms.size();
  std::ostringstream sm;
  std::vector<tinyattn::Port> ports;
  for (tinyattn::Port p : tinyattn::kAllPorts)
    if (tinyattn::kernels_f32(p)) ports.push_back(p);
  constexpr size_t kSoftmaxFloats = 4096;  // each implementation's matrix: 16 KB, in L1
  sm << "\n### Softmax rows (max, exp and sum, scale), fp32, ns per element\n\n"
     << "Each implementation has a matrix of " << kSoftmaxFloats
     << " / n rows of n floats (one row at 4096) in place; `x` columns: its speed against the fastest of "
        "libmvec's forms in this run, and against the faster Eigen build.\n\n"
     << "| row length | rows";
  for (const MvecForm& f : mvec_forms) sm << " | " << f.name;
  for (const MvecForm& f : eigen_forms) sm << " | " << f.name;
  for (tinyattn::Port p : ports)
    sm << " | " << port_label(p) << " softmax() per row | x libmvec | softmax_rows() | x libmvec | x Eigen";
  sm << " |\n|---:|---:";
  for (size_t i = 0; i < forms + eigens; ++i) sm << "|---:";
  for (size_t i = 0; i < ports.size(); ++i) sm << "|---:|---:|---:|---:|---:";
  sm << "|\n";
  // ns per row at the short lengths, for softmax()'s fixed cost per call
  // below: {n, the fastest libmvec form, then softmax() and softmax_rows() per port}.
  constexpr size_t kFixedCostLengths[] = {16, 64};
  std::vector<std::vector<double>> per_row;
  for (size_t n = 16; n <= 4096; n *= 2) {
    const size_t rows = kSoftmaxFloats / n;
    Problem init(1, kSoftmaxFloats, 1, 1);  // reuse its generator: logits in [-1, 1) * 8
    // One matrix per implementation, sampled in turn. Softmax of a softmax
    // is still a valid row, so repeating in place keeps every input in the
    // normal range. The matrices lie in one buffer, each on a 64-byte
    // boundary: with a heap block each, where the heap put them moved
    // single ratios by up to 0.4 between runs.
    const size_t impls = forms + eigens + 2 * ports.size();
    constexpr size_t kLineFloats = 64 / sizeof(float);
    const size_t stride = kSoftmaxFloats + kLineFloats;
    std::vector<float> storage(impls * stride + kLineFloats);
    const uintptr_t at = reinterpret_cast<uintptr_t>(storage.data());
    float* first = storage.data() + (64 - at % 64) % 64 / sizeof(float);
    std::vector<float*> mats;
    for (size_t i = 0; i < impls; ++i) {
      float* mat = first + i * stride;
      for (size_t j = 0; j < kSoftmaxFloats; ++j) mat[j] = 8.0f * init.k[j];
      mats.push_back(mat);
    }
    std::vector<Sampler> samplers;
    for (size_t f = 0; f < forms; ++f)
      samplers.push_back(make_sampler([mat = mats[f], rows, n, row = mvec_forms[f].row] {
        for (size_t r = 0; r < rows; ++r) row(mat + r * n, n);
      }));
    for (size_t f = 0; f < eigens; ++f)
      samplers.push_back(make_sampler([mat = mats[forms + f], rows, n, row = eigen_forms[f].row] {
        for (size_t r = 0; r < rows; ++r) row(mat + r * n, n);
      }));
    const size_t first_port = forms + eigens;
    for (size_t i = 0; i < ports.size(); ++i) {
      const tinyattn::Port p = ports[i];
      samplers.push_back(make_sampler([mat = mats[first_port + 2 * i], rows, n, p] {
        for (size_t r = 0; r < rows; ++r) keep(tinyattn::softmax(mat + r * n, mat + r * n, n, p));
      }));
      samplers.push_back(make_sampler([mat = mats[first_port + 1 + 2 * i], rows, n, p] {
        keep(tinyattn::softmax_rows(mat, mat, rows, n, n, n, p));
      }));
    }
    const std::vector<double> t = interleaved_median_seconds(samplers, cfg);
    const double per = 1e9 / static_cast<double>(kSoftmaxFloats);
    double mvec = t[0];
    for (size_t f = 1; f < forms; ++f) mvec = std::fmin(mvec, t[f]);
    double eigen = t[forms];
    for (size_t f = 1; f < eigens; ++f) eigen = std::fmin(eigen, t[forms + f]);
    char line[160];
    std::snprintf(line, sizeof line, "| %zu | %zu", n, rows);
    sm << line;
    for (size_t f = 0; f < forms + eigens; ++f) {
      std::snprintf(line, sizeof line, " | %.3f", t[f] * per);
      sm << line;
    }
    for (size_t i = 0; i < ports.size(); ++i) {
      const double row = t[first_port + 2 * i], all = t[first_port + 1 + 2 * i];
      std::snprintf(line, sizeof line, " | %.3f | %.2fx | %.3f | %.2fx | %.2fx", row * per, mvec / row, all * per,
                    mvec / all, eigen / all);
      sm << line;
    }
    sm << " |\n";
    for (size_t len : kFixedCostLengths) {
      if (len != n) continue;
      const double ns_per_row = 1e9 / static_cast<double>(rows);
      per_row.push_back({static_cast<double>(n), mvec * ns_per_row});
      for (size_t i = 0; i < ports.size(); ++i) {
        per_row.back().push_back(t[first_port + 2 * i] * ns_per_row);
        per_row.back().push_back(t[first_port + 1 + 2 * i] * ns_per_row);
      }
    }
  }

  // The fixed cost of one softmax() call: its checks, the port's table and
  // the three row passes one call after another, where softmax_rows() checks
  // once for all rows and overlaps the short rows' passes.
  sm << "\nsoftmax()'s fixed cost per call: ns per row, one softmax() call per row against one softmax_rows() "
        "call for all rows (the table above); the fixed cost is their difference.\n\n"
        "| port | row length | softmax() per row | softmax_rows() per row | fixed cost per call | fastest libmvec "
        "form per row |\n|---|---:|---:|---:|---:|---:|\n";
  for (size_t i = 0; i < ports.size(); ++i)
    for (const std::vector<double>& r : per_row) {
      const double one = r[2 + 2 * i], all = r[3 + 2 * i];
      char line[192];
      std::snprintf(line, sizeof line, "| %s | %.0f | %.2f | %.2f | %.2f | %.2f |\n", port_label(ports[i]).c_str(), r[0],
                    one, all, one - all, r[1]);
      sm << line;
    }

  // What bounds the long rows: each pass alone over one row of 4096 floats,
  // with the FMA peak loop in the same rounds for the clock.
  {
    constexpr size_t n = kSoftmaxFloats;
    Problem init(1, n, 1, 1);
    const size_t mvec_passes = libmvec512_available() ? 2 : 1;
    const size_t parts = mvec_passes + 3 * ports.size();
    std::vector<float> storage(parts * (n + 16) + 16);
    const uintptr_t at = reinterpret_cast<uintptr_t>(storage.data());
    float* first = storage.data() + (64 - at % 64) % 64 / sizeof(float);
    std::vector<float*> mats;
    for (size_t i = 0; i < parts; ++i) {
      float* mat = first + i * (n + 16);
      for (size_t j = 0; j < n; ++j) mat[j] = 8.0f * init.k[j];
      mats.push_back(mat);
    }
    // Repeated in place, exp(x - 8) keeps every value in (0, 1].
    std::vector<Sampler> samplers;
    samplers.push_back(make_sampler([x = mats[0]] { keep(exp_shift_sum_libmvec_direct(x, n, 8.0f)); }));
    if (mvec_passes == 2)
      samplers.push_back(make_sampler([x = mats[1]] { keep(exp_shift_sum_libmvec512_direct(x, n, 8.0f)); }));
    for (size_t i = 0; i < ports.size(); ++i) {
      const tinyattn::KernelsF32* k = tinyattn::kernels_f32(ports[i]);
      float* const* m = &mats[mvec_passes + 3 * i];
      samplers.push_back(make_sampler([x = m[0], k] { keep(k->row_max(x, n)); }));
      samplers.push_back(make_sampler([x = m[1], k] { keep(k->exp_shift_sum(x, n, 8.0f)); }));
      samplers.push_back(make_sampler([x = m[2], k] { k->scale(x, n, 1.0f); }));
    }
    samplers.push_back(make_sampler(fma_peak_loop));
    const std::vector<double> t = interleaved_median_seconds(samplers, cfg);
    // The clock the peak implies: 2 FMA pipes, each an FMA of `lanes` lanes (2 FLOPs each) a cycle.
    const int lanes = fma_peak_lanes();
    const double ghz = fma_peak_loop_flops() / t.back() / 1e9 / (2.0 * 2.0 * lanes);
    const double to_cycles = ghz * 8.0 / static_cast<double>(n);  // seconds per row -> cycles per 8 floats (x1e9)
    char line[512];
    std::snprintf(line, sizeof line,
                  "\nEach pass alone over one row of %zu floats, cycles per 8 floats at %.2f GHz (the clock the "
                  "FMA peak loop implies in the same rounds, two %d-lane FMA pipes):\n\n"
                  "| implementation | max | exp and sum | scale | all three |\n|---|---:|---:|---:|---:|\n",
                  n, ghz, lanes);
    sm << line;
    std::snprintf(line, sizeof line, "| libmvec _ZGVdN8v_expf, direct | | %.2f | | |\n", t[0] * 1e9 * to_cycles);
    sm << line;
    if (mvec_passes == 2) {
      std::snprintf(line, sizeof line, "| libmvec _ZGVeN16v_expf, direct | | %.2f | | |\n", t[1] * 1e9 * to_cycles);
      sm << line;
    }
    for (size_t i = 0; i < ports.size(); ++i) {
      const double* ti = &t[mvec_passes + 3 * i];
      const double mx = ti[0] * 1e9 * to_cycles, ex = ti[1] * 1e9 * to_cycles, sc = ti[2] * 1e9 * to_cycles;
      std::snprintf(line, sizeof line, "| %s | %.2f | %.2f | %.2f | %.2f |\n", port_label(ports[i]).c_str(), mx, ex,
                    sc, mx + ex + sc);
      sm << line;
    }
  }
  return sm.str();
}

// At the small shapes: the run-time and compile-time APIs, and the block
// kernels alone, against the fastest peer: the last is the most the
// forward could gain without its checks and loops.
std::string small_shapes_table(const TimingConfig& cfg) {
  std::ostringstream bd;
  bd << "\n| shape (N,M,Dk,Dv) | part | time | speed vs fastest peer |\n|---|---|---:|---:|\n";
  for (const Shape& s : {Shape{8, 8, 16, 16}, Shape{16, 16, 32, 32}}) {
    Problem prob(s.n, s.m, s.dk, s.dv);
    std::vector<Part> parts;
    parts.push_back({"Eigen 3.4 forward", make_eigen(prob)});
    parts.push_back({"oneDNN 2.6 forward", make_onednn(prob)});
    for (tinyattn::Port p : tinyattn::kAllPorts) {
      std::unique_ptr<Forward> blocks = make_tinyattn_blocks(prob, p);
      if (!blocks) continue;
      parts.push_back({port_label(p) + " forward()", make_tinyattn(prob, p)});
      parts.push_back({port_label(p) + " forward(), arrays on a cache line", make_tinyattn_placed(prob, p, 0)});
      parts.push_back({port_label(p) + " forward(), arrays 16 bytes past one", make_tinyattn_placed(prob, p, 4)});
      parts.push_back({port_label(p) + " Attention<Shape> (compile-time API)", make_tinyattn_fixed(prob, p)});
      parts.push_back({port_label(p) + " fused block kernel alone", std::move(blocks)});
      if (std::unique_ptr<Forward> fixed = make_tinyattn_blocks(prob, p, true))
        parts.push_back({port_label(p) + " fixed-extent block kernel alone", std::move(fixed)});
    }
    const std::vector<double> t = median_seconds_in_rounds(parts, false, cfg);
    const double fastest_peer = std::fmin(t[0], t[1]);
    for (size_t i = 0; i < parts.size(); ++i) {
      char line[256];
      std::snprintf(line, sizeof line, "| %s | %s | %.3f us | %.2fx |\n", shape_name(s).c_str(),
                    parts[i].name.c_str(), t[i] * 1e6, fastest_peer / t[i]);
      bd << line;
    }
  }
  return bd.str();
}

}  // namespace

int main(int argc, char** argv) {
  TimingConfig cfg;
  std::string out_dir = ".";
  bool softmax_only = false;
  bool small_only = false;  // only the small shapes' API table (a quick look at per-call overhead)
  bool avx2_cpu = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      cfg.repetitions = 5;
      cfg.min_sample_s = 1e-3;
    } else if (std::strcmp(argv[i], "--softmax") == 0) {
      softmax_only = true;
    } else if (std::strcmp(argv[i], "--small") == 0) {
      small_only = true;
    } else if (std::strcmp(argv[i], "--avx2-cpu") == 0) {
      avx2_cpu = true;
    } else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_dir = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--softmax] [--small] [--avx2-cpu] [--out DIR]\n", argv[0]);
      return 2;
    }
  }
  const char* request = std::getenv("TINYATTN_HWY_TARGET");
  if (avx2_cpu && !(request && *request)) request = "AVX2";
  if (request && *request) {
    const char* chosen = tinyattn_test_select_target ? tinyattn_test_select_target(request) : nullptr;
    if (!chosen && !(avx2_cpu && !tinyattn_test_select_target)) {  // a build without Highway has nothing to force
      std::fprintf(stderr, "TINYATTN_HWY_TARGET=%s: not available in this build on this CPU\n", request);
      return 2;
    }
  }
  if (avx2_cpu) {
    if (!limit_onednn_to_avx2()) {
      std::fprintf(stderr, "--avx2-cpu: oneDNN refused to limit its ISA to AVX2\n");
      return 2;
    }
    limit_fma_peak_to_avx2();
  }
  const int cpu = pin_to_one_core();
  if (softmax_only) {
    std::printf("Measured %s on %s, pinned to CPU %d, %d repetitions (medians).\n", today().c_str(),
                machine_line().c_str(), cpu, cfg.repetitions);
    std::fputs(softmax_table(cfg).c_str(), stdout);
    return 0;
  }
  if (small_only) {
    std::fputs(small_shapes_table(cfg).c_str(), stdout);
    return 0;
  }
  std::ostringstream md;
  const std::string when = today(), machine = machine_line();
  md << "Measured " << when << " on " << machine << ", pinned to CPU " << cpu << ", "
     << cfg.repetitions << " repetitions (medians).\n\n";
  if (avx2_cpu)
    md << "An AVX2 CPU on this one: every implementation limited to AVX2 (oneDNN's ISA capped at AVX2, Highway's "
          "AVX2 target, Eigen and the xsimd port built for AVX2), and the peak of 8-lane AVX2 FMAs.\n\n";
  const double peak = fma_peak_gflops(cfg), peak_256 = fma_peak_256_gflops(cfg);
  const int lanes = fma_peak_lanes();
  md << "FMA peak at the widest vectors " << (avx2_cpu ? "in use" : "this CPU has") << " ("
     << (lanes == 16 ? "AVX-512" : "AVX2") << ", 12 independent "
     << lanes << "-lane FMA chains): **" << static_cast<int>(std::lround(peak))
     << " GFLOP/s** at the start (the plot's line); every \"% of peak\" below is of this peak, sampled in the "
        "same rounds as its table's rows.";
  if (lanes == 16)
    md << " With 256-bit vectors (AVX2, 8-lane chains) the peak is " << static_cast<int>(std::lround(peak_256))
       << " GFLOP/s, for reference only.";
  md << "\n\n";
  std::fputs(md.str().c_str(), stdout);

  // Forward attention: shape x implementation.
  std::vector<std::string> impls = {"triple loop", "Eigen 3.4", "oneDNN 2.6"};
  for (tinyattn::Port p : tinyattn::kAllPorts)
    if (tinyattn::kernels_f32(p)) impls.push_back(port_label(p));
  // The ports that use the default workspace's transposed keys
  // (tinyattn::kDefaultScratch), once more in the minimal workspace.
  std::vector<tinyattn::Port> transposing;
  for (tinyattn::Port p : tinyattn::kAllPorts)
    if (const tinyattn::KernelsF32* k = tinyattn::kernels_f32(p))
      if (k->scores_block_transposed) {
        transposing.push_back(p);
        impls.push_back(port_label(p) + ", minimal workspace");
      }
  std::vector<std::vector<double>> gflops(impls.size());
  std::ostringstream fw;
  fw << "### Forward, fp32, one core\n\n"
     << "% of peak: of the widest-vector FMA peak sampled in the same rounds as the shape's implementations (its row).\n\n"
     << "| shape (N,M,Dk,Dv) | implementation | time | GFLOP/s | % of peak | speed vs fastest peer | max abs diff vs triple loop |\n"
     << "|---|---|---:|---:|---:|---:|---:|\n";
  for (const Shape& s : kShapes) {
    Problem prob(s.n, s.m, s.dk, s.dv);
    std::vector<std::unique_ptr<Forward>> runs;
    runs.push_back(make_triple_loop(prob));
    runs.push_back(make_eigen(prob));
    runs.push_back(make_onednn(prob));
    for (tinyattn::Port p : tinyattn::kAllPorts)
      if (tinyattn::kernels_f32(p)) runs.push_back(make_tinyattn(prob, p));
    for (tinyattn::Port p : transposing)
      runs.push_back(make_tinyattn(prob, p, {}, tinyattn::Scratch::kMinimal));
    // Samples alternate between the implementations (one of each per round),
    // as for the softmax rows below: on a shared machine whose speed drifts
    // within a run, measuring them one after another moved ratios by 20%+.
    std::vector<Sampler> samplers;
    for (const std::unique_ptr<Forward>& run : runs)
      if (run) samplers.push_back(make_sampler([f = run.get()] { f->run(); }));
    samplers.push_back(make_sampler(fma_peak_loop));  // last: the peak of these rounds
    const std::vector<double> times = interleaved_median_seconds(samplers, cfg);
    const double round_peak = fma_peak_loop_flops() / times.back() * 1e-9;
    std::vector<Row> rows;
    for (size_t r = 0, next = 0; r < runs.size(); ++r) {
      if (!runs[r]) {
        rows.push_back({impls[r], NAN, NAN, r < 3});
        continue;
      }
      const double t = times[next++];
      rows.push_back({impls[r], t, prob.flops() / t * 1e-9, r < 3});
    }
    double fastest_peer = INFINITY;
    for (const Row& r : rows)
      if (r.peer) fastest_peer = std::fmin(fastest_peer, r.seconds);
    for (size_t r = 0; r < rows.size(); ++r) {
      char line[256];
      const double diff = runs[r] ? max_abs_diff(runs[r]->y(), runs[0]->y()) : NAN;
      std::snprintf(line, sizeof line, "| %s | %s | %.2f us | %.1f | %.0f%% | %.2fx | %.1e |\n", shape_name(s).c_str(),
                    rows[r].impl.c_str(), rows[r].seconds * 1e6, rows[r].gflops, 100.0 * rows[r].gflops / round_peak,
                    fastest_peer / rows[r].seconds, diff);
      fw << line;
      gflops[r].push_back(rows[r].gflops);
    }
    char line[160];
    std::snprintf(line, sizeof line, "| %s | FMA peak, same rounds | | %.1f | 100%% | | |\n", shape_name(s).c_str(),
                  round_peak);
    fw << line;
    std::fputs(fw.str().c_str(), stdout);
    md << fw.str();
    fw.str("");
  }
  md << "\n";

  // What bounds the forward's share of the peak: its parts timed alone, in
  // the same alternating rounds. The products alone plus the softmax alone
  // is about the most a forward built from them can reach (the fused kernel
  // may beat the two softmax passes a little); with the faster of the two
  // GEMMs measured (oneDNN's, tinyattn's) for the products, about the most a
  // forward with this softmax can.
  std::ostringstream bd;
  bd << "\n### What bounds the forward's share of peak: its parts alone\n\n"
     << "% of peak: of the widest-vector FMA peak sampled in the same rounds (its row).\n\n"
     << "| shape (N,M,Dk,Dv) | part | time | % of peak (FLOPs of both products) |\n|---|---|---:|---:|\n";
  for (const Shape& s : {Shape{128, 128, 64, 64}, Shape{256, 256, 64, 64}, Shape{512, 512, 128, 128}}) {
    Problem prob(s.n, s.m, s.dk, s.dv);
    std::vector<Part> parts;
    parts.push_back({"oneDNN 2.6 forward", make_onednn(prob)});
    parts.push_back({"oneDNN 2.6 matmuls alone", make_onednn_products(prob)});
    // Per port, kPerPort parts from first + 2: its forward, both products,
    // its softmax, and each product alone.
    enum { kForward, kProducts, kSoftmax, kScores, kValues, kPerPort };
    for (tinyattn::Port p : transposing) {
      parts.push_back({port_label(p) + " forward", make_tinyattn(prob, p)});
      parts.push_back({port_label(p) + " products alone", make_tinyattn_products(prob, p)});
      parts.push_back({port_label(p) + " softmax alone", make_tinyattn_softmax(prob, p)});
      parts.push_back({port_label(p) + " Q K^T alone", make_tinyattn_products(prob, p, Products::kScores)});
      parts.push_back({port_label(p) + " P V alone", make_tinyattn_products(prob, p, Products::kValues)});
    }
    const std::vector<double> t = median_seconds_in_rounds(parts, true, cfg);
    const double round_peak = fma_peak_loop_flops() / t.back() * 1e-9;
    auto at = [&](size_t port, int part) { return t[2 + kPerPort * port + part]; };
    double best_products = t[1];
    for (size_t i = 0; i < transposing.size(); ++i) best_products = std::fmin(best_products, at(i, kProducts));
    auto share = [&](double seconds) { return 100.0 * prob.flops() / seconds * 1e-9 / round_peak; };
    char line[320];
    for (size_t i = 0; i < parts.size(); ++i) {
      const int part = i < 2 ? kForward : static_cast<int>((i - 2) % kPerPort);
      if (part == kSoftmax || part == kScores || part == kValues) {
        const double forward = at((i - 2) / kPerPort, kForward);
        std::snprintf(line, sizeof line, "| %s | %s | %.2f us | (%.0f%% of its forward's time) |\n",
                      shape_name(s).c_str(), parts[i].name.c_str(), t[i] * 1e6, 100.0 * t[i] / forward);
      } else {
        std::snprintf(line, sizeof line, "| %s | %s | %.2f us | %.0f%% |\n", shape_name(s).c_str(),
                      parts[i].name.c_str(), t[i] * 1e6, share(t[i]));
      }
      bd << line;
    }
    // What the parts alone leave of the forward: the transposition of K,
    // the rescaling by 1/sum, the driver's loops, and what running the parts
    // together costs over running each alone.
    for (size_t i = 0; i < transposing.size(); ++i) {
      const double rest = at(i, kForward) - at(i, kScores) - at(i, kValues) - at(i, kSoftmax);
      std::snprintf(line, sizeof line,
                    "| %s | %s the rest: forward - Q K^T - P V - softmax | %.2f us | (%.0f%% of its forward's time) |\n",
                    shape_name(s).c_str(), tinyattn::kernels_f32(transposing[i])->port, rest * 1e6,
                    100.0 * rest / at(i, kForward));
      bd << line;
    }
    for (size_t i = 0; i < transposing.size(); ++i) {
      const double own = at(i, kProducts) + at(i, kSoftmax), best = best_products + at(i, kSoftmax);
      std::snprintf(line, sizeof line,
                    "| %s | bound: %s products + softmax alone / fastest products alone + that softmax | %.2f us / "
                    "%.2f us | **%.0f%% / %.0f%%** |\n",
                    shape_name(s).c_str(), tinyattn::kernels_f32(transposing[i])->port, own * 1e6, best * 1e6,
                    share(own), share(best));
      bd << line;
    }
    // With the softmax taking t_s, a forward at 75% of peak leaves the
    // products t_75 - t_s: the share of peak they must reach alone.
    const double t75 = prob.flops() / (0.75 * round_peak * 1e9);
    for (size_t i = 0; i < transposing.size(); ++i) {
      const double left = t75 - at(i, kSoftmax);
      char need[48] = "none left: the softmax alone is over";
      if (left > 0) std::snprintf(need, sizeof need, "%.0f%%", share(left));
      std::snprintf(line, sizeof line, "| %s | 75%% of peak with the %s softmax needs the products alone at | | %s |\n",
                    shape_name(s).c_str(), tinyattn::kernels_f32(transposing[i])->port, need);
      bd << line;
    }
    std::snprintf(line, sizeof line, "| %s | FMA peak, same rounds | %.1f GFLOP/s | 100%% |\n", shape_name(s).c_str(),
                  round_peak);
    bd << line;
  }
  bd << small_shapes_table(cfg);
  std::fputs(bd.str().c_str(), stdout);
  md << bd.str() << "\n";

  const std::string softmax_md = softmax_table(cfg);
  std::fputs(softmax_md.c_str(), stdout);
  md << softmax_md;
  const std::string md_path = out_dir + "/peers.md", svg_path = out_dir + "/forward_gflops.svg";
  if (avx2_cpu) {  // the decode and mask tables are the same code as the full run's
    std::ofstream(md_path) << md.str();
    std::printf("\nwrote %s\n", md_path.c_str());
    return 0;
  }
  std::vector<const tinyattn::KernelsF32*> kernels;
  for (tinyattn::Port p : tinyattn::kAllPorts)
    if (const tinyattn::KernelsF32* k = tinyattn::kernels_f32(p)) kernels.push_back(k);

  // Decode (N = 1) and prefill (N = 64): time per key as M grows.
  std::ostringstream sc;
  sc << "\n### Time per key as M grows (Dk = Dv = 64, no weights output; M > " << tinyattn::kKeyTile
     << " takes the tiled online softmax), ns per query row and key\n\n";
  sc << "| M";
  for (const tinyattn::KernelsF32* k : kernels) sc << " | " << k->port << " N=1 | " << k->port << " N=64";
  sc << " |\n|---:";
  for (size_t i = 0; i < kernels.size(); ++i) sc << "|---:|---:";
  sc << "|\n";
  for (size_t m = 64; m <= 8192; m *= 2) {
    sc << "| " << m;
    for (tinyattn::Port p : tinyattn::kAllPorts) {
      if (!tinyattn::kernels_f32(p)) continue;
      for (size_t n : {size_t{1}, size_t{64}}) {
        Problem prob(n, m, 64, 64);
        auto run = make_tinyattn(prob, p);
        const double t = median_seconds([&] { run->run(); }, cfg);
        char cell[32];
        std::snprintf(cell, sizeof cell, " | %.2f", t / static_cast<double>(n * m) * 1e9);
        sc << cell;
      }
    }
    sc << " |\n";
  }
  std::fputs(sc.str().c_str(), stdout);
  md << sc.str();

  // Masks: time relative to the unmasked forward, against the share of
  // (query, key) pairs the mask keeps.
  std::ostringstream mk;
  const Shape ms{256, 256, 64, 64};
  mk << "\n### Masks at " << shape_name(ms) << ": time relative to unmasked, against the share of keys kept\n\n"
     << "| mask | keys kept";
  for (const tinyattn::KernelsF32* k : kernels) mk << " | " << k->port << " time ratio";
  mk << " |\n|---|---:";
  for (size_t i = 0; i < kernels.size(); ++i) mk << "|---:";
  mk << "|\n";
  struct NamedMask {
    const char* name;
    tinyattn::Mask mask;
  };
  const NamedMask masks[] = {
      {"none", tinyattn::Mask::none()},
      {"causal, top-left", tinyattn::Mask::causal_top_left()},
      {"causal, bottom-right", tinyattn::Mask::causal_bottom_right()},
      {"sliding window 32 back", tinyattn::Mask::sliding_window(32, 0, tinyattn::Align::kTopLeft)},
      {"key padding, half the keys", tinyattn::Mask::key_padding(ms.m / 2)},
  };
  Problem mprob(ms.n, ms.m, ms.dk, ms.dv);
  constexpr size_t kMasks = sizeof masks / sizeof masks[0];
  // Per port, the masks' samples alternate (as the forward table's): ratios
  // of runs measured one after another moved by 0.15 on this machine.
  std::vector<std::vector<double>> ratio;  // [port][mask]
  for (tinyattn::Port p : tinyattn::kAllPorts) {
    if (!tinyattn::kernels_f32(p)) continue;
    std::vector<std::unique_ptr<Forward>> runs;
    std::vector<Sampler> samplers;
    for (const NamedMask& nm : masks) {
      runs.push_back(make_tinyattn(mprob, p, nm.mask));
      samplers.push_back(make_sampler([f = runs.back().get()] { f->run(); }));
    }
    const std::vector<double> t = interleaved_median_seconds(samplers, cfg);
    ratio.emplace_back();
    for (size_t i = 0; i < kMasks; ++i) ratio.back().push_back(t[i] / t[0]);
  }
  for (size_t i = 0; i < kMasks; ++i) {
    size_t kept = 0;
    for (size_t r = 0; r < ms.n; ++r) kept += tinyattn::key_range(masks[i].mask, r, ms.n, ms.m).size();
    char cell[64];
    std::snprintf(cell, sizeof cell, "| %s | %.3f", masks[i].name,
                  static_cast<double>(kept) / static_cast<double>(ms.n * ms.m));
    mk << cell;
    for (const std::vector<double>& col : ratio) {
      std::snprintf(cell, sizeof cell, " | %.3f", col[i]);
      mk << cell;
    }
    mk << " |\n";
  }
  std::fputs(mk.str().c_str(), stdout);
  md << mk.str();

  std::ofstream(md_path) << md.str();
  std::ofstream(svg_path) << svg_plot(impls, gflops, peak, when + " - " + machine + " - one core");
  std::printf("\nwrote %s and %s\n", md_path.c_str(), svg_path.c_str());
  return 0;
}
