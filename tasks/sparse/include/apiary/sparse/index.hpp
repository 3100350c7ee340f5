// Index types shared by every sparse format. 32-bit row offsets and column indices halve the
// index traffic of SpMV compared to 64-bit ones and match cuSPARSE's CUSPARSE_INDEX_32I; the
// formats therefore hold at most 2^31 - 1 stored entries (checked where matrices are built).
#pragma once

#include <cstdint>
#include <limits>

namespace apiary::sparse {

using index_t = std::int32_t;
inline constexpr std::int64_t max_entries = std::numeric_limits<index_t>::max();

}  // namespace apiary::sparse
