// Host-side sparse matrix formats: COO (triplets), CSR (row-compressed), CSC
// (column-compressed). Plain value types holding std::vectors; the device counterparts live in
// device_matrix.hpp and the raw-pointer views in views.hpp.
#pragma once

#include <apiary/sparse/index.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace apiary::sparse {

// Coordinate format: entry k is (row_indices[k], col_indices[k], values[k]), 0-based. Entries
// may be in any order; duplicates are kept (conversions keep them too).
template <class T>
struct Coo {
  index_t rows = 0;
  index_t cols = 0;
  std::vector<index_t> row_indices;
  std::vector<index_t> col_indices;
  std::vector<T> values;

  std::size_t nnz() const { return values.size(); }
};

// Compressed sparse row: the entries of row r are [row_offsets[r], row_offsets[r + 1]).
template <class T>
struct Csr {
  index_t rows = 0;
  index_t cols = 0;
  std::vector<index_t> row_offsets{0};  // rows + 1 entries
  std::vector<index_t> col_indices;
  std::vector<T> values;

  std::size_t nnz() const { return values.size(); }
};

// Compressed sparse column: the entries of column c are [col_offsets[c], col_offsets[c + 1]).
template <class T>
struct Csc {
  index_t rows = 0;
  index_t cols = 0;
  std::vector<index_t> col_offsets{0};  // cols + 1 entries
  std::vector<index_t> row_indices;
  std::vector<T> values;

  std::size_t nnz() const { return values.size(); }
};

// Structural checks (sizes, monotone offsets, indices in range). Throw apiary::InputError
// naming `what` and the first offending position.
template <class T> void validate(const Coo<T>& m, const std::string& what = "COO matrix");
template <class T> void validate(const Csr<T>& m, const std::string& what = "CSR matrix");
template <class T> void validate(const Csc<T>& m, const std::string& what = "CSC matrix");

}  // namespace apiary::sparse
