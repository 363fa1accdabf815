// libFuzzer target for the host tool's whole command line
// (tinyattn_tool::tool_main, tools/tool/tool.cc): run (every dtype and both
// integer modes), plan (int8 and int16), decode, explain, selftest, demo,
// --help and unknown commands; options from the tool's own lists; values
// from per-option pools (valid ones, and empty strings, odd and huge
// numbers, bad syntax); input files (small valid .npy files of every dtype
// and rank, malformed ones, a file rewritten from the fuzz bytes on each
// input, missing paths, a folder, /dev/zero); output paths (new, existing,
// one file spelled differently or through a link, a broken link, a folder,
// a missing folder, a path under a file, an input of the same command, a
// device). demo always gets an --svg the tool must refuse: a good one runs
// the notebook (0.15 s under ASan, nothing to fuzz; ctest's tool_demo runs it).
//
// Files live only in one folder the process creates on its first input
// (under $TMPDIR, /dev/shm or /tmp) and removes at exit: in/ holds the
// inputs, out/ the output destinations, restored before each input.
// TINYATTN_TOOL_FUZZ_ECHO=1 in the environment prints each command line and
// its outcome.
//
// Invariants checked (a violation traps, which libFuzzer reports as a crash):
//  * the exit status is 0, 1 or 2; a failure prints one "tinyattn: error:"
//    line (plus the usage hint for exit 2) and a success prints no error;
//  * a failure leaves out/ as it was, every file byte-identical and nothing
//    added: all outputs or none;
//  * a success writes every requested output under out/ as a well-formed
//    file (.npy outputs parse with a 2-D to 4-D shape, a plan is the C
//    initializer) and changes nothing else there;
//  * in/ never changes, no temporary file is left in out/, no file
//    descriptor is left open; ASan, UBSan and LSan report nothing.
// Built two ways: with libFuzzer (TINYATTN_FUZZ, clang) and as a replay
// program over the committed corpus (every host build, tests/fuzz/suite.cmake).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "tinyattn/half.h"
#include "tinyattn/port.h"
#include "tool/npy.h"
#include "tool/tool.h"

namespace {

namespace fs = std::filesystem;
using tinyattn_fuzz::Bytes;

// ---------------------------------------------------------------- the folder

std::string g_root, g_in, g_out;

std::string in(const std::string& name) { return g_in + "/" + name; }
std::string out(const std::string& name) { return g_out + "/" + name; }

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  FUZZ_REQUIRE(f != nullptr);
  FUZZ_REQUIRE(bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  FUZZ_REQUIRE(std::fclose(f) == 0);
}

void write_text(const std::string& path, const std::string& text) {
  write_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

// Small tensors with values from a fixed generator (a few distinct magnitudes).
std::vector<float> values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 7;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>(s >> 24) - 128) / 64.0f;
  }
  return v;
}

void save_f32(const std::string& name, const std::vector<size_t>& shape, uint32_t seed) {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  write_file(in(name), tinyattn_tool::npy_bytes_f32(shape, values(n, seed).data()));
}

void save_f16(const std::string& name, const std::vector<size_t>& shape, uint32_t seed) {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  std::vector<tinyattn::half> h(n);
  tinyattn::to_half(values(n, seed).data(), h.data(), n);
  write_file(in(name), tinyattn_tool::npy_bytes("<f2", shape, h.data(), 2));  // half: two bytes of IEEE bits
}

// Integers from a fixed generator: one byte per element modulo mod (bool,
// uint8, int8 files), or, with mod 0, whole int16 values, extremes included.
template <class T>
void save_ints(const std::string& name, const char* descr, const std::vector<size_t>& shape, uint32_t seed,
               uint32_t mod) {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  std::vector<T> v(n);
  uint32_t s = seed;
  for (T& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<T>(mod ? (s >> 24) % mod : s >> 16);
  }
  write_file(in(name), tinyattn_tool::npy_bytes(descr, shape, v.data(), sizeof(T)));
}
void save_bytes(const std::string& name, const char* descr, const std::vector<size_t>& shape, uint32_t seed,
                uint8_t mod) {
  save_ints<uint8_t>(name, descr, shape, seed, mod);
}
void save_i16(const std::string& name, const std::vector<size_t>& shape, uint32_t seed) {
  save_ints<int16_t>(name, "<i2", shape, seed, 0);
}

// A .npy file with a given header dict and payload size (for the malformed ones).
std::vector<uint8_t> raw_npy(const std::string& dict, size_t payload, uint8_t major = 1) {
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  const size_t len = dict.size();
  b.push_back(static_cast<uint8_t>(len));
  b.push_back(static_cast<uint8_t>(len >> 8));
  if (major >= 2) b.insert(b.end(), {0, 0});
  b.insert(b.end(), dict.begin(), dict.end());
  b.resize(b.size() + payload, 0);
  return b;
}

