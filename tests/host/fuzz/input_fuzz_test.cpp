// Robustness of every parser of user files: thousands of mutants of valid inputs (bytes
// flipped, ranges cut or repeated, numbers swapped for limits, files cut short) must each be
// accepted or rejected with apiary::InputError naming the input, never crash, hang, throw
// anything else or allocate what the file cannot hold. What is accepted must also hold up:
// Matrix Market entries lie inside the matrix and survive a write and a re-read, a synthetic
// tree can be planned, a runtime config passes its own checks, a trace re-exports exactly.
// The sanitizer preset (asan) runs this test too, where a stray read or an overflow fails it.
#include "mutator.hpp"
#include "trace_fixtures.hpp"

#include <apiary/config.hpp>
#include <apiary/error.hpp>
#include <apiary/sparse/conversions.hpp>
#include <apiary/sparse/matrix_market.hpp>
#include <apiary/synthetic/model.hpp>
#include <apiary/synthetic/spec.hpp>
#include <apiary/trace_check.hpp>
#include <apiary/trace_export.hpp>
#include <apiary/trace_summary.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <sstream>
#include <typeinfo>
#include <vector>

namespace fs = std::filesystem;
namespace sparse = apiary::sparse;
namespace synthetic = apiary::synthetic;
using apiary::fuzz::escaped;

