#include "npy.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tinyattn/shape.h"

namespace tinyattn_tool {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "float32";
    case DType::kF16: return "float16";
    case DType::kI8: return "int8";
    case DType::kBool: return "bool";
    case DType::kU8: return "uint8";
    case DType::kI16: return "int16";
  }
  return "?";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kF16:
    case DType::kI16: return 2;
    default: return 1;
  }
}

size_t Array::count() const {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  return n;
}

std::string Array::shape_text() const {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu, bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf / NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal half: normalise
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while (!(mant & 0x400u));
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::vector<float> Array::to_f32() const {
  std::vector<float> out(count());
  if (dtype == DType::kF32) {
    for (size_t i = 0; i < out.size(); ++i) {
      uint32_t u = static_cast<uint32_t>(data[4 * i]) | static_cast<uint32_t>(data[4 * i + 1]) << 8 |
                   static_cast<uint32_t>(data[4 * i + 2]) << 16 | static_cast<uint32_t>(data[4 * i + 3]) << 24;
      std::memcpy(&out[i], &u, sizeof u);
    }
  } else if (dtype == DType::kF16) {
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = half_to_float(static_cast<uint16_t>(data[2 * i] | data[2 * i + 1] << 8));
  }
  return out;
}

namespace {

// A cursor over the header dict, which is a Python literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(const char* p, size_t n) : p_(p), end_(p + n) {}

  bool parse(std::string* descr, bool* fortran, std::vector<size_t>* shape, std::string* error) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_ws();
    if (!eat('{')) return fail(error, "header is not a dict");
    for (;;) {
      skip_ws();
      if (eat('}')) break;
      std::string key;
      if (!string_literal(&key)) return fail(error, "header dict key is not a string");
      skip_ws();
      if (!eat(':')) return fail(error, "header dict: missing ':'");
      skip_ws();
      if (key == "descr") {
        if (have_descr) return fail(error, "header dict repeats 'descr'");
        if (!string_literal(descr)) return fail(error, "header 'descr' is not a simple type string (structured dtypes are not supported)");
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_fortran) return fail(error, "header dict repeats 'fortran_order'");
        if (word("True")) *fortran = true;
        else if (word("False")) *fortran = false;
        else return fail(error, "header 'fortran_order' is not True or False");
        have_fortran = true;
      } else if (key == "shape") {
        if (have_shape) return fail(error, "header dict repeats 'shape'");
        if (!tuple(shape, error)) return false;
        have_shape = true;
      } else {
        return fail(error, "header dict has an unknown key '" + printable(key) + "'");
      }
      skip_ws();
      if (eat(',')) continue;
      skip_ws();
      if (eat('}')) break;
      return fail(error, "header dict: expected ',' or '}'");
    }
    // NumPy pads with spaces and ends the header with '\n'.
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    if (p_ != end_) return fail(error, "unexpected bytes after the header dict");
    if (!have_descr || !have_fortran || !have_shape)
      return fail(error, "header dict lacks 'descr', 'fortran_order' or 'shape'");
    return true;
  }

 private:
  static bool fail(std::string* error, const std::string& msg) {
    *error = msg;
    return false;
  }
  static std::string printable(const std::string& s) {
    std::string out;
    for (char c : s.substr(0, 32)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return out;
  }
  void skip_ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool eat(char c) {
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool word(const char* w) {
    const size_t n = std::strlen(w);
    if (static_cast<size_t>(end_ - p_) >= n && std::memcmp(p_, w, n) == 0) {
      p_ += n;
      return true;
    }
    return false;
  }
  bool string_literal(std::string* out) {
    if (p_ >= end_ || (*p_ != '\'' && *p_ != '"')) return false;
    const char quote = *p_++;
    out->clear();
    while (p_ < end_ && *p_ != quote) {
      if (*p_ == '\\' || *p_ == '\n' || out->size() > 64) return false;  // no escapes in valid headers
      *out += *p_++;
    }
    return eat(quote);
  }
  bool tuple(std::vector<size_t>* shape, std::string* error) {
    shape->clear();
    if (!eat('(')) return fail(error, "header 'shape' is not a tuple");
    for (;;) {
      skip_ws();
      if (eat(')')) break;
      if (p_ >= end_ || *p_ < '0' || *p_ > '9') return fail(error, "header 'shape' holds something other than a non-negative integer");
      uint64_t v = 0;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
        v = v * 10 + static_cast<uint64_t>(*p_++ - '0');
        if (v > tinyattn::kMaxDim) return fail(error, "shape dimension exceeds the limit of " + std::to_string(tinyattn::kMaxDim));
      }
      if (eat('L')) {}  // Python 2 longs, as old NumPy wrote them
      if (shape->size() >= 8) return fail(error, "shape has too many dimensions");
      shape->push_back(static_cast<size_t>(v));
      skip_ws();
      if (eat(',')) continue;
      skip_ws();
      if (eat(')')) break;
      return fail(error, "header 'shape': expected ',' or ')'");
    }
    return true;
  }

  const char* p_;
  const char* end_;
};