const std::string kSentinel = "an existing file: a failed run must leave these bytes\n";

// out/ as every input finds it.
void make_outputs() {
  fs::create_directories(g_out + "/folder.npy");
  write_text(out("existing.npy"), kSentinel);
  write_text(out("existing2.npy"), kSentinel + "2");
  fs::create_symlink(out("existing.npy"), out("link.npy"));
  fs::create_symlink(out("nowhere.npy"), out("dangling.npy"));
}

void setup() {
  // $TMPDIR, else /dev/shm: every input creates and removes files, and
  // tmpfs does that about five times faster than ext4 under /tmp.
  const char* tmp = std::getenv("TMPDIR");
  const bool shm = access("/dev/shm", W_OK | X_OK) == 0;
  std::string tmpl = std::string(tmp && *tmp ? tmp : shm ? "/dev/shm" : "/tmp") + "/tinyattn_tool_fuzz.XXXXXX";
  FUZZ_REQUIRE(mkdtemp(&tmpl[0]) != nullptr);
  g_root = tmpl;
  g_in = g_root + "/in";
  g_out = g_root + "/out";
  fs::create_directories(g_in);
  std::atexit([] {
    std::error_code ec;
    fs::remove_all(g_root, ec);
  });
  // N = 2 queries, M = 3 keys, Dk = 4, Dv = 2; 3-D with Hq = 2 over Hkv = 1; 4-D with B = 2.
  save_f32("q2.npy", {2, 4}, 1);
  save_f32("k2.npy", {3, 4}, 2);
  save_f32("v2.npy", {3, 2}, 3);
  save_f32("q3.npy", {2, 2, 4}, 4);
  save_f32("k3.npy", {1, 3, 4}, 5);
  save_f32("v3.npy", {1, 3, 2}, 6);
  save_f32("q4.npy", {2, 2, 2, 4}, 7);
  save_f32("k4.npy", {2, 1, 3, 4}, 8);
  save_f32("v4.npy", {2, 1, 3, 2}, 9);
  save_f32("pk2.npy", {2, 4}, 10);
  save_f32("pv2.npy", {2, 2}, 11);
  save_f32("pk4.npy", {2, 1, 2, 4}, 12);
  save_f32("pv4.npy", {2, 1, 2, 2}, 13);
  save_f16("q2h.npy", {2, 4}, 14);
  save_f16("k2h.npy", {3, 4}, 15);
  save_f16("v2h.npy", {3, 2}, 16);
  save_i16("q2s.npy", {2, 4}, 30);
  save_i16("k2s.npy", {3, 4}, 31);
  save_i16("v2s.npy", {3, 2}, 32);
  save_i16("q3s.npy", {2, 2, 4}, 33);
  save_i16("k3s.npy", {1, 3, 4}, 34);
  save_i16("v3s.npy", {1, 3, 2}, 35);
  save_bytes("q2i.npy", "|i1", {2, 4}, 17, 255);
  save_bytes("k2i.npy", "|i1", {3, 4}, 18, 255);
  save_bytes("v2i.npy", "|i1", {3, 2}, 19, 255);
  save_bytes("bias2i.npy", "|i1", {2, 3}, 20, 255);
  save_bytes("keep2.npy", "|b1", {2, 3}, 21, 2);
  save_bytes("keep2u8.npy", "|u1", {2, 3}, 22, 3);
  save_bytes("keep4.npy", "|b1", {2, 1, 2, 3}, 23, 2);
  save_bytes("keep_short.npy", "|b1", {2, 2}, 24, 2);
  save_f32("bias2.npy", {2, 3}, 25);
  save_f32("bias3.npy", {2, 2, 3}, 26);
  {
    std::vector<float> m = values(6, 27);
    m[1] = -std::numeric_limits<float>::infinity();
    write_file(in("fmask2.npy"), tinyattn_tool::npy_bytes_f32({2, 3}, m.data()));
  }
  save_f32("one_d.npy", {8}, 28);
  save_f32("five_d.npy", {1, 1, 1, 2, 4}, 29);
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }";
  write_file(in("empty.npy"), {});
  write_text(in("text.npy"), "q,k,v\n1,2,3\n");
  const std::vector<uint8_t> whole = raw_npy(dict, 32);
  write_file(in("truncated_header.npy"), std::vector<uint8_t>(whole.begin(), whole.begin() + 30));
  write_file(in("truncated_data.npy"), raw_npy(dict, 20));
  write_file(in("trailing.npy"), raw_npy(dict, 36));
  write_file(in("v2_header.npy"), raw_npy(dict, 32, 2));
  write_file(in("fortran.npy"), raw_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 4), }", 32));
  write_file(in("big_endian.npy"), raw_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 4), }", 32));
  write_file(in("f64.npy"), raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 4), }", 64));
  write_file(in("huge_shape.npy"), raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536, 64), }", 16));
  write_file(in("huge_header.npy"), {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0x7f, ' '});
  write_text(in("qparams.txt"), "q=0.02 k=0.03 v=0.05\ny=0.05\n");
  write_text(in("qparams_b.txt"), "q=0.02,k=0.03:-7,v=0.05:11,y=0.05:-4,b=0.1");
  write_text(in("qparams_bad.txt"), "q=0.02 k=abc");
  make_outputs();
}