namespace {

constexpr double slowest_input_seconds = 5.0;  // inputs are a few KB: anything slower is a hang

struct Tally {
  std::size_t accepted = 0;
  std::size_t rejected = 0;
};

// Feeds mutants of every seed input to `parse`, which throws on rejection and checks what it
// accepts. Fails on the first mutant that ends any other way, printing how to replay it.
void fuzz(const std::string& parser, const std::string& source, const std::vector<std::string>& seeds,
          std::size_t base_mutants, const std::function<void(const std::string&)>& parse) {
  const std::uint64_t seed = apiary::fuzz::run_seed();
  apiary::fuzz::Mutator mutator(seed);
  const std::size_t mutants = apiary::fuzz::mutants_per_input(base_mutants);
  Tally tally;
  for (std::size_t s = 0; s < seeds.size(); ++s) {
    for (std::size_t m = 0; m < mutants; ++m) {
      const std::string input = m == 0 ? seeds[s] : mutator.mutate(seeds[s]);
      std::string problem;
      const auto start = std::chrono::steady_clock::now();
      try {
        parse(input);
        ++tally.accepted;
      } catch (const apiary::InputError& e) {
        ++tally.rejected;
        if (std::strncmp(e.what(), source.c_str(), source.size()) != 0)
          problem = std::string("the error does not name the input \"") + source + "\": " + e.what();
      } catch (const std::exception& e) {
        problem = std::string("threw ") + typeid(e).name() + " instead of apiary::InputError: " + e.what();
      } catch (...) {
        // A failed REQUIRE on an accepted input (Catch reports which one above) or a foreign throw.
        problem = "a check of the accepted input failed, or it threw something that is not a std::exception";
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (problem.empty() && seconds > slowest_input_seconds)
        problem = "took " + std::to_string(seconds) + " s";
      if (!problem.empty()) {
        FAIL(parser << ", seed input " << s << ", mutant " << m << " (replay: APIARY_FUZZ_SEED=" << seed
                    << "): " << problem << "\n--- input ---\n" << escaped(input) << "\n--- end ---");
      }
    }
  }
  std::printf("%s: %zu mutants accepted, %zu rejected (APIARY_FUZZ_SEED=%llu)\n", parser.c_str(), tally.accepted,
              tally.rejected, static_cast<unsigned long long>(seed));
  // The unmutated seeds are valid: a parser that rejects everything would pass the loop above.
  CHECK(tally.accepted >= seeds.size());
  CHECK(tally.rejected > 0);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// --- Matrix Market -------------------------------------------------------------------------

sparse::Coo<double> small_coo(bool lower_only, bool integral) {
  sparse::Coo<double> coo;
  coo.rows = coo.cols = 5;
  const std::vector<std::array<double, 3>> entries = {
      {0, 0, 4}, {1, 0, -1.5e-3}, {2, 1, 0.0}, {3, 3, 2.5e10}, {4, 2, -7}, {1, 3, 1e-300}, {4, 4, 1}};
  for (const auto& [i, j, v] : entries) {
    if (lower_only && j > i) continue;
    coo.row_indices.push_back(static_cast<sparse::index_t>(i));
    coo.col_indices.push_back(static_cast<sparse::index_t>(j));
    coo.values.push_back(integral ? std::round(v) : v);
  }
  return coo;
}

std::vector<std::string> matrix_market_seeds() {
  std::vector<std::string> seeds;
  seeds.push_back(sparse::format_matrix_market(small_coo(false, false), {sparse::MmField::real, sparse::MmSymmetry::general, {"a comment", ""}}));
  seeds.push_back(sparse::format_matrix_market(small_coo(true, true), {sparse::MmField::integer, sparse::MmSymmetry::symmetric, {}}));
  seeds.push_back(sparse::format_matrix_market(small_coo(false, false), {sparse::MmField::pattern, sparse::MmSymmetry::general, {}}));
  sparse::Coo<double> strict_lower = sparse::lower_triangle(small_coo(true, false), /*keep_diagonal=*/false);
  seeds.push_back(sparse::format_matrix_market(strict_lower, {sparse::MmField::real, sparse::MmSymmetry::skew_symmetric, {}}));
  // By hand: mixed case, CRLF line ends, blank and comment lines between entries, signs.
  seeds.push_back("%%MatrixMarket Matrix Coordinate Real General\r\n% made by hand\r\n\r\n3 4 4\r\n1 1 +1.0\r\n"
                  "% between entries\r\n\r\n2 4 -2e-5\r\n3 2 3.25\t\r\n3 3 0\r\n");
  return seeds;
}

bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void check_accepted_matrix(const sparse::MatrixMarket& mm) {
  const auto& e = mm.entries;
  REQUIRE(e.row_indices.size() == e.nnz());
  REQUIRE(e.col_indices.size() == e.nnz());
  for (std::size_t k = 0; k < e.nnz(); ++k) {
    REQUIRE(e.row_indices[k] >= 0);
    REQUIRE(e.row_indices[k] < e.rows);
    REQUIRE(e.col_indices[k] >= 0);
    REQUIRE(e.col_indices[k] < e.cols);
  }
  // Dimensions the file may declare legitimately (2^31-1 rows for one entry) but whose row
  // offsets would take gigabytes: converted only while small.
  if (e.rows > (1 << 20) || e.cols > (1 << 20)) return;
  const auto full = sparse::expand_symmetry(mm);
  const auto csr = sparse::coo_to_csr(full);
  REQUIRE(csr.row_offsets.size() == static_cast<std::size_t>(csr.rows) + 1);
  REQUIRE(static_cast<std::size_t>(csr.row_offsets.back()) == full.nnz());
  if (mm.symmetry != sparse::MmSymmetry::general) return;  // the writer wants one triangle
  const auto again = sparse::parse_matrix_market(sparse::format_matrix_market(e, {mm.field, mm.symmetry, {}}), "rewritten");
  REQUIRE(again.entries.rows == e.rows);
  REQUIRE(again.entries.cols == e.cols);
  REQUIRE(again.entries.row_indices == e.row_indices);
  REQUIRE(again.entries.col_indices == e.col_indices);
  for (std::size_t k = 0; k < e.nnz(); ++k) REQUIRE(same_value(again.entries.values[k], e.values[k]));
}

// --- synthetic trees -----------------------------------------------------------------------

std::vector<std::string> synthetic_seeds() {
  std::vector<std::string> seeds;
  for (const auto& entry : fs::directory_iterator(APIARY_SYNTHETIC_CONFIG_DIR))
    if (entry.path().extension() == ".json") seeds.push_back(read_file(entry.path()));
  return seeds;
}

void check_accepted_spec(const synthetic::Spec& spec) {
  // Enumerating a tree costs its size; planning the mutants that stay small keeps this test
  // fast while every accepted spec still has its expectation computed.
  const auto expected = synthetic::expected_tasks(spec);
  REQUIRE(expected.size() == spec.types.size());
  const double total = std::accumulate(expected.begin(), expected.end(), 0.0);
  if (!(total <= 2e5)) return;
  const auto plan = synthetic::plan(spec);
  REQUIRE(plan.tasks_per_type.size() == spec.types.size());
  REQUIRE(std::accumulate(plan.tasks_per_type.begin(), plan.tasks_per_type.end(), std::uint64_t{0}) == plan.total_tasks);
  REQUIRE(!synthetic::format_plan(spec, plan).empty());
  synthetic::check_capacities(spec, plan);  // may reject a capacity: an InputError naming it
}

// --- runtime configs -----------------------------------------------------------------------

const char* const runtime_config_seed = R"({
  "scheduler": "device_controller_wave",
  "queue_capacity": 65536,
  "queue_capacities": {"relax": 1048576, "emit": 4096},
  "waiting_storage_capacity": 8192,
  "dependency_capacity": 8192,
  "host_input_capacity": 1024,
  "watchdog_seconds": 2.5,
  "trace": true,
  "trace_capacity": 100000,
  "trace_event_capacity": 50000,
  "handoff": false,
  "megakernel": {"block_threads": 256, "blocks_per_sm": 2},
  "device_controller": {"pending_launches": 4096, "oversubscription": 1.5, "linger_us": 20},
  "timesliced_graph": {"rounds_per_graph": 8, "graphs_in_flight": 2},
  "device": 0
})";

// --- traces --------------------------------------------------------------------------------

std::vector<std::string> trace_seeds() {
  std::vector<std::string> seeds;
  for (const auto& builder : {apiary::test::phased_trace(), apiary::test::cyclic_trace(), apiary::test::dependency_trace()}) {
    std::ostringstream out;
    apiary::write_chrome_trace(builder.trace, out);
    seeds.push_back(out.str());
  }
  return seeds;
}

std::string exported(const apiary::Trace& trace) {
  std::ostringstream out;
  apiary::write_chrome_trace(trace, out);
  return out.str();
}

// What apiary-trace does with a file: check, summarize, export; a re-read restores it exactly.
void check_accepted_trace(const apiary::Trace& trace) {
  const auto result = apiary::check_trace(trace);
  REQUIRE(!apiary::format(result).empty());
  REQUIRE(!apiary::format(trace, apiary::summarize_trace(trace)).empty());
  std::ostringstream csv;
  apiary::write_trace_csv(trace, csv);
  const std::string once = exported(trace);
  std::istringstream in(once);
  REQUIRE(exported(apiary::read_chrome_trace(in, "re-exported")) == once);
}

}  // namespace