bool dtype_from_descr(const std::string& d, DType* t, std::string* error) {
  if (d == "<f4") *t = DType::kF32;
  else if (d == "<f2") *t = DType::kF16;
  else if (d == "<i2") *t = DType::kI16;
  else if (d == "|i1" || d == "<i1" || d == "i1") *t = DType::kI8;
  else if (d == "|b1" || d == "<b1" || d == "b1") *t = DType::kBool;
  else if (d == "|u1" || d == "<u1" || d == "u1") *t = DType::kU8;
  else if (!d.empty() && d[0] == '>') {
    *error = "big-endian dtype '" + d + "' is not supported (save with dtype.newbyteorder('<'))";
    return false;
  } else {
    *error = "unsupported dtype '" + d + "' (supported: <f4, <f2, <i2, |i1, |b1, |u1)";
    return false;
  }
  return true;
}

const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

// The fixed prefix: magic, version and header length (10 bytes for version
// 1.0, 12 for 2.0 and 3.0). `size` is the bytes at hand, fewer at the end of
// a short file. Sets *offset to where the header dict starts.
bool parse_prefix(const uint8_t* bytes, size_t size, size_t* offset, size_t* header_len, std::string* error) {
  if (size < 10 || std::memcmp(bytes, kMagic, 6) != 0) {
    *error = size < 10 && size >= 6 && std::memcmp(bytes, kMagic, 6) == 0 ? "truncated header" : "not a .npy file (bad magic)";
    return false;
  }
  const unsigned major = bytes[6], minor = bytes[7];
  if (major < 1 || major > 3 || minor != 0) {
    *error = "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor);
    return false;
  }
  if (major == 1) {
    *header_len = bytes[8] | static_cast<size_t>(bytes[9]) << 8;
    *offset = 10;
  } else {
    if (size < 12) {
      *error = "truncated header";
      return false;
    }
    *header_len = bytes[8] | static_cast<size_t>(bytes[9]) << 8 | static_cast<size_t>(bytes[10]) << 16 |
                  static_cast<size_t>(bytes[11]) << 24;
    *offset = 12;
  }
  if (*header_len > kMaxHeaderBytes) {
    *error = "header length " + std::to_string(*header_len) + " exceeds the limit of " + std::to_string(kMaxHeaderBytes);
    return false;
  }
  return true;
}