// ---------------------------------------------------------------- snapshots

// A folder's entries, recursively: kind and content (a link's target).
struct Entry {
  char kind;  // 'f' file, 'd' folder, 'l' symbolic link, 'o' other
  std::string content;
  bool operator==(const Entry& o) const { return kind == o.kind && content == o.content; }
  bool operator!=(const Entry& o) const { return !(*this == o); }
};
using Snapshot = std::map<std::string, Entry>;

std::string read_all(const std::string& path) {
  std::string s;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return s;
  char buf[4096];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, got);
  std::fclose(f);
  return s;
}

void snapshot(const std::string& dir, const std::string& prefix, Snapshot* snap) {
  DIR* d = opendir(dir.c_str());
  FUZZ_REQUIRE(d != nullptr);
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + name;
    struct stat st;
    FUZZ_REQUIRE(lstat(path.c_str(), &st) == 0);
    Entry entry{'o', {}};
    if (S_ISREG(st.st_mode)) {
      entry = {'f', read_all(path)};
    } else if (S_ISLNK(st.st_mode)) {
      entry = {'l', fs::read_symlink(path).string()};
    } else if (S_ISDIR(st.st_mode)) {
      entry = {'d', {}};
      snapshot(path, prefix + name + "/", snap);
    }
    (*snap)[prefix + name] = entry;
  }
  closedir(d);
}

Snapshot snapshot_of(const std::string& dir) {
  Snapshot s;
  snapshot(dir, "", &s);
  return s;
}

// in/ as far as a command could change it: the folder's entries (an added
// or renamed file changes its mtime) and every file of in/ the command names.
std::string inputs_state(const std::vector<std::string>& args) {
  std::string state;
  const auto add = [&](const std::string& path) {
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) {
      state += path + ": absent\n";
    } else {
      state += path + ": " + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
               std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "\n";
    }
  };
  add(g_in);
  for (const std::string& a : args)
    if (a.compare(0, g_in.size() + 1, g_in + "/") == 0) add(a);
  return state;
}

bool has_temporary(const Snapshot& s) {
  for (const auto& [name, entry] : s)
    if (name.find(".tinyattn-") != std::string::npos) return true;
  return false;
}

// ---------------------------------------------------------------- pools

// In the output pool: an input of the same command (an output must never
// name one), chosen when the value is drawn.
const char kAnInput[] = "<an input>";

struct Pools {
  std::vector<std::string> inputs, outputs, qparams;
};

const Pools& pools() {
  static const Pools p = [] {
    Pools r;
    for (const char* n : {"q2.npy", "k2.npy", "v2.npy", "q3.npy", "k3.npy", "v3.npy", "q4.npy", "k4.npy", "v4.npy",
                          "pk2.npy", "pv2.npy", "pk4.npy", "pv4.npy", "q2h.npy", "k2h.npy", "v2h.npy", "q2i.npy",
                          "k2i.npy", "v2i.npy", "q2s.npy", "k2s.npy", "v2s.npy", "q3s.npy", "k3s.npy", "v3s.npy",
                          "bias2i.npy", "keep2.npy", "keep2u8.npy", "keep4.npy",
                          "keep_short.npy", "bias2.npy", "bias3.npy", "fmask2.npy", "one_d.npy", "five_d.npy",
                          "empty.npy", "text.npy", "truncated_header.npy", "truncated_data.npy", "trailing.npy",
                          "v2_header.npy", "fortran.npy", "big_endian.npy", "f64.npy", "huge_shape.npy",
                          "huge_header.npy", "fuzz.npy", "fuzz.npy", "fuzz.npy", "missing.npy"})
      r.inputs.push_back(in(n));
    r.inputs.push_back(g_in);
    r.inputs.push_back("/dev/zero");
    r.inputs.push_back(out("existing.npy"));
    r.inputs.push_back(out("new1.npy"));
    for (const char* n : {"new1.npy", "new2.npy", "new3.npy", "new1.npy", "new2.npy", "existing.npy", "existing2.npy",
                          "link.npy", "dangling.npy", "folder.npy", "folder.npy/new.npy", "missing/y.npy",
                          "./new1.npy", "folder.npy/../new2.npy", "/existing.npy", "", "existing.npy/x.npy"})
      r.outputs.push_back(out(n));
    r.outputs.push_back(kAnInput);
    r.outputs.push_back(kAnInput);
    r.outputs.push_back("/dev/null");
    r.outputs.push_back("/proc/self/x.npy");
    r.qparams = {"q=0.02,k=0.03,v=0.05,y=0.05", "q=0.02:3/0.03,k=0.03:-7,v=0.05:11,y=0.05:-4/0.06",
                 "q=0.02,k=0.03,v=0.05,y=0.05,b=0.1", "q=0,k=0.03,v=0.05,y=0.05", "q=0.02,k=0.03,v=1e30,y=1e-30",
                 "q=0.02,k=0.03,v=0.05", "q=0.02,q=0.03,k=0.03,v=0.05,y=0.05", "q=abc,k=0.03,v=0.05,y=0.05",
                 "q=0.02:1.5,k=0.03,v=0.05,y=0.05", "x=1", "q=0.02,k=0.03,v=0.05,y=0.05,s=0.5",
                 "q=0.02,k=0.03:-7,v=0.05,y=0.05:3,s=0.5:-20", "q=0.02,k=0.03,v=0.05,y=0.05,s=0",
                 "q=0.02,k=0.03,v=0.05,y=0.05,s=1e-30", "q=1e-4,k=1e-4,v=0.05,y=0.05,s=1e-9", in("qparams.txt"), in("qparams_b.txt"),
                 in("qparams_bad.txt"), in("missing.txt"), in("fuzz.npy")};
    return r;
  }();
  return p;
}

