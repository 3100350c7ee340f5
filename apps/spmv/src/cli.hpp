// Command-line options shared by apiary-spmv and apiary-visit.
#pragma once

#include "bench_common.hpp"

#include <apiary/balance/schedule_kind.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace apiary::spmv {

struct Options {
  std::vector<MatrixSource> sources;
  std::vector<std::string> schedules;  // names; "heuristic" allowed in apiary-spmv
  std::vector<std::string> precisions{"fp32", "fp64"};
  std::string json = "-";
  int repeats = 20;
  int large_repeats = 10;  // for matrices with >= 1e7 non-zeros
  std::int64_t max_nnz = -1;
  std::int64_t min_nnz = -1;
  std::optional<std::uint64_t> seed;
  bool baseline = true;
  // apiary-spmv: multi-phase / two-phase / merge-path knobs (0: the Tuning defaults). Multi-phase
  // still lowers them when the matrix would not fill the device (Tuning::fill_device).
  unsigned items_per_thread = 0;
  unsigned iterations = 0;
  // Multi-phase stores split rows itself up to this row length (Tuning::split_row_store_max;
  // 0 switches it off). Unset: the Tuning default.
  std::optional<unsigned> split_row_store_max;
};

// Throws InputError with usage on bad arguments; returns false when --help was given.
bool parse_options(int argc, char** argv, Options& options, const char* program, bool spmv);

}  // namespace apiary::spmv
