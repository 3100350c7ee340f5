// Strict reading of the numbers users type (command-line options): the whole text must be the
// number and it must lie in range, or an InputError names the option, the text and the range.
// atoi/stoul accept "5x" as 5, "abc" as 0 (or throw std::invalid_argument past the error
// handling) and wrap "-1" to 4294967295; these do none of that.
#pragma once

#include <apiary/error.hpp>

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>

namespace apiary {

// A finite decimal number in [lo, hi] ("0.5", "1e-8", "1000").
inline double parse_real(std::string_view text, const std::string& what, double lo, double hi) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) ||
      !(value >= lo && value <= hi))
    throw InputError(what, "'" + std::string(text) + "' is not a number in [" + std::to_string(lo) + ", " +
                               std::to_string(hi) + "]");
  return value;
}

// A whole number in [lo, hi], written as an integer ("20000") or in exponent form ("1e7").
template <class T>
T parse_integer(std::string_view text, const std::string& what, T lo = std::numeric_limits<T>::min(),
                T hi = std::numeric_limits<T>::max()) {
  const auto fail = [&]() -> T {
    throw InputError(what, "'" + std::string(text) + "' is not an integer in [" + std::to_string(lo) + ", " +
                               std::to_string(hi) + "]");
  };
  const char* const first = text.data();
  const char* const last = first + text.size();
  T value{};
  if (const auto [end, ec] = std::from_chars(first, last, value); ec == std::errc{} && end == last)
    return value >= lo && value <= hi ? value : fail();
  double real = 0;
  const auto [end, ec] = std::from_chars(first, last, real);
  // 2^digits bounds T exactly; static_cast<double>(hi) may round up past what T holds.
  const double beyond = std::ldexp(1.0, std::numeric_limits<T>::digits);
  if (text.empty() || ec != std::errc{} || end != last || real != std::floor(real) || !(real < beyond) ||
      !(real >= static_cast<double>(lo) && real <= static_cast<double>(hi)))
    return fail();
  return static_cast<T>(real);
}

}  // namespace apiary
