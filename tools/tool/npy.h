// A strict, bounded .npy reader and a writer (NumPy format 1.0, 2.0, 3.0).
//
// Accepted: little-endian float32 ('<f4'), float16 ('<f2'), int16 ('<i2'),
// int8 ('|i1'), bool ('|b1') and uint8 ('|u1'); C order; up to 8 dimensions, each
// 1..kMaxDim (the tool then takes 2 to 4). Everything else (big-endian,
// Fortran order, other dtypes, a malformed header dict, a truncated or
// overlong payload) is rejected with a one-line message. Nothing is allocated
// for the payload before the header has been validated and the payload size
// checked against the bytes actually present, so a hostile header cannot
// cause a large allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tinyattn_tool {

enum class DType : uint8_t { kF32, kF16, kI8, kBool, kU8, kI16 };

const char* dtype_name(DType t);  // "float32", "float16", "int8", "bool", "uint8", "int16"
size_t dtype_size(DType t);

struct Array {
  DType dtype = DType::kF32;
  std::vector<size_t> shape;
  std::vector<uint8_t> data;  // raw little-endian payload, C order

  size_t count() const;
  std::string shape_text() const;  // "(2, 5, 16)" as NumPy prints it
  // The payload as float32 (float16 converted exactly). Only for kF32 / kF16.
  std::vector<float> to_f32() const;
};

// Caps: a header longer than this is not a .npy file NumPy would write.
inline constexpr size_t kMaxHeaderBytes = 64 * 1024;
// Largest file `read_npy` will load.
inline constexpr size_t kMaxFileBytes = size_t{1} << 30;

// Parses an in-memory .npy file. On failure returns false and sets *error to
// one line (no file name; callers prefix it).
bool parse_npy(const uint8_t* bytes, size_t size, Array* out, std::string* error);

// Reads and parses a file ("<path>: <reason>" on failure) in bounded steps:
// the 10- or 12-byte prefix (magic, version, header length), then the header
// dict (at most kMaxHeaderBytes), and only once both are valid the payload.
// A regular file's size must match the header's shape and dtype before the
// payload is allocated; a pipe or device is read in chunks, so memory grows
// only with the bytes that arrive (a non-.npy stream such as /dev/zero fails
// after its first 10 bytes).
bool read_npy(const std::string& path, Array* out, std::string* error);

// Serialises elements of elem_size bytes (1, 2 or 4; host order in memory)
// as a version 1.0 .npy with the given little-endian descr ('<f4', '<f2',
// '|i1', '<i2', '<u2'), C order.
// (The tool writes them with write_all_or_none, tools/tool/output_files.h.)
std::vector<uint8_t> npy_bytes(const char* descr, const std::vector<size_t>& shape, const void* data, size_t elem_size);
// Serialises float32 data as a version 1.0 .npy (C order, '<f4').
std::vector<uint8_t> npy_bytes_f32(const std::vector<size_t>& shape, const float* data);

float half_to_float(uint16_t h);

}  // namespace tinyattn_tool
