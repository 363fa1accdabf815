// The KV cache RAM table of docs/decode.md, from the classes' own constants:
// kv_ram_table DOC fails unless DOC holds exactly this table between its
// markers; kv_ram_table --print writes it.
#include <cstdio>
#include <cstring>
#include <string>

#include "tinyattn/kv_cache.h"

namespace {

using tinyattn::half;
using tinyattn::KvCache;
using tinyattn::KvInt8;

// Bytes as the table shows them: KiB below 1 MiB, else MiB, two decimals.
std::string bytes(size_t b) {
  char out[32];
  if (b < 1024 * 1024)
    std::snprintf(out, sizeof out, "%.2f KiB", static_cast<double>(b) / 1024);
  else
    std::snprintf(out, sizeof out, "%.2f MiB", static_cast<double>(b) / (1024 * 1024));
  return out;
}

// One model: a layer's cache at each storage type (Hq = Hkv: the query heads
// do not change the storage), and all layers.
template <size_t Hkv, size_t D, size_t Context>
std::string row(const char* model, size_t layers) {
  const size_t f32 = KvCache<float, Hkv, Hkv, D, D, Context>::kStorageBytes;
  const size_t f16 = KvCache<half, Hkv, Hkv, D, D, Context>::kStorageBytes;
  const size_t q8h = KvCache<KvInt8<half>, Hkv, Hkv, D, D, Context>::kStorageBytes;
  const size_t q8f = KvCache<KvInt8<float>, Hkv, Hkv, D, D, Context>::kStorageBytes;
  char line[512];
  std::snprintf(line, sizeof line, "| %s | %zu x %zu x %zu | %zu | %s / %s | %s / %s | %s / %s | %s / %s |\n", model, Hkv,
                D, Context, layers, bytes(f32).c_str(), bytes(f32 * layers).c_str(), bytes(f16).c_str(),
                bytes(f16 * layers).c_str(), bytes(q8h).c_str(), bytes(q8h * layers).c_str(), bytes(q8f).c_str(),
                bytes(q8f * layers).c_str());
  return line;
}

std::string table() {
  std::string t =
      "| model | KV heads x head dim x context | layers | fp32: layer / model | fp16 | KvInt8<half> | KvInt8<float> "
      "|\n|---|---|---:|---:|---:|---:|---:|\n";
  t += row<4, 8, 512>("stories260K", 5);
  t += row<6, 48, 256>("stories15M", 6);
  t += row<8, 64, 1024>("stories42M", 8);
  t += row<3, 64, 2048>("SmolLM2-135M", 30);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string t = table();
  if (argc == 2 && std::strcmp(argv[1], "--print") == 0) {
    std::fputs(t.c_str(), stdout);
    return 0;
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: kv_ram_table DOC | --print\n");
    return 2;
  }
  std::FILE* f = std::fopen(argv[1], "rb");
  if (!f) {
    std::fprintf(stderr, "kv_ram_table: cannot read %s\n", argv[1]);
    return 1;
  }
  std::string doc;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) doc.append(buf, n);
  std::fclose(f);
  const std::string open = "<!-- kv-ram-table -->\n", close = "<!-- /kv-ram-table -->";
  const size_t a = doc.find(open), b = doc.find(close);
  if (a == std::string::npos || b == std::string::npos || b < a) {
    std::fprintf(stderr, "kv_ram_table: %s has no table markers\n", argv[1]);
    return 1;
  }
  if (doc.compare(a + open.size(), b - a - open.size(), t) != 0) {
    std::fprintf(stderr, "kv_ram_table: the table in %s is not the classes' (kv_ram_table --print):\n%s", argv[1],
                 t.c_str());
    return 1;
  }
  std::printf("kv_ram_table: %s matches the classes' sizes\n", argv[1]);
  return 0;
}