// Values any option may get: empty, odd and huge numbers, bad syntax.
const std::vector<std::string>& odd_values() {
  static const std::vector<std::string> v = {"",     "0",  "-1", "65536", "65537", "4294967297", "99999999999999999999",
                                             "1e309", "nan", "-inf", " ",   ",",     "1,",         "--out",
                                             "\xff", std::string(300, '7')};
  return v;
}

enum class Kind { kInput, kOutput, kQparams, kPlain };

struct OptionSpec {
  const char* flag;
  Kind kind;
  std::vector<std::string> good;  // for kPlain
};

// Every port name the library knows, and one it does not.
const std::vector<std::string>& port_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {tinyattn::port_name(tinyattn::Port::kDefault)};
    for (tinyattn::Port p : tinyattn::kAllPorts) n.push_back(tinyattn::port_name(p));
    n.push_back("mmx");
    return n;
  }();
  return names;
}

const std::vector<OptionSpec>& run_options() {
  static const std::vector<OptionSpec> o = {
      {"--q", Kind::kInput, {}},
      {"--k", Kind::kInput, {}},
      {"--v", Kind::kInput, {}},
      {"--out", Kind::kOutput, {}},
      {"--weights", Kind::kOutput, {}},
      {"--mask", Kind::kInput, {}},
      {"--bias", Kind::kInput, {}},
      {"--causal", Kind::kPlain, {"top-left", "bottom-right", "offset", "onnx", "diagonal"}},
      {"--window", Kind::kPlain, {"1,1", "0,0,top-left", "2,-1,offset", "-3,1", "1,0,bottom-right", "1", "a,b"}},
      {"--offset", Kind::kPlain, {"0", "1", "-1", "2", "-65536", "1.5"}},
      {"--kv-len", Kind::kPlain, {"0", "1", "2", "3", "5", "1,2", "3,0", "2,5", "1,2,3"}},
      {"--scale", Kind::kPlain, {"1", "0.5", "0", "-2", "1e-40", "1e38", "inf", "0x1p-3", "2x"}},
      {"--softcap", Kind::kPlain, {"1", "0.25", "30", "0", "-1", "inf", "1e-38"}},
      {"--scores", Kind::kOutput, {}},
      {"--score-stage", Kind::kPlain, {"scaled", "softcapped", "masked", "softmax"}},
      {"--heads", Kind::kPlain, {"1,1", "2,1", "2,2", "0,1", "1", "x,y"}},
      {"--past-k", Kind::kInput, {}},
      {"--past-v", Kind::kInput, {}},
      {"--present-k", Kind::kOutput, {}},
      {"--present-v", Kind::kOutput, {}},
      {"--dtype", Kind::kPlain, {"f32", "f16", "i8", "i16", "int16", "int8", "float16", "f64", "i32"}},
      {"--int8-mode", Kind::kPlain, {"native", "tflite", "TFLite", "float"}},
      {"--int16-mode", Kind::kPlain, {"native", "tflite", "16x8"}},
      {"--port", Kind::kPlain, port_names()},
      {"--qparams", Kind::kQparams, {}},
  };
  return o;
}

