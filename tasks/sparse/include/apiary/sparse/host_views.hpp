// Views of the host containers (for CPU references and host simulations of the schedules).
#pragma once

#include <apiary/sparse/formats.hpp>
#include <apiary/sparse/views.hpp>

namespace apiary::sparse {

template <class T>
CsrView<T> view(const Csr<T>& m) {
  return {m.rows, m.cols, static_cast<index_t>(m.nnz()), m.row_offsets.data(), m.col_indices.data(),
          m.values.data()};
}

template <class T>
CscView<T> view(const Csc<T>& m) {
  return {m.rows, m.cols, static_cast<index_t>(m.nnz()), m.col_offsets.data(), m.row_indices.data(),
          m.values.data()};
}

template <class T>
CooView<T> view(const Coo<T>& m) {
  return {m.rows, m.cols, static_cast<index_t>(m.nnz()), m.row_indices.data(), m.col_indices.data(),
          m.values.data()};
}

}  // namespace apiary::sparse