// The header dict: dtype and shape into *a (no data), and the payload size
// those imply, more than kMaxFileBytes when it is above the limit (the
// product stops growing there, so it cannot overflow).
bool parse_dict(const char* h, size_t header_len, Array* a, size_t* payload, std::string* error) {
  for (size_t i = 0; i < header_len; ++i) {
    const unsigned char c = static_cast<unsigned char>(h[i]);
    // Versions 1 and 2 are latin-1, 3 is UTF-8; a valid dict is plain ASCII either way.
    if (c >= 0x80 || (c < 0x20 && c != '\n' && c != '\t' && c != '\r')) {
      *error = "header contains a non-ASCII or control byte";
      return false;
    }
  }
  std::string descr;
  bool fortran = false;
  std::vector<size_t> shape;
  HeaderParser parser(h, header_len);
  if (!parser.parse(&descr, &fortran, &shape, error)) return false;
  DType t;
  if (!dtype_from_descr(descr, &t, error)) return false;
  if (fortran) {
    *error = "fortran_order True is not supported (save a C-ordered array: np.ascontiguousarray)";
    return false;
  }
  a->dtype = t;
  a->shape = shape;
  a->data.clear();
  for (size_t d : shape)
    if (d == 0) {
      *error = "empty array (shape " + a->shape_text() + ")";
      return false;
    }
  // Each dimension <= 2^16 and at most 8 of them could overflow; stop early.
  size_t bytes = dtype_size(t);
  for (size_t d : shape) {
    if (bytes > kMaxFileBytes) break;
    bytes *= d;
  }
  *payload = bytes;
  return true;
}

// The payload checked against the bytes present after the header.
bool check_payload_size(const Array& a, size_t payload, size_t present, std::string* error) {
  if (payload > present) {
    *error = "truncated data: shape " + a.shape_text() + " " + dtype_name(a.dtype) + " needs " +
             (payload > kMaxFileBytes ? std::string("more than 1 GiB") : std::to_string(payload) + " bytes") +
             ", " + std::to_string(present) + " present";
    return false;
  }
  if (payload < present) {
    *error = std::to_string(present - payload) + " unexpected bytes after the data of shape " + a.shape_text();
    return false;
  }
  if (payload > kMaxFileBytes) {
    *error = "data of shape " + a.shape_text() + " is larger than the 1 GiB limit";
    return false;
  }
  return true;
}

// Up to n bytes from f, fewer only at the end of the file or on an error.
size_t read_up_to(std::FILE* f, uint8_t* dst, size_t n) {
  size_t got = 0;
  while (got < n) {
    const size_t r = std::fread(dst + got, 1, n - got, f);
    if (r == 0) break;
    got += r;
  }
  return got;
}

// Reads a .npy file in three bounded steps: the prefix (12 bytes at most),
// the header dict (its announced length, at most kMaxHeaderBytes), then the
// payload, whose size the header fixes and which a regular file must hold
// exactly before anything is allocated for it. Other files (pipes, devices)
// are read in chunks, so memory grows only with the bytes that arrive.
bool read_npy_stream(std::FILE* f, bool regular, size_t file_size, Array* out, std::string* error) {
  uint8_t prefix[12];
  size_t got = read_up_to(f, prefix, 10);
  size_t offset = 0, header_len = 0;
  if (got == 10 && std::memcmp(prefix, kMagic, 6) == 0 && prefix[6] >= 2 && prefix[6] <= 3)
    got += read_up_to(f, prefix + 10, 2);
  if (!parse_prefix(prefix, got, &offset, &header_len, error)) return false;
  std::vector<char> header(header_len);
  const size_t header_got = read_up_to(f, reinterpret_cast<uint8_t*>(header.data()), header_len);
  if (header_got < header_len) {
    *error = "truncated header (" + std::to_string(header_len) + " bytes announced, " + std::to_string(header_got) +
             " present)";
    return false;
  }
  Array a;
  size_t payload = 0;
  if (!parse_dict(header.data(), header_len, &a, &payload, error)) return false;
  if (regular) {
    const size_t start = offset + header_len;
    if (!check_payload_size(a, payload, file_size > start ? file_size - start : 0, error)) return false;
    a.data.resize(payload);
    const size_t data_got = read_up_to(f, a.data.data(), payload);
    // The file changed size since it was measured: report what was read.
    if (data_got < payload) return check_payload_size(a, payload, data_got, error);
    if (std::fgetc(f) != EOF) {
      *error = "unexpected bytes after the data of shape " + a.shape_text();
      return false;
    }
  } else {
    if (payload > kMaxFileBytes) {
      *error = "data of shape " + a.shape_text() + " is larger than the 1 GiB limit";
      return false;
    }
    constexpr size_t kChunk = 65536;
    while (a.data.size() < payload) {
      const size_t before = a.data.size(), want = payload - before < kChunk ? payload - before : kChunk;
      a.data.resize(before + want);
      const size_t r = read_up_to(f, a.data.data() + before, want);
      a.data.resize(before + r);
      if (r < want) break;
    }
    if (a.data.size() < payload) return check_payload_size(a, payload, a.data.size(), error);
    if (std::fgetc(f) != EOF) {
      *error = "unexpected bytes after the data of shape " + a.shape_text();
      return false;
    }
  }
  if (std::ferror(f)) {
    *error = "read error";
    return false;
  }
  *out = std::move(a);
  return true;
}

}  // namespace