const std::vector<OptionSpec>& decode_options() {
  static const std::vector<OptionSpec> o = {
      {"--q", Kind::kInput, {}},
      {"--k", Kind::kInput, {}},
      {"--v", Kind::kInput, {}},
      {"--out", Kind::kOutput, {}},
      {"--kv-dtype", Kind::kPlain, {"f32", "f16", "i8-scaled", "i8-scaled-f16", "i8", "q4"}},
      {"--window", Kind::kPlain, {"1", "2", "3", "0", "65537", "-1", "x"}},
      {"--sinks", Kind::kPlain, {"0", "1", "2", "65536", "-1"}},
      {"--rope", Kind::kPlain,
       {"half-split", "interleaved", "interleaved,500000,2", "half-split,1,4", "half-split,0.5", "half-split,10000,3",
        "half-split,nan", "interleaved,1e39,2", "diagonal", "half-split,10000,2,9"}},
      {"--position", Kind::kPlain, {"0", "7", "2147483647", "2147483648", "-1"}},
      {"--chunk", Kind::kPlain, {"1", "2", "3", "0", "65536"}},
      {"--scale", Kind::kPlain, {"1", "0.5", "0", "inf", "1e38", "x"}},
      {"--port", Kind::kPlain, port_names()},
  };
  return o;
}

const std::vector<OptionSpec>& plan_options() {
  static const std::vector<OptionSpec> o = {
      {"--dk", Kind::kPlain, {"4", "16", "1", "0", "65536"}},
      {"--qparams", Kind::kQparams, {}},
      {"--heads", Kind::kPlain, {"1,1", "2,1", "4,2", "3,2", "0,1", "2"}},
      {"--scale", Kind::kPlain, {"0.5", "1", "0", "-1", "1e-30", "nan"}},
      {"--name", Kind::kPlain, {"plan", "_p1", "1p", "a-b", "x*/y"}},
      {"--lang", Kind::kPlain, {"c", "cpp", "rust"}},
      {"--dtype", Kind::kPlain, {"i8", "i16", "int16", "f32"}},
      {"--int8-mode", Kind::kPlain, {"native", "tflite", "x"}},
      {"--int16-mode", Kind::kPlain, {"native", "tflite", "x"}},
      {"--out", Kind::kOutput, {}},
  };
  return o;
}

const std::vector<OptionSpec>& explain_options() {
  static const std::vector<OptionSpec> o = {
      {"--dims", Kind::kPlain, {"2,3,4", "16,16,32,32", "1,1,1", "65536,65536,65536", "65537,1,1", "0,1,1", "2,3"}},
      {"--heads", Kind::kPlain, {"1,1", "4,2", "3,2", "65536,1", "0,1", "1"}},
      {"--causal", Kind::kPlain, {"top-left", "bottom-right", "diagonal"}},
      {"--window", Kind::kPlain, {"1,1", "0,0", "65536,0", "-1,2", "1"}},
      {"--kv-len", Kind::kPlain, {"0", "1", "3", "65537", "-1"}},
      {"--element-mask", Kind::kPlain, {"keep", "bias", "bits"}},
      {"--softcap", Kind::kPlain, {"30", "0", "-1", "inf", "3.5e38", "1e-45"}},
      {"--workspace", Kind::kPlain, {"minimal", "default", "huge"}},
      {"--weights", Kind::kPlain, {"--weights"}},
      {"--port", Kind::kPlain, port_names()},
  };
  return o;
}

bool is_input_flag(const std::string& a) {
  return a == "--q" || a == "--k" || a == "--v" || a == "--mask" || a == "--bias" || a == "--past-k" ||
         a == "--past-v" || a == "--qparams";
}

// An input path (absolute) of the command so far, spelled as given, with
// "/./" or with "//" before its name; out/new1.npy when there is none.
std::string an_input(Bytes& b, const std::vector<std::string>& args) {
  std::vector<std::string> paths;
  for (size_t i = 1; i + 1 < args.size(); ++i)
    if (is_input_flag(args[i]) && !args[i + 1].empty() && args[i + 1][0] == '/') paths.push_back(args[i + 1]);
  const uint8_t pick = b.u8();
  if (paths.empty()) return out("new1.npy");
  std::string path = paths[pick % paths.size()];
  const size_t slash = path.rfind('/');
  if (pick & 0x40) path.insert(slash, "/.");
  else if (pick & 0x80) path.insert(slash, "/");
  return path;
}

std::string value_for(Bytes& b, const OptionSpec& o, const std::vector<std::string>& args) {
  const uint8_t v = b.u8();
  if (v < 24) {
    // An odd output name goes under out/ (never the current folder); empty stays empty.
    const std::string& odd = odd_values()[v % odd_values().size()];
    return o.kind == Kind::kOutput && !odd.empty() ? out(odd) : odd;
  }
  const Pools& p = pools();
  switch (o.kind) {
    case Kind::kInput: return p.inputs[v % p.inputs.size()];
    case Kind::kOutput: {
      const std::string& path = p.outputs[v % p.outputs.size()];
      return path == kAnInput ? an_input(b, args) : path;
    }
    case Kind::kQparams: return p.qparams[v % p.qparams.size()];
    case Kind::kPlain: break;
  }
  return o.good[v % o.good.size()];
}

