// The part of the C++ standard library tinyattn uses, as the code relies on
// it: compiled (syntax only) on every target, so on hosted targets against
// the real library and on a toolchain without one (RISC-V picolibc) against
// lib/freestanding/include. A difference is a compile error here.
#include <array>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <type_traits>

namespace {

// Fixed-width types and limits.
static_assert(sizeof(std::int8_t) == 1 && sizeof(std::uint16_t) == 2 && sizeof(std::int32_t) == 4 &&
                  sizeof(std::uint64_t) == 8 && sizeof(std::uintptr_t) == sizeof(void*),
              "<cstdint>");
static_assert(std::numeric_limits<int>::max() == INT_MAX && std::numeric_limits<int>::min() == INT_MIN, "int");
static_assert(std::numeric_limits<unsigned>::max() == UINT_MAX, "unsigned");
static_assert(std::numeric_limits<long long>::max() == LLONG_MAX && std::numeric_limits<std::int8_t>::min() == -128,
              "long long, int8_t");
static_assert(std::numeric_limits<char>::is_signed == (static_cast<char>(-1) < 0) &&
                  std::numeric_limits<char>::max() == CHAR_MAX && std::numeric_limits<char>::min() == CHAR_MIN,
              "plain char follows the target's signedness");
static_assert(std::numeric_limits<float>::max() == FLT_MAX && std::numeric_limits<float>::epsilon() == FLT_EPSILON &&
                  std::numeric_limits<float>::min() == FLT_MIN && std::numeric_limits<float>::lowest() == -FLT_MAX,
              "float");
static_assert(std::numeric_limits<double>::max() == DBL_MAX && std::numeric_limits<double>::digits == DBL_MANT_DIG,
              "double");
static_assert(std::numeric_limits<float>::infinity() > FLT_MAX && std::numeric_limits<double>::infinity() > DBL_MAX,
              "infinity");
static_assert(std::numeric_limits<float>::quiet_NaN() != std::numeric_limits<float>::quiet_NaN(), "NaN is unordered");

// std::array: an aggregate with its length at compile time.
constexpr std::array<int, 3> kArray{{1, 2, 3}};
static_assert(std::tuple_size<std::array<float, 7>>::value == 7 && kArray.size() == 3 && kArray[2] == 3 &&
                  sizeof(std::array<float, 7>) == 7 * sizeof(float),
              "<array>");
static_assert(std::is_standard_layout_v<std::array<float, 4>> && std::is_trivially_copyable_v<std::array<float, 4>>,
              "array layout");

// Traits.
static_assert(std::is_same<std::conditional_t<true, int, float>, int>::value &&
                  std::is_same_v<std::conditional_t<false, int, float>, float>,
              "conditional");
static_assert(std::extent_v<int[5]> == 5 && std::extent_v<int[2][3], 1> == 3, "extent");

// optional of a value.
constexpr std::optional<float> kNone = std::nullopt;
constexpr std::optional<float> kSome = 2.5f;
static_assert(!kNone.has_value() && kSome.has_value() && *kSome == 2.5f && kNone.value_or(1.0f) == 1.0f, "<optional>");

// <cmath>: float stays float, double stays double, integers and mixed pairs
// are computed in double.
static_assert(std::is_same_v<decltype(std::fabs(1.0f)), float> && std::is_same_v<decltype(std::exp(1.0)), double>,
              "float and double overloads");
static_assert(std::is_same_v<decltype(std::sqrt(2)), double> && std::is_same_v<decltype(std::fmax(1.0f, 2.0)), double> &&
                  std::is_same_v<decltype(std::pow(2.0f, 3)), double> &&
                  std::is_same_v<decltype(std::fmin(1.0f, 2.0f)), float>,
              "integer and mixed arguments");

int sum(std::initializer_list<int> values) {
  int s = 0;
  for (int v : values) s += v;
  return s;
}

int first_int(int count, ...) {
  std::va_list args;
  va_start(args, count);
  const int v = va_arg(args, int);
  va_end(args);
  return v;
}

}  // namespace

// Referenced so nothing above is unused.
int tinyattn_freestanding_check(float x) {
  char text[8];
  std::memcpy(text, "abc", 4);
  return sum({1, 2, 3}) + first_int(1, 4) + static_cast<int>(std::strlen(text)) +
         (std::isnan(x) ? 1 : 0) + (std::isfinite(x) ? 2 : 0) + (std::signbit(x) ? 4 : 0) +
         static_cast<int>(sizeof(std::max_align_t) + sizeof(std::ptrdiff_t));
}
