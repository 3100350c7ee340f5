// Row-length statistics: the inputs of the schedule selector (SpMV) and of the multi-phase
// mapping's choice between binary and interpolation search.
#pragma once

#include <apiary/sparse/index.hpp>

#include <cstdint>
#include <vector>

namespace apiary::sparse {

struct RowStats {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  double mean = 0;         // entries per row
  double stddev = 0;       // population standard deviation of the row lengths
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::int64_t empty_rows = 0;
  double max_over_mean() const { return mean > 0 ? static_cast<double>(max) / mean : 0; }
};

RowStats row_stats(const std::vector<index_t>& offsets, index_t cols);

}  // namespace apiary::sparse