bool parse_npy(const uint8_t* bytes, size_t size, Array* out, std::string* error) {
  size_t offset = 0, header_len = 0;
  if (!parse_prefix(bytes, size, &offset, &header_len, error)) return false;
  if (header_len > size - offset) {
    *error = "truncated header (" + std::to_string(header_len) + " bytes announced, " +
             std::to_string(size - offset) + " present)";
    return false;
  }
  Array a;
  size_t payload = 0;
  if (!parse_dict(reinterpret_cast<const char*>(bytes + offset), header_len, &a, &payload, error)) return false;
  if (!check_payload_size(a, payload, size - offset - header_len, error)) return false;
  a.data.assign(bytes + offset + header_len, bytes + size);
  *out = std::move(a);
  return true;
}

bool read_npy(const std::string& path, Array* out, std::string* error) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0) {
    *error = path + ": cannot stat: " + std::strerror(errno);
    std::fclose(f);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    std::fclose(f);
    *error = path + ": is a directory";
    return false;
  }
  std::string why;
  const bool ok = read_npy_stream(f, S_ISREG(st.st_mode), static_cast<size_t>(st.st_size), out, &why);
  std::fclose(f);
  if (!ok) *error = path + ": " + why;
  return ok;
}

std::vector<uint8_t> npy_bytes(const char* descr, const std::vector<size_t>& shape, const void* data, size_t elem_size) {
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (";
  size_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
    n *= shape[i];
  }
  if (shape.size() == 1) dict.resize(dict.size() - 1);
  dict += "), }";
  // Pad so the data starts on a 64-byte boundary, ending the header with '\n'.
  size_t total = 10 + dict.size() + 1;
  const size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::vector<uint8_t> out(10 + dict.size() + elem_size * n);
  const uint8_t head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<uint8_t>(dict.size() & 0xFF),
                            static_cast<uint8_t>(dict.size() >> 8)};
  std::memcpy(out.data(), head, sizeof head);
  std::memcpy(out.data() + 10, dict.data(), dict.size());
  // Element by element, least significant byte first: little-endian whatever the host.
  uint8_t* p = out.data() + 10 + dict.size();
  const uint8_t* src = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i, src += elem_size) {
    uint32_t u = 0;
    if (elem_size == 4) {
      std::memcpy(&u, src, 4);
    } else if (elem_size == 2) {
      uint16_t h;
      std::memcpy(&h, src, 2);
      u = h;
    } else {
      u = *src;
    }
    for (size_t b = 0; b < elem_size; ++b) *p++ = static_cast<uint8_t>(u >> (8 * b));
  }
  return out;
}

std::vector<uint8_t> npy_bytes_f32(const std::vector<size_t>& shape, const float* data) {
  return npy_bytes("<f4", shape, data, 4);
}

}  // namespace tinyattn_tool