// A command that runs to the end often enough: a consistent Q, K, V (and
// past) set, then options drawn from the list.
void run_command(Bytes& b, std::vector<std::string>* args) {
  const Pools& p = pools();
  const auto base = [&](const char* q, const char* k, const char* v) {
    args->insert(args->end(), {"--q", in(q), "--k", in(k), "--v", in(v), "--out", p.outputs[b.u8() % 8]});
  };
  // 240 and up: the integer modes (below, the cases every earlier corpus input reaches).
  const uint8_t set = b.u8();
  switch (set < 240 ? set % 9 : 9 + set % 3) {
    case 0: base("q2.npy", "k2.npy", "v2.npy"); break;
    case 1: base("q3.npy", "k3.npy", "v3.npy"); break;
    case 2: base("q4.npy", "k4.npy", "v4.npy"); break;
    case 3:
      base("q2h.npy", "k2h.npy", "v2h.npy");
      args->insert(args->end(), {"--dtype", "f16"});
      break;
    case 4:
      base("q2i.npy", "k2i.npy", "v2i.npy");
      args->insert(args->end(), {"--dtype", "i8", "--qparams", p.qparams[b.u8() % 3]});
      break;
    case 9:  // int16, either mode (the TFLite mode with a score scale s=)
    case 10: {
      const bool three = b.u8() & 1;
      if (three) base("q3s.npy", "k3s.npy", "v3s.npy");
      else base("q2s.npy", "k2s.npy", "v2s.npy");
      const bool tflite = set % 2;
      args->insert(args->end(), {"--dtype", "i16", "--qparams", p.qparams[tflite ? 10 + b.u8() % 2 : b.u8() % 2]});
      if (tflite) args->insert(args->end(), {"--int16-mode", "tflite"});
      break;
    }
    case 11:  // int8 in the TFLite mode
      base("q2i.npy", "k2i.npy", "v2i.npy");
      args->insert(args->end(), {"--dtype", "i8", "--int8-mode", "tflite", "--qparams", p.qparams[10 + b.u8() % 2]});
      break;
    case 5:
      base("q2.npy", "k2.npy", "v2.npy");
      args->insert(args->end(), {"--past-k", in("pk2.npy"), "--past-v", in("pv2.npy")});
      break;
    case 6:
      base("q4.npy", "k4.npy", "v4.npy");
      args->insert(args->end(), {"--past-k", in("pk4.npy"), "--past-v", in("pv4.npy"), "--present-k",
                                 p.outputs[b.u8() % 8], "--present-v", p.outputs[b.u8() % 8]});
      break;
    case 7: base("fuzz.npy", "k2.npy", "v2.npy"); break;
    default: break;  // every option from the list
  }
}

void options(Bytes& b, const std::vector<OptionSpec>& list, std::vector<std::string>* args) {
  const size_t count = b.u8() % 9;
  for (size_t i = 0; i < count && b.left() > 0; ++i) {
    const uint8_t which = b.u8();
    if (which >= 250) {
      args->push_back(which == 250 ? "--frobnicate" : list[which % list.size()].flag);  // unknown, or no value
      if (which != 250) return;
      continue;
    }
    const OptionSpec& o = list[which % list.size()];
    args->push_back(o.flag);
    const std::string value = value_for(b, o, *args);
    args->push_back(value);
  }
}

// in/fuzz.npy from the rest of the input: raw bytes, or a valid header of a
// small shape and dtype over fuzzed data (NaN, infinities, any int8).
void write_fuzz_file(Bytes& b) {
  std::vector<uint8_t> rest;
  const uint8_t mode = b.u8();
  while (b.left() > 0) rest.push_back(b.u8());
  if (mode % 2 == 0) {
    write_file(in("fuzz.npy"), rest);
    return;
  }
  static const char* const kDescr[] = {"<f4", "<f2", "|i1", "|b1", "|u1", "<i2"};
  static const size_t kSize[] = {4, 2, 1, 1, 1, 2};
  const size_t t = (mode >> 1) % 6;
  std::vector<size_t> shape = {2, 4};  // Q's shape most often
  if ((mode >> 4) % 4 == 1) shape = {3, 4};
  if ((mode >> 4) % 4 == 2) shape = {2, 3};
  if ((mode >> 4) % 4 == 3) shape = {2, 2, 4};
  size_t n = 1;
  for (size_t d : shape) n *= d;
  rest.resize(n * kSize[t], 0);
  // npy_bytes takes elements in host order and writes them little-endian:
  // the elements whose little-endian bytes are `rest`.
  const size_t size = kSize[t];
  std::vector<uint8_t> host(rest.size());
  for (size_t i = 0; i < n; ++i) {
    uint32_t value = 0;
    for (size_t k = 0; k < size; ++k) value |= static_cast<uint32_t>(rest[i * size + k]) << (8 * k);
    if (size == 4) {
      std::memcpy(&host[i * 4], &value, 4);
    } else if (size == 2) {
      const uint16_t h = static_cast<uint16_t>(value);
      std::memcpy(&host[i * 2], &h, 2);
    } else {
      host[i] = static_cast<uint8_t>(value);
    }
  }
  write_file(in("fuzz.npy"), tinyattn_tool::npy_bytes(kDescr[t], shape, host.data(), kSize[t]));
}

