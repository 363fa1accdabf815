// tinyattn: the host tool.
//   tinyattn run --q q.npy --k k.npy --v v.npy [mask options] --out y.npy [--weights a.npy]
//   tinyattn selftest [--port P] [--format unity|table|both]
//   tinyattn demo [--svg path] [--color|--no-color]
// Every error is one line on stderr and a non-zero exit status.
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "demo/heatmap.h"
#include "demo/notebook.h"
#include "tinyattn/selftest.h"
#include "tinyattn/tinyattn.h"
#include "tool/npy.h"

namespace {

using tinyattn_tool::Array;
using tinyattn_tool::DType;

constexpr int kExitFail = 1;   // the computation or a check failed, or bad data
constexpr int kExitUsage = 2;  // bad command line

// Largest output (Y or weights) the tool will allocate.
constexpr size_t kMaxOutputBytes = size_t{1} << 30;

const char kUsage[] =
    "usage:\n"
    "  tinyattn run --q Q.npy --k K.npy --v V.npy --out Y.npy [--weights A.npy]\n"
    "               [--mask M.npy] [--causal top-left|bottom-right] [--window L,R[,top-left|bottom-right]]\n"
    "               [--kv-len L] [--bias B.npy] [--scale S] [--heads HQ,HKV] [--dtype f32]\n"
    "               [--port default|scalar|highway|xsimd|mve]\n"
    "  tinyattn selftest [--port P] [--format unity|table|both]\n"
    "  tinyattn demo [--svg PATH] [--color|--no-color]\n"
    "Tensors are .npy files: Q [Hq,]N,Dk  K [Hkv,]M,Dk  V [Hkv,]M,Dv (float32 or float16);\n"
    "mask [Hq,]N,M bool/uint8 (nonzero = attend); bias [Hq,]N,M float32.\n";

int fail(const std::string& msg, int code = kExitFail) {
  std::fprintf(stderr, "tinyattn: error: %s\n", msg.c_str());
  return code;
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "tinyattn: error: %s\n(run 'tinyattn --help' for usage)\n", msg.c_str());
  return kExitUsage;
}

void write_stdout(const char* text) { std::fputs(text, stdout); }

bool parse_port(const std::string& s, tinyattn::Port* p) {
  static const std::pair<const char*, tinyattn::Port> kPorts[] = {
      {"default", tinyattn::Port::kDefault}, {"scalar", tinyattn::Port::kScalar}, {"highway", tinyattn::Port::kHighway},
      {"xsimd", tinyattn::Port::kXsimd},     {"mve", tinyattn::Port::kMve}};
  for (const auto& kv : kPorts)
    if (s == kv.first) {
      *p = kv.second;
      return true;
    }
  return false;
}

bool parse_long(const std::string& s, long long lo, long long hi, long long* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return out;
}

// ---------------------------------------------------------------- run

struct RunArgs {
  std::string q, k, v, out, weights, mask, bias;
  std::string causal, window, kv_len, scale, heads, dtype = "f32", port = "default";
};

// A tensor as [heads][rows][cols]; a 2-D file is one head.
struct Tensor3 {
  size_t heads = 1, rows = 0, cols = 0;
  bool had_heads_axis = false;
};

bool as_tensor3(const Array& a, const std::string& name, Tensor3* t, std::string* error) {
  if (a.shape.size() == 2) {
    *t = {1, a.shape[0], a.shape[1], false};
    return true;
  }
  if (a.shape.size() == 3) {
    *t = {a.shape[0], a.shape[1], a.shape[2], true};
    return true;
  }
  *error = name + ": expected 2-D [rows, cols] or 3-D [heads, rows, cols], got shape " + a.shape_text();
  return false;
}

bool load_float(const std::string& path, const std::string& what, Array* a, std::vector<float>* values,
                std::string* error) {
  if (!tinyattn_tool::read_npy(path, a, error)) return false;
  if (a->dtype != DType::kF32 && a->dtype != DType::kF16) {
    *error = path + ": " + what + " must be float32 or float16 for --dtype f32, got " + tinyattn_tool::dtype_name(a->dtype);
    return false;
  }
  *values = a->to_f32();
  return true;
}

std::string shapes(const std::string& a_name, const Array& a, const std::string& b_name, const Array& b) {
  return a_name + " has shape " + a.shape_text() + " and " + b_name + " has shape " + b.shape_text();
}

