// apiary-spmv / apiary-visit command-line parsing: the multi-phase knobs and their errors.
#include "cli.hpp"

#include <apiary/error.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace {
// Parses `args` (program name prepended); rethrows the parser's errors.
apiary::spmv::Options parse(std::vector<std::string> args, bool spmv = true) {
  args.insert(args.begin(), "apiary-spmv");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  apiary::spmv::Options o;
  apiary::spmv::parse_options(static_cast<int>(argv.size()), argv.data(), o, "apiary-spmv", spmv);
  return o;
}

std::string error_of(std::vector<std::string> args, bool spmv = true) {
  try {
    parse(std::move(args), spmv);
  } catch (const apiary::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("spmv cli: multi-phase knobs", "[spmv][cli]") {
  const auto defaults = parse({"--generate", "lap2d:n=10"});
  CHECK(defaults.items_per_thread == 0);  // 0: the Tuning defaults
  CHECK(defaults.iterations == 0);
  const auto set = parse({"--generate", "lap2d:n=10", "--items-per-thread", "11", "--iterations", "3"});
  CHECK(set.items_per_thread == 11);
  CHECK(set.iterations == 3);
}

TEST_CASE("spmv cli: bad knob values name the option and the range", "[spmv][cli]") {
  for (const char* bad : {"0", "33", "-1", "7x", "", "seven"}) {
    const std::string e = error_of({"--generate", "lap2d:n=10", "--items-per-thread", bad});
    INFO(e);
    CHECK(e.find("--items-per-thread") != std::string::npos);
    CHECK(e.find("[1, 32]") != std::string::npos);
  }
  CHECK(error_of({"--generate", "lap2d:n=10", "--iterations", "65"}).find("[1, 64]") != std::string::npos);
  CHECK(error_of({"--generate", "lap2d:n=10", "--iterations"}).find("needs a value") != std::string::npos);
  // apiary-visit has no multi-phase knobs.
  CHECK(error_of({"--generate", "lap2d:n=10", "--items-per-thread", "7"}, false).find("unknown option") != std::string::npos);
}

TEST_CASE("spmv cli: counts are whole numbers, all of the text, in range", "[spmv][cli]") {
  for (const char* bad : {"5x", "abc", "", "1.5", "99999999999"}) {
    INFO(bad);
    CHECK(error_of({"--generate", "lap2d:n=10", "--repeats", bad}).find("--repeats") != std::string::npos);
  }
  CHECK(error_of({"--generate", "lap2d:n=10", "--seed", "-1"}).find("--seed") != std::string::npos);
  CHECK(error_of({"--generate", "lap2d:n=10", "--max-nnz", "1e30"}).find("--max-nnz") != std::string::npos);
  const auto o = parse({"--generate", "lap2d:n=10", "--max-nnz", "1e7", "--seed", "18446744073709551615"});
  CHECK(o.max_nnz == 10'000'000);
  CHECK(o.seed == 18446744073709551615ull);
}
