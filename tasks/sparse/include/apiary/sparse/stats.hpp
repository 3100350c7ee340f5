// Row statistics: the inputs of the schedule selector (SpMV) and of the multi-phase mapping's
// choice between binary and interpolation search. Mostly row lengths; column_spread says how
// local a row's reads of x are, which lengths cannot show (a banded and a permuted Laplacian
// have the same row lengths).
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
  // Mean over sampled non-empty rows of (largest - smallest column + 1) / cols: near 0 for
  // banded matrices, near 1 for scattered columns. 1 until column_spread() fills it in.
  double column_spread = 1;
  double max_over_mean() const { return mean > 0 ? static_cast<double>(max) / mean : 0; }
};

RowStats row_stats(const std::vector<index_t>& offsets, index_t cols);
// Row statistics with column_spread measured on up to `samples` evenly spaced rows.
RowStats row_stats(const std::vector<index_t>& offsets, const std::vector<index_t>& col_indices, index_t cols,
                   std::int64_t samples = 4096);

}  // namespace apiary::sparse