int cmd_run(int argc, char** argv) {
  RunArgs r;
  struct Opt {
    const char* flag;
    std::string* dst;
  } opts[] = {{"--q", &r.q},           {"--k", &r.k},         {"--v", &r.v},
              {"--out", &r.out},       {"--weights", &r.weights}, {"--mask", &r.mask},
              {"--bias", &r.bias},     {"--causal", &r.causal},   {"--window", &r.window},
              {"--kv-len", &r.kv_len}, {"--scale", &r.scale},     {"--heads", &r.heads},
              {"--dtype", &r.dtype},   {"--port", &r.port}};
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    bool known = false;
    for (Opt& o : opts) {
      if (a == o.flag) {
        if (i + 1 >= argc) return usage_error(a + " needs a value");
        *o.dst = argv[++i];
        known = true;
        break;
      }
    }
    if (!known) return usage_error("run: unknown argument '" + a + "'");
  }
  if (r.q.empty() || r.k.empty() || r.v.empty() || r.out.empty())
    return usage_error("run needs --q, --k, --v and --out");
  if (r.dtype == "f16" || r.dtype == "i8")
    return fail("--dtype " + r.dtype + " is not available in this build (only the fp32 path is compiled in); use --dtype f32",
                kExitUsage);
  if (r.dtype != "f32") return usage_error("--dtype must be f32");

  tinyattn::Options opt;
  if (!parse_port(r.port, &opt.port)) return usage_error("--port: unknown port '" + r.port + "'");
  if (!r.scale.empty()) {
    char* end = nullptr;
    const float s = std::strtof(r.scale.c_str(), &end);
    if (*end != '\0' || !std::isfinite(s)) return usage_error("--scale must be a finite number, got '" + r.scale + "'");
    opt.scale = s;
  }

  std::string error;
  Array qa, ka, va;
  std::vector<float> q, k, v;
  if (!load_float(r.q, "Q", &qa, &q, &error) || !load_float(r.k, "K", &ka, &k, &error) ||
      !load_float(r.v, "V", &va, &v, &error))
    return fail(error);
  Tensor3 qt, kt, vt;
  if (!as_tensor3(qa, r.q, &qt, &error) || !as_tensor3(ka, r.k, &kt, &error) || !as_tensor3(va, r.v, &vt, &error))
    return fail(error);
  if (qt.cols != kt.cols)
    return fail(shapes(r.q, qa, r.k, ka) + ": Dk differs (" + std::to_string(qt.cols) + " vs " + std::to_string(kt.cols) + ")");
  if (kt.rows != vt.rows)
    return fail(shapes(r.k, ka, r.v, va) + ": M (key rows) differs (" + std::to_string(kt.rows) + " vs " +
                std::to_string(vt.rows) + ")");
  if (kt.heads != vt.heads)
    return fail(shapes(r.k, ka, r.v, va) + ": key/value head counts differ");
  if (qt.heads % kt.heads != 0)
    return fail(shapes(r.q, qa, r.k, ka) + ": query heads (" + std::to_string(qt.heads) +
                ") must be a multiple of key/value heads (" + std::to_string(kt.heads) + ")");
  if (!r.heads.empty()) {
    const std::vector<std::string> h = split(r.heads, ',');
    long long hq = 0, hkv = 0;
    if (h.size() != 2 || !parse_long(h[0], 1, tinyattn::kMaxDim, &hq) || !parse_long(h[1], 1, tinyattn::kMaxDim, &hkv))
      return usage_error("--heads must be HQ,HKV (positive integers), got '" + r.heads + "'");
    if (static_cast<size_t>(hq) != qt.heads || static_cast<size_t>(hkv) != kt.heads)
      return fail("--heads " + r.heads + " does not match the files: " + shapes(r.q, qa, r.k, ka) +
                  " (" + std::to_string(qt.heads) + "," + std::to_string(kt.heads) + " heads)");
  }
  const tinyattn::Dims d{qt.rows, kt.rows, qt.cols, vt.cols, qt.heads, kt.heads};

  tinyattn::Mask mask;
  Array ma, ba;
  std::vector<float> bias;
  // Element masks may be [N, M] (shared by every head) or [Hq, N, M].
  auto check_mask_shape = [&](const Array& a, const std::string& path, size_t* head_stride) -> bool {
    Tensor3 t;
    if (!as_tensor3(a, path, &t, &error)) return false;
    if (t.rows != d.n || t.cols != d.m || (t.had_heads_axis && t.heads != d.hq)) {
      error = path + " has shape " + a.shape_text() + " but Q " + qa.shape_text() + " and K " + ka.shape_text() +
              " need [N, M] = (" + std::to_string(d.n) + ", " + std::to_string(d.m) + ") or [Hq, N, M] = (" +
              std::to_string(d.hq) + ", " + std::to_string(d.n) + ", " + std::to_string(d.m) + ")";
      return false;
    }
    *head_stride = t.had_heads_axis && t.heads > 1 ? d.n * d.m : 0;
    return true;
  };
  size_t mask_stride = 0, bias_stride = 0;
  if (!r.mask.empty()) {
    if (!tinyattn_tool::read_npy(r.mask, &ma, &error)) return fail(error);
    if (ma.dtype != DType::kBool && ma.dtype != DType::kU8)
      return fail(r.mask + ": a mask must be bool or uint8 (nonzero = attend), got " + tinyattn_tool::dtype_name(ma.dtype));
    if (!check_mask_shape(ma, r.mask, &mask_stride)) return fail(error);
    mask.keep = ma.data.data();
  }
  if (!r.bias.empty()) {
    if (!load_float(r.bias, "the bias", &ba, &bias, &error)) return fail(error);
    if (!check_mask_shape(ba, r.bias, &bias_stride)) return fail(error);
    mask.bias = bias.data();
  }
  if (!r.mask.empty() && !r.bias.empty() && (mask_stride == 0) != (bias_stride == 0))
    return fail("--mask and --bias must both be [N, M] or both be [Hq, N, M] (they share one head stride)");
  mask.head_stride = mask_stride ? mask_stride : bias_stride;
  if (!r.causal.empty()) {
    if (r.causal == "top-left") mask.causal = tinyattn::Causal::kTopLeft;
    else if (r.causal == "bottom-right") mask.causal = tinyattn::Causal::kBottomRight;
    else return usage_error("--causal must be top-left or bottom-right, got '" + r.causal + "'");
  }
  if (!r.window.empty()) {
    const std::vector<std::string> w = split(r.window, ',');
    long long left = 0, right = 0;
    if (w.size() < 2 || w.size() > 3 || !parse_long(w[0], -65536, 65536, &left) || !parse_long(w[1], -65536, 65536, &right))
      return usage_error("--window must be L,R[,top-left|bottom-right] (integers), got '" + r.window + "'");
    mask.window.left = static_cast<int32_t>(left);
    mask.window.right = static_cast<int32_t>(right);
    if (w.size() == 3) {
      if (w[2] == "top-left") mask.window.align = tinyattn::Align::kTopLeft;
      else if (w[2] == "bottom-right") mask.window.align = tinyattn::Align::kBottomRight;
      else return usage_error("--window alignment must be top-left or bottom-right, got '" + w[2] + "'");
    }
  }
  if (!r.kv_len.empty()) {
    long long l = 0;
    if (!parse_long(r.kv_len, 0, static_cast<long long>(d.m), &l))
      return usage_error("--kv-len must be an integer in [0, M=" + std::to_string(d.m) + "], got '" + r.kv_len + "'");
    mask.kv_len = static_cast<uint32_t>(l);
  }

  if (d.y_elems() * sizeof(float) > kMaxOutputBytes ||
      (!r.weights.empty() && d.weight_elems() * sizeof(float) > kMaxOutputBytes))
    return fail("the outputs would exceed the 1 GiB limit (Hq*N*M = " + std::to_string(d.weight_elems()) + ")");
  std::vector<float> y(d.y_elems()), weights(r.weights.empty() ? 0 : d.weight_elems());
  std::vector<unsigned char> ws(tinyattn::forward_workspace_bytes(d, !weights.empty()));
  tinyattn::ForwardIo io{q.data(), k.data(), v.data(), y.data(), weights.empty() ? nullptr : weights.data(), nullptr};
  const tinyattn::Status s = tinyattn::forward(d, io, tinyattn::Workspace{ws.data(), ws.size()}, mask, opt);
  if (s != tinyattn::Status::kOk) {
    std::string hint;
    if (s == tinyattn::Status::kBadMask) hint = " (the window is empty: L + R must be >= 0)";
    return fail(std::string("tinyattn::forward rejected the problem: ") + tinyattn::to_string(s) + hint);
  }

  std::vector<size_t> y_shape = {d.n, d.dv}, w_shape = {d.n, d.m};
  if (qt.had_heads_axis) {
    y_shape.insert(y_shape.begin(), d.hq);
    w_shape.insert(w_shape.begin(), d.hq);
  }
  if (!tinyattn_tool::write_npy_f32(r.out, y_shape, y.data(), &error)) return fail(error);
  if (!r.weights.empty() && !tinyattn_tool::write_npy_f32(r.weights, w_shape, weights.data(), &error))
    return fail(error);
  return 0;
}

