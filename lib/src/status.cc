#include "tinyattn/status.h"

namespace tinyattn {

const char* to_string(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kNullPointer: return "null_pointer";
    case Status::kBadDimension: return "bad_dimension";
    case Status::kBadHeads: return "bad_heads";
    case Status::kBadScale: return "bad_scale";
    case Status::kBadMask: return "bad_mask";
    case Status::kWorkspaceTooSmall: return "workspace_too_small";
    case Status::kMisaligned: return "misaligned";
    case Status::kAliasing: return "aliasing";
    case Status::kPortUnavailable: return "port_unavailable";
    case Status::kBadQuantization: return "bad_quantization";
    case Status::kUnsupported: return "unsupported";
    case Status::kCacheFull: return "cache_full";
  }
  return "unknown_status";
}

}  // namespace tinyattn