bool starts_with(const std::string& s, const char* prefix) { return s.compare(0, std::strlen(prefix), prefix) == 0; }

// The file a requested output names, as the tool writes it (a link is written through).
std::string output_key(const std::string& path) {
  std::error_code ec;
  const fs::path canonical = fs::canonical(path, ec);
  FUZZ_REQUIRE(!ec);
  const std::string c = canonical.string(), root = fs::canonical(g_out).string() + "/";
  FUZZ_REQUIRE(starts_with(c, root.c_str()));  // a success writes only under out/
  return c.substr(root.size());
}

// out/ back to `baseline`: new files removed, changed ones rewritten.
void restore_outputs(const Snapshot& baseline, const Snapshot& now) {
  if (now == baseline) return;
  for (const auto& [name, entry] : now)
    if (baseline.count(name) == 0) FUZZ_REQUIRE(std::remove(out(name).c_str()) == 0);
  for (const auto& [name, entry] : baseline) {
    const auto it = now.find(name);
    if (it != now.end() && it->second == entry) continue;
    FUZZ_REQUIRE(entry.kind == 'f');  // the tool replaces files, never folders or links
    write_text(out(name), entry.content);
  }
  FUZZ_REQUIRE(snapshot_of(g_out) == baseline);
}

int lowest_free_fd() {
  const int fd = open("/dev/null", O_RDONLY);
  FUZZ_REQUIRE(fd >= 0);
  close(fd);
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool ready = (setup(), true);
  static const Snapshot baseline = snapshot_of(g_out);
  static std::FILE* const devnull = std::fopen("/dev/null", "w");
  (void)ready;
  FUZZ_REQUIRE(devnull != nullptr);

  Bytes b(data, size);
  std::vector<std::string> args = {"tinyattn"};
  std::vector<std::string> outputs;  // the output options' values
  const uint8_t command = b.u8();
  switch (command % 16) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8: case 9:
      args.push_back("run");
      run_command(b, &args);
      options(b, run_options(), &args);
      break;
    case 10: case 11: case 12:
      args.insert(args.end(), {"plan", "--dk", "4", "--qparams", pools().qparams[b.u8() % 3]});
      options(b, plan_options(), &args);
      break;
    case 13: {
      // The self-test's own options (its checks are tests/selftest's business).
      args.push_back("selftest");
      const std::vector<OptionSpec> list = {{"--port", Kind::kPlain, port_names()},
                                            {"--format", Kind::kPlain, {"unity", "table", "both", "xml"}}};
      options(b, list, &args);
      break;
    }
    case 14: {
      // demo: only its command line, always with an --svg the tool must
      // refuse (a good one runs the notebook, 0.15 s under ASan, with no
      // input to fuzz: ctest's tool_demo runs it; without --svg it would
      // write into the current folder).
      args.insert(args.end(), {"demo", "--svg"});
      const uint8_t flags = b.u8();
      static const std::vector<std::string> refused = {"", out("folder.npy"), out("missing/y.svg"), out("dangling.npy"),
                                                       "/dev/null", in("q2.npy") + "/x.svg", g_out + "/"};
      args.push_back(refused[b.u8() % refused.size()]);
      if (flags & 1) args.push_back(flags & 2 ? "--color" : "--no-color");
      if (flags & 4) args.insert(args.end(), {"--svg", refused[flags % refused.size()]});
      break;
    }
    default:
      if (command & 32) {  // decode: a sequence through a KV cache
        const Pools& p = pools();
        static const char* const sets[][3] = {
            {"q2.npy", "k2.npy", "v2.npy"}, {"q3.npy", "k3.npy", "v3.npy"}, {"q2h.npy", "k2h.npy", "v2h.npy"}};
        const auto& set = sets[b.u8() % 3];
        args.insert(args.end(), {"decode", "--q", in(set[0]), "--k", in(set[1]), "--v", in(set[2]), "--out",
                                 p.outputs[b.u8() % 8]});
        options(b, decode_options(), &args);
        break;
      }
      if (command & 64) {  // explain: prints a route, writes nothing
        args.insert(args.end(), {"explain", "--dims", b.u8() & 1 ? "16,16,32,32" : "2,3,4"});
        options(b, explain_options(), &args);
        break;
      }
      args.push_back(command & 16 ? "--help" : "frobnicate");
      break;
  }
  write_fuzz_file(b);
  // explain writes no file (its --weights is a flag).
  for (size_t i = 1; args[1] != "explain" && i + 1 < args.size(); ++i)
    if (args[i] == "--out" || args[i] == "--weights" || args[i] == "--scores" || args[i] == "--present-k" ||
        args[i] == "--present-v" || args[i] == "--svg")
      outputs.push_back(args[i + 1]);

  // TINYATTN_TOOL_FUZZ_ECHO=1 prints each command line and its outcome, to see what an input runs.
  static const bool echo = std::getenv("TINYATTN_TOOL_FUZZ_ECHO") != nullptr;
  if (echo) {
    for (const std::string& a : args) std::fprintf(stderr, "'%s' ", a.c_str());
    std::fprintf(stderr, "\n");
  }
  const std::string inputs_before = inputs_state(args);
  const int free_fd = lowest_free_fd();
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(&a[0]);
  argv.push_back(nullptr);
  char* err_text = nullptr;
  size_t err_size = 0;
  std::FILE* err = open_memstream(&err_text, &err_size);
  FUZZ_REQUIRE(err != nullptr);
  const int rc = tinyattn_tool::tool_main(static_cast<int>(args.size()), argv.data(), devnull, err);
  std::fclose(err);
  const std::string message(err_text, err_size);
  std::free(err_text);
  if (echo) std::fprintf(stderr, "-> exit %d %s\n", rc, message.substr(0, message.find('\n')).c_str());

  FUZZ_REQUIRE(rc == 0 || rc == 1 || rc == 2);
  FUZZ_REQUIRE(lowest_free_fd() == free_fd);
  const bool help = args[1] == "--help";
  if (rc == 0) {
    FUZZ_REQUIRE(message.empty());
  } else {
    // One error line, then for a usage error at most the hint.
    FUZZ_REQUIRE(starts_with(message, "tinyattn: error: "));
    const size_t first = message.find('\n');
    FUZZ_REQUIRE(first != std::string::npos);
    FUZZ_REQUIRE(message.find("tinyattn: error:", 1) == std::string::npos);
    FUZZ_REQUIRE(first + 1 == message.size() ||
                 (rc == 2 && message.compare(first + 1, std::string::npos, "(run 'tinyattn --help' for usage)\n") == 0));
  }
  FUZZ_REQUIRE(inputs_state(args) == inputs_before);
  const Snapshot after = snapshot_of(g_out);
  FUZZ_REQUIRE(!has_temporary(after));
  if (rc != 0 || help) {
    FUZZ_REQUIRE(after == baseline);
  } else {
    // No option was given an empty value (never "absent").
    for (size_t i = 2; i < args.size(); ++i) FUZZ_REQUIRE(!args[i].empty());
    // Every requested output written, well formed, each its own file and
    // none an input of the command; nothing else touched.
    std::vector<std::string> written;
    for (const std::string& o : outputs) {
      written.push_back(output_key(o));
      const auto it = after.find(written.back());
      FUZZ_REQUIRE(it != after.end() && it->second.kind == 'f');
      const std::string& bytes = it->second.content;
      if (args[1] == "run" || args[1] == "decode") {
        // The reader has no uint16 (--dtype i8's Q0.15 weights): read those as float16, the same size.
        std::string npy = bytes;
        const size_t u2 = npy.find("'descr': '<u2'");
        if (u2 != std::string::npos && u2 < 128) npy.replace(u2 + 10, 3, "<f2");
        tinyattn_tool::Array a;
        std::string why;
        FUZZ_REQUIRE(tinyattn_tool::parse_npy(reinterpret_cast<const uint8_t*>(npy.data()), npy.size(), &a, &why));
        FUZZ_REQUIRE(a.shape.size() >= 2 && a.shape.size() <= 4);
      } else if (args[1] == "plan") {
        FUZZ_REQUIRE(starts_with(bytes, "/* tinyattn int8 plan: ") || starts_with(bytes, "/* tinyattn int16 plan: "));
      } else {
        FUZZ_REQUIRE(false);  // demo's --svg here is always one the tool must refuse
      }
    }
    for (size_t i = 0; i < written.size(); ++i)
      for (size_t j = 0; j < i; ++j) FUZZ_REQUIRE(written[i] != written[j]);
    for (size_t i = 1; i + 1 < args.size(); ++i) {
      std::error_code ec;
      const fs::path input = fs::canonical(args[i + 1], ec);
      if (!is_input_flag(args[i]) || ec) continue;
      for (const std::string& o : outputs) FUZZ_REQUIRE(fs::canonical(o) != input);
    }
    for (const auto& [name, entry] : after) {
      bool requested = false;
      for (const std::string& w : written) requested = requested || w == name;
      const auto before = baseline.find(name);
      FUZZ_REQUIRE(requested || (before != baseline.end() && before->second == entry));
    }
    for (const auto& [name, entry] : baseline) FUZZ_REQUIRE(after.count(name) == 1);
  }
  restore_outputs(baseline, after);
  return 0;
}
