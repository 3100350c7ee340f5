#include <apiary/sparse/stats.hpp>

#include <algorithm>
#include <cmath>

namespace apiary::sparse {

RowStats row_stats(const std::vector<index_t>& offsets, index_t cols) {
  RowStats s;
  s.rows = offsets.empty() ? 0 : static_cast<std::int64_t>(offsets.size()) - 1;
  s.cols = cols;
  s.nnz = offsets.empty() ? 0 : offsets.back();
  if (s.rows == 0) return s;
  s.mean = static_cast<double>(s.nnz) / static_cast<double>(s.rows);
  s.min = offsets[1] - offsets[0];
  double sq = 0;
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const std::int64_t len = offsets[r + 1] - offsets[r];
    s.min = std::min(s.min, len);
    s.max = std::max(s.max, len);
    s.empty_rows += len == 0;
    const double d = static_cast<double>(len) - s.mean;
    sq += d * d;
  }
  s.stddev = std::sqrt(sq / static_cast<double>(s.rows));
  return s;
}

RowStats row_stats(const std::vector<index_t>& offsets, const std::vector<index_t>& col_indices, index_t cols,
                   std::int64_t samples) {
  RowStats s = row_stats(offsets, cols);
  if (s.rows == 0 || s.nnz == 0 || cols <= 0 || samples <= 0) return s;
  const std::int64_t step = std::max<std::int64_t>(1, s.rows / samples);
  double spread = 0;
  std::int64_t counted = 0;
  for (std::int64_t r = 0; r < s.rows; r += step) {
    const index_t first = offsets[r], last = offsets[r + 1];
    if (first == last) continue;
    const auto [lo, hi] = std::minmax_element(col_indices.begin() + first, col_indices.begin() + last);
    spread += static_cast<double>(*hi - *lo + 1) / static_cast<double>(cols);
    ++counted;
  }
  if (counted) s.column_spread = spread / static_cast<double>(counted);
  return s;
}

}  // namespace apiary::sparse