TEST_CASE("Matrix Market mutants are read or rejected with file and line", "[fuzz][sparse]") {
  fuzz("Matrix Market reader", "mutant.mtx", matrix_market_seeds(), 3000, [](const std::string& text) {
    check_accepted_matrix(sparse::parse_matrix_market(text, "mutant.mtx"));
  });
}

TEST_CASE("Synthetic tree config mutants are read or rejected with file and key", "[fuzz][synthetic]") {
  fuzz("synthetic spec", "mutant.json", synthetic_seeds(), 1500, [](const std::string& text) {
    check_accepted_spec(synthetic::parse_spec(text, "mutant.json"));
  });
}

TEST_CASE("Runtime config mutants are read or rejected with file and key", "[fuzz][runtime]") {
  fuzz("runtime config", "mutant-config.json", {runtime_config_seed}, 6000, [](const std::string& text) {
    const auto config = apiary::Config::parse(text, "mutant-config.json");
    config.device_controller.check("mutant-config.json");
    config.timesliced_graph.check("mutant-config.json");
  });
}

TEST_CASE("Trace file mutants are read or rejected with file and JSON path", "[fuzz][trace]") {
  fuzz("trace reader", "mutant-trace.json", trace_seeds(), 1500, [](const std::string& text) {
    std::istringstream in(text);
    check_accepted_trace(apiary::read_chrome_trace(in, "mutant-trace.json"));
  });
}
