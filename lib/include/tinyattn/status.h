// Status codes: every public entry point returns one. On any status other
// than kOk the outputs are left untouched (all checks happen before the first
// write), so a caller can retry or fall back without clearing buffers.
#pragma once

#include <cstdint>

namespace tinyattn {

enum class Status : uint8_t {
  kOk = 0,
  kNullPointer,         // a required pointer (input, output, workspace) is null
  kBadDimension,        // a dimension is zero or larger than kMaxDim
  kBadHeads,            // hq or hkv is zero, or hq % hkv != 0
  kBadScale,            // the softmax scale is NaN or infinite, or a softcap is not > 0 and finite
  kBadMask,             // kv_len > M, an empty window (left + right < 0), both keep forms set
  kWorkspaceTooSmall,   // workspace bytes < the size the *_workspace_bytes function returns
  kMisaligned,          // a tensor pointer is not aligned to its element type
  kAliasing,            // an output overlaps an input or another output
  kPortUnavailable,     // the requested port is not compiled into this build
  kBadQuantization,     // int8 quantization parameters out of range (scale, zero point, multiplier)
  kUnsupported,         // a valid request this build cannot serve (e.g. dtype not compiled in)
  kCacheFull,           // KvCache::append past the capacity of a cache that is not a ring
};

inline constexpr int kStatusCount = 13;

// Stable, human-readable name ("ok", "null_pointer", ...), never null.
const char* to_string(Status s);

constexpr bool ok(Status s) { return s == Status::kOk; }

}  // namespace tinyattn
