// Conversions between the host formats. All are O(nnz + rows + cols) counting sorts and keep
// duplicates and explicit zeros; within a row (column) entries keep their input order, so
// CSR -> COO -> CSR is the identity. Instantiated for float and double (conversions.cpp).
#pragma once

#include <apiary/sparse/formats.hpp>

namespace apiary::sparse {

template <class T> Csr<T> coo_to_csr(const Coo<T>& coo);
template <class T> Csc<T> coo_to_csc(const Coo<T>& coo);
template <class T> Coo<T> csr_to_coo(const Csr<T>& csr);
template <class T> Coo<T> csc_to_coo(const Csc<T>& csc);
template <class T> Csc<T> csr_to_csc(const Csr<T>& csr);
template <class T> Csr<T> csc_to_csr(const Csc<T>& csc);

// The transpose of a CSR matrix, as CSR (same arrays as csr_to_csc, reinterpreted).
template <class T> Csr<T> transpose(const Csr<T>& csr);

// Sorts the column indices inside every row (stable for equal columns).
template <class T> void sort_rows(Csr<T>& csr);

// Converts the value type (e.g. the double matrices of the generators to float for fp32 SpMV).
template <class To, class From> Csr<To> cast_values(const Csr<From>& csr);

}  // namespace apiary::sparse
