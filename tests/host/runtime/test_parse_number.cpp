// Strict number parsing for command-line options (apiary/parse_number.hpp).
#include <apiary/error.hpp>
#include <apiary/parse_number.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

using apiary::InputError;
using apiary::parse_integer;
using apiary::parse_real;

TEST_CASE("parse_integer: the whole text, in range, in integer or exponent form", "[parse_number]") {
  CHECK(parse_integer<int>("42", "--n") == 42);
  CHECK(parse_integer<int>("-7", "--n") == -7);
  CHECK(parse_integer<std::int64_t>("1e7", "--n") == 10'000'000);
  CHECK(parse_integer<std::uint32_t>("4294967295", "--n") == 4294967295u);
  CHECK(parse_integer<std::uint64_t>("18446744073709551615", "--n") == 18446744073709551615ull);
  CHECK(parse_integer<unsigned>("5", "--n", 1, 8) == 5);
  for (const char* bad : {"", " 5", "5 ", "5x", "abc", "1.5", "-1", "4294967296", "1e10", "nan", "inf", "0x10"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_integer<std::uint32_t>(bad, "--n"), InputError);
  }
  // 2^64 as a double equals static_cast<double>(UINT64_MAX): it must not slip through.
  CHECK_THROWS_AS(parse_integer<std::uint64_t>("1.8446744073709551616e19", "--n"), InputError);
  CHECK_THROWS_WITH(parse_integer<unsigned>("9", "--items", 1, 8), Catch::StartsWith("--items: '9'") && Catch::Contains("[1, 8]"));
}

TEST_CASE("parse_real: finite, all of the text, in range", "[parse_number]") {
  CHECK(parse_real("0.5", "--omega", 0, 2) == 0.5);
  CHECK(parse_real("1e-8", "--tol", 0, 1) == 1e-8);
  for (const char* bad : {"", "0.5x", "nan", "inf", "1e999", "3", "-0.1"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_real(bad, "--omega", 0, 2), InputError);
  }
}