// ---------------------------------------------------------------- selftest

int cmd_selftest(int argc, char** argv) {
  tinyattn::Port port = tinyattn::Port::kDefault;
  tinyattn::SelftestFormat format = tinyattn::SelftestFormat::kBoth;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--port" && i + 1 < argc) {
      if (!parse_port(argv[++i], &port)) return usage_error(std::string("--port: unknown port '") + argv[i] + "'");
    } else if (a == "--format" && i + 1 < argc) {
      const std::string f = argv[++i];
      if (f == "unity") format = tinyattn::SelftestFormat::kUnity;
      else if (f == "table") format = tinyattn::SelftestFormat::kTable;
      else if (f == "both") format = tinyattn::SelftestFormat::kBoth;
      else return usage_error("--format must be unity, table or both");
    } else {
      return usage_error("selftest: unknown argument '" + a + "'");
    }
  }
  static tinyattn::SelftestReport report;
  const tinyattn::Status s = tinyattn::selftest(&report, port, write_stdout, format);
  if (s != tinyattn::Status::kOk)
    return fail(std::string("selftest on port ") + tinyattn::port_name(port) + ": " + tinyattn::to_string(s));
  return report.passed() ? 0 : kExitFail;
}

// ---------------------------------------------------------------- demo

int cmd_demo(int argc, char** argv) {
  std::string svg = "attention_map.svg";
  bool color = isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--svg" && i + 1 < argc) svg = argv[++i];
    else if (a == "--color") color = true;
    else if (a == "--no-color") color = false;
    else return usage_error("demo: unknown argument '" + a + "'");
  }
  const tinyattn_demo::Notebook nb = tinyattn_demo::run_notebook();
  if (!nb.ok) return fail("demo: " + nb.error);
  const std::string title = "Self-Attention Map A = Softmax(QK^T / sqrt(dk))";
  std::vector<tinyattn_demo::GradientPoint> points;
  for (const tinyattn_demo::SaturationRow& r : nb.saturation) points.push_back({r.dk, r.scaled, r.unscaled});
  const std::string picture = tinyattn_demo::figure_svg(nb.map.tokens, nb.map.weights, points);
  std::FILE* f = std::fopen(svg.c_str(), "wb");
  if (!f || std::fwrite(picture.data(), 1, picture.size(), f) != picture.size() || std::fclose(f) != 0)
    return fail(svg + ": cannot write the heatmap");
  std::printf("%s: \"The animal didn't cross the street because it was too tired\"\n", title.c_str());
  std::printf("(rows: queries, columns: keys; synthetic embeddings of the seed notebook, seed 1337)\n\n");
  std::fputs(tinyattn_demo::heatmap_terminal(nb.map.tokens, nb.map.weights, color).c_str(), stdout);
  std::printf("heatmap and gradient panel written to %s\n\n", svg.c_str());
  std::fputs(tinyattn_demo::render(nb.properties).c_str(), stdout);
  std::printf("\n");
  std::fputs(tinyattn_demo::render(nb.saturation_table).c_str(), stdout);
  std::printf("\n");
  std::fputs(tinyattn_demo::render(nb.disambiguation).c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? kExitUsage : 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "run") return cmd_run(argc - 2, argv + 2);
  if (cmd == "selftest") return cmd_selftest(argc - 2, argv + 2);
  if (cmd == "demo") return cmd_demo(argc - 2, argv + 2);
  return usage_error("unknown command '" + cmd + "' (run, selftest, demo)");
}
