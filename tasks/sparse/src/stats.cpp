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

}  // namespace apiary::sparse
