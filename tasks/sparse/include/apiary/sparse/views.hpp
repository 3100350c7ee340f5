// Non-owning views of sparse matrices: raw pointers plus sizes, trivially copyable, usable as
// kernel arguments and on the host. The same view type describes host and device memory; who
// may dereference it depends on where the pointers point.
#pragma once

#include <apiary/platform.hpp>
#include <apiary/sparse/index.hpp>

namespace apiary::sparse {

template <class T>
struct CsrView {
  index_t rows = 0;
  index_t cols = 0;
  index_t nnz = 0;
  const index_t* row_offsets = nullptr;  // rows + 1
  const index_t* col_indices = nullptr;  // nnz
  const T* values = nullptr;             // nnz

  APIARY_HD index_t row_begin(index_t r) const { return row_offsets[r]; }
  APIARY_HD index_t row_end(index_t r) const { return row_offsets[r + 1]; }
  APIARY_HD index_t row_length(index_t r) const { return row_offsets[r + 1] - row_offsets[r]; }
};

template <class T>
struct CscView {
  index_t rows = 0;
  index_t cols = 0;
  index_t nnz = 0;
  const index_t* col_offsets = nullptr;  // cols + 1
  const index_t* row_indices = nullptr;  // nnz
  const T* values = nullptr;             // nnz

  APIARY_HD index_t col_begin(index_t c) const { return col_offsets[c]; }
  APIARY_HD index_t col_end(index_t c) const { return col_offsets[c + 1]; }
};

template <class T>
struct CooView {
  index_t rows = 0;
  index_t cols = 0;
  index_t nnz = 0;
  const index_t* row_indices = nullptr;
  const index_t* col_indices = nullptr;
  const T* values = nullptr;
};

}  // namespace apiary::sparse
