// `tinyattn explain`: which route and kernel an fp32 forward() of a shape,
// mask and port takes in this build, and why no faster one: the driver's
// own call plan (lib/src/plan.h), the one forward() computes, printed.
#include <cstring>
#include <string>

#include "plan.h"
#include "tinyattn/tinyattn.h"
#include "tool/args.h"

namespace tinyattn_tool {

namespace {

namespace td = tinyattn::detail;

std::string kernel_of(const td::ForwardPlan& p, const tinyattn::Dims& d) {
  switch (p.first()) {
    case td::Route::kFixedExtent:
      return "attend_fixed[" + std::to_string(p.extent) + "] (Dk " + std::to_string(d.dk) + ", Dv " +
             std::to_string(d.dv) + ")";
    case td::Route::kFusedBlocks: return "attend_block";
    case td::Route::kBlocks:
    case td::Route::kTiledBlocks:
      return p.transposed_keys ? "scores_block_transposed, row softmax, weighted_sum_block"
                               : "scores_block, row softmax, weighted_sum_block";
    case td::Route::kRows:
    case td::Route::kTiledRows: return "scores, row softmax, weighted_sum";
  }
  return "?";
}

std::string fallback_of(const td::ForwardPlan& p) {
  const std::string route = td::route_name(p.route), fallback = td::route_name(p.fallback);
  switch (p.first()) {
    case td::Route::kFixedExtent:
      return "a call the kernel declines (a logit or output not finite): the whole call on " + route;
    case td::Route::kFusedBlocks:
      return "a block the kernel declines or with a row that sees no key: " + fallback;
    case td::Route::kBlocks:
      return "a block with a row that sees no key, or whose V holds inf or NaN: " + fallback;
    case td::Route::kTiledBlocks: return "a head whose V holds inf or NaN: " + fallback;
    case td::Route::kRows:
    case td::Route::kTiledRows: break;
  }
  return "none";
}

}  // namespace

int cmd_explain(const Io& io, int argc, char** argv) {
  std::string dims, heads = "1,1", causal, window, kv_len, element_mask, softcap, port = "default",
                    workspace = "default";
  ValueOption opts[] = {{"--dims", &dims},       {"--heads", &heads},   {"--causal", &causal},
                        {"--window", &window},   {"--kv-len", &kv_len}, {"--element-mask", &element_mask},
                        {"--softcap", &softcap}, {"--port", &port},     {"--workspace", &workspace}};
  bool weights = false;
  for (int i = 0; i < argc; ++i) {
    const int taken = take_value(io, opts, sizeof opts / sizeof opts[0], argc, argv, &i);
    if (taken > 0) return taken;
    if (taken == 0) continue;
    if (std::strcmp(argv[i], "--weights") == 0) {
      weights = true;
      continue;
    }
    return usage_error(io, std::string("explain: unknown argument '") + argv[i] + "'");
  }
  const long long kMax = static_cast<long long>(tinyattn::kMaxDim);
  const std::vector<std::string> nm = split(dims, ',');
  long long v[4] = {0, 0, 0, 0};
  bool ok = (nm.size() == 3 || nm.size() == 4);
  for (size_t i = 0; ok && i < nm.size(); ++i) ok = parse_long(nm[i], 1, kMax, &v[i]);
  if (!ok) return usage_error(io, "explain needs --dims N,M,DK[,DV] (integers in [1, " + std::to_string(kMax) + "])");
  const std::vector<std::string> hh = split(heads, ',');
  long long hq = 0, hkv = 0;
  if (hh.size() != 2 || !parse_long(hh[0], 1, kMax, &hq) || !parse_long(hh[1], 1, kMax, &hkv))
    return usage_error(io, "--heads must be HQ,HKV (positive integers), got '" + heads + "'");
  const tinyattn::Dims d{static_cast<size_t>(v[0]), static_cast<size_t>(v[1]), static_cast<size_t>(v[2]),
                         static_cast<size_t>(nm.size() == 4 ? v[3] : v[2]), static_cast<size_t>(hq),
                         static_cast<size_t>(hkv)};
  if (tinyattn::validate(d) != tinyattn::Status::kOk)
    return usage_error(io, std::string("explain: ") + tinyattn::to_string(tinyattn::validate(d)) +
                               " (Hq a multiple of Hkv, every tensor addressable)");

  tinyattn::Mask mask;
  if (causal == "top-left") mask.causal = tinyattn::Causal::kTopLeft;
  else if (causal == "bottom-right") mask.causal = tinyattn::Causal::kBottomRight;
  else if (!causal.empty()) return usage_error(io, "--causal must be top-left or bottom-right, got '" + causal + "'");
  if (!window.empty()) {
    const std::vector<std::string> w = split(window, ',');
    long long l = 0, r = 0;
    if (w.size() != 2 || !parse_long(w[0], 0, kMax, &l) || !parse_long(w[1], 0, kMax, &r))
      return usage_error(io, "--window must be L,R (integers), got '" + window + "'");
    mask.window = tinyattn::Window{static_cast<int32_t>(l), static_cast<int32_t>(r), tinyattn::Align::kTopLeft};
  }
  if (!kv_len.empty()) {
    long long l = 0;
    if (!parse_long(kv_len, 0, v[1], &l))
      return usage_error(io, "--kv-len must be an integer in [0, M=" + std::to_string(v[1]) + "], got '" + kv_len + "'");
    mask.kv_len = static_cast<uint32_t>(l);
  }
  // The plan reads only whether there is an element mask, never its values.
  static const uint8_t kOneKeep = 1;
  static const float kOneBias = 0.0f;
  if (element_mask == "keep") mask.keep = &kOneKeep;
  else if (element_mask == "bias") mask.bias = &kOneBias;
  else if (!element_mask.empty())
    return usage_error(io, "--element-mask must be keep or bias, got '" + element_mask + "'");
  tinyattn::Options o;
  if (!parse_port(port, &o.port)) return usage_error(io, "--port: unknown port '" + port + "'");
  if (!softcap.empty()) {
    char* end = nullptr;
    const float c = std::strtof(softcap.c_str(), &end);
    if (*end != '\0' || !(c > 0.0f) || c > 3.4e38f)
      return usage_error(io, "--softcap must be a finite number > 0, got '" + softcap + "'");
    o.softcap = c;
  }
  tinyattn::Scratch scratch = tinyattn::kDefaultScratch;
  if (workspace == "minimal") scratch = tinyattn::Scratch::kMinimal;
  else if (workspace != "default") return usage_error(io, "--workspace must be minimal or default, got '" + workspace + "'");

  const tinyattn::KernelsF32* kern = tinyattn::kernels_f32(o.port);
  if (kern == nullptr) return fail(io, "port " + port + " is not compiled into this build");
  const size_t ws = tinyattn::forward_workspace_bytes(d, weights, scratch);
  const td::CallTraits traits = td::call_traits(d, mask, o, weights);
  const td::ForwardPlan p = td::plan_forward(*kern, d, traits, ws, td::fixed_extent(d.dk, d.dv));

  std::FILE* out = io.out;
  std::fprintf(out, "shape: N %zu, M %zu, Dk %zu, Dv %zu, heads %zu/%zu\n", d.n, d.m, d.dk, d.dv, d.hq, d.hkv);
  std::fprintf(out, "port: %s (%s)\n", kern->port, kern->simd_target());
  std::fprintf(out, "workspace: %zu bytes (%s)\n", ws, scratch == tinyattn::Scratch::kMinimal ? "minimal" : "default");
  std::fprintf(out, "route: %s\n", td::route_name(p.first()));
  std::fprintf(out, "kernel: %s\n", kernel_of(p, d).c_str());
  std::fprintf(out, "rows per call: %zu\n", p.rows_per_call(d));
  if (p.first() == td::Route::kFixedExtent)
    std::fprintf(out, "keys: %zu to %zu, whole rows\n", p.keys.lo, p.keys.hi);
  else
    std::fprintf(out, "key tile: %zu (%s)\n", p.key_tile,
                 p.key_tile == d.m ? "whole rows" : "online softmax over key tiles");
  std::fprintf(out, "transposed keys: %s\n", p.transposed_keys ? "yes" : "no");
  if (p.first() != td::Route::kFixedExtent)
    std::fprintf(out, "not fixed-extent: %s\n", td::why_text(p.fixed_why));
  if (p.route_why != td::Why::kTaken)
    std::fprintf(out, "not %s: %s\n", p.route_why == td::Why::kOneRow ? "blocks" : "fused-blocks",
                 td::why_text(p.route_why));
  std::fprintf(out, "fallback: %s\n", fallback_of(p).c_str());
  return 0;
}

}  // namespace tinyattn_tool
