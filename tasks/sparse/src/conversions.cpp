#include <apiary/sparse/conversions.hpp>

#include <apiary/error.hpp>

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

namespace apiary::sparse {
namespace {

// Counting sort of entries by a key (row or column): returns offsets (keys + 1) and the
// permutation that lists entries in key order, stable within a key.
std::pair<std::vector<index_t>, std::vector<index_t>> bucket(const std::vector<index_t>& keys,
                                                             index_t num_keys) {
  std::vector<index_t> offsets(static_cast<std::size_t>(num_keys) + 1, 0);
  for (index_t k : keys) ++offsets[static_cast<std::size_t>(k) + 1];
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  std::vector<index_t> next(offsets.begin(), offsets.end() - 1);
  std::vector<index_t> order(keys.size());
  for (std::size_t e = 0; e < keys.size(); ++e) order[next[keys[e]]++] = static_cast<index_t>(e);
  return {std::move(offsets), std::move(order)};
}

// A compressed (CSR or CSC) matrix's arrays: offsets over the major index, and the minor index
// and value of each entry in major order.
template <class T>
struct Compressed {
  std::vector<index_t> offsets;
  std::vector<index_t> indices;
  std::vector<T> values;
};

// Entries keyed by `majors` (rows for CSR, columns for CSC), compressed; entries with the same
// key keep their input order.
template <class T>
Compressed<T> compress(const std::vector<index_t>& majors, index_t num_majors, const std::vector<index_t>& minors,
                       const std::vector<T>& values) {
  auto [offsets, order] = bucket(majors, num_majors);
  Compressed<T> c{std::move(offsets), std::vector<index_t>(order.size()), std::vector<T>(order.size())};
  for (std::size_t k = 0; k < order.size(); ++k) {
    c.indices[k] = minors[order[k]];
    c.values[k] = values[order[k]];
  }
  return c;
}

// The major index of every entry of a compressed matrix (the inverse of bucketing).
std::vector<index_t> expand(const std::vector<index_t>& offsets, index_t num_majors) {
  std::vector<index_t> majors(static_cast<std::size_t>(offsets[num_majors]));
  for (index_t m = 0; m < num_majors; ++m)
    std::fill(majors.begin() + offsets[m], majors.begin() + offsets[m + 1], m);
  return majors;
}

void check_size(std::size_t nnz, const char* what) {
  if (nnz > static_cast<std::size_t>(max_entries))
    throw InputError(what, "more than 2^31-1 entries do not fit 32-bit offsets");
}

template <class Offsets, class Indices>
void validate_compressed(index_t major, index_t minor, const Offsets& offsets, const Indices& indices,
                         std::size_t values, const std::string& what, const char* major_name) {
  if (major < 0 || minor < 0) throw InputError(what, "negative dimension");
  if (offsets.size() != static_cast<std::size_t>(major) + 1)
    throw InputError(what, std::string("offset array has ") + std::to_string(offsets.size()) +
                               " entries, expected " + major_name + " + 1 = " + std::to_string(major + 1));
  if (offsets.front() != 0) throw InputError(what, "first offset is not 0");
  for (index_t i = 0; i < major; ++i)
    if (offsets[i + 1] < offsets[i])
      throw InputError(what, std::string("offsets decrease at ") + major_name + " " + std::to_string(i));
  if (static_cast<std::size_t>(offsets.back()) != indices.size() || indices.size() != values)
    throw InputError(what, "last offset, index count and value count differ");
  for (std::size_t k = 0; k < indices.size(); ++k)
    if (indices[k] < 0 || indices[k] >= minor)
      throw InputError(what, "index out of range at entry " + std::to_string(k));
}

}  // namespace

template <class T>
void validate(const Coo<T>& m, const std::string& what) {
  if (m.rows < 0 || m.cols < 0) throw InputError(what, "negative dimension");
  if (m.row_indices.size() != m.values.size() || m.col_indices.size() != m.values.size())
    throw InputError(what, "row, column and value arrays differ in length");
  for (std::size_t k = 0; k < m.values.size(); ++k)
    if (m.row_indices[k] < 0 || m.row_indices[k] >= m.rows || m.col_indices[k] < 0 ||
        m.col_indices[k] >= m.cols)
      throw InputError(what, "index out of range at entry " + std::to_string(k));
}

template <class T>
void validate(const Csr<T>& m, const std::string& what) {
  validate_compressed(m.rows, m.cols, m.row_offsets, m.col_indices, m.values.size(), what, "rows");
}

template <class T>
void validate(const Csc<T>& m, const std::string& what) {
  validate_compressed(m.cols, m.rows, m.col_offsets, m.row_indices, m.values.size(), what, "cols");
}

template <class T>
Csr<T> coo_to_csr(const Coo<T>& coo) {
  check_size(coo.nnz(), "coo_to_csr");
  Compressed<T> c = compress(coo.row_indices, coo.rows, coo.col_indices, coo.values);
  Csr<T> csr;
  csr.rows = coo.rows;
  csr.cols = coo.cols;
  csr.row_offsets = std::move(c.offsets);
  csr.col_indices = std::move(c.indices);
  csr.values = std::move(c.values);
  return csr;
}

template <class T>
Csc<T> coo_to_csc(const Coo<T>& coo) {
  check_size(coo.nnz(), "coo_to_csc");
  Compressed<T> c = compress(coo.col_indices, coo.cols, coo.row_indices, coo.values);
  Csc<T> csc;
  csc.rows = coo.rows;
  csc.cols = coo.cols;
  csc.col_offsets = std::move(c.offsets);
  csc.row_indices = std::move(c.indices);
  csc.values = std::move(c.values);
  return csc;
}

template <class T>
Coo<T> csr_to_coo(const Csr<T>& csr) {
  Coo<T> coo;
  coo.rows = csr.rows;
  coo.cols = csr.cols;
  coo.row_indices = expand(csr.row_offsets, csr.rows);
  coo.col_indices = csr.col_indices;
  coo.values = csr.values;
  return coo;
}

template <class T>
Coo<T> csc_to_coo(const Csc<T>& csc) {
  Coo<T> coo;
  coo.rows = csc.rows;
  coo.cols = csc.cols;
  coo.col_indices = expand(csc.col_offsets, csc.cols);
  coo.row_indices = csc.row_indices;
  coo.values = csc.values;
  return coo;
}

template <class T>
Csc<T> csr_to_csc(const Csr<T>& csr) {
  // Bucket by column in CSR (row) order: the sort is stable, so each column lists its rows in
  // increasing order.
  Compressed<T> c = compress(csr.col_indices, csr.cols, expand(csr.row_offsets, csr.rows), csr.values);
  Csc<T> csc;
  csc.rows = csr.rows;
  csc.cols = csr.cols;
  csc.col_offsets = std::move(c.offsets);
  csc.row_indices = std::move(c.indices);
  csc.values = std::move(c.values);
  return csc;
}

template <class T>
Csr<T> csc_to_csr(const Csc<T>& csc) {
  // A CSC matrix is the CSR of its transpose; transposing that gives CSR of the matrix.
  Csr<T> transposed;
  transposed.rows = csc.cols;
  transposed.cols = csc.rows;
  transposed.row_offsets = csc.col_offsets;
  transposed.col_indices = csc.row_indices;
  transposed.values = csc.values;
  return transpose(transposed);
}

template <class T>
Csr<T> transpose(const Csr<T>& csr) {
  Csc<T> csc = csr_to_csc(csr);
  Csr<T> t;
  t.rows = csr.cols;
  t.cols = csr.rows;
  t.row_offsets = std::move(csc.col_offsets);
  t.col_indices = std::move(csc.row_indices);
  t.values = std::move(csc.values);
  return t;
}

template <class T>
void sort_rows(Csr<T>& csr) {
  std::vector<std::pair<index_t, T>> row;
  for (index_t r = 0; r < csr.rows; ++r) {
    const index_t b = csr.row_offsets[r], e = csr.row_offsets[r + 1];
    if (std::is_sorted(csr.col_indices.begin() + b, csr.col_indices.begin() + e)) continue;
    row.clear();
    for (index_t k = b; k < e; ++k) row.emplace_back(csr.col_indices[k], csr.values[k]);
    std::stable_sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (index_t k = b; k < e; ++k) {
      csr.col_indices[k] = row[k - b].first;
      csr.values[k] = row[k - b].second;
    }
  }
}

template <class To, class From>
Csr<To> cast_values(const Csr<From>& csr) {
  Csr<To> out;
  out.rows = csr.rows;
  out.cols = csr.cols;
  out.row_offsets = csr.row_offsets;
  out.col_indices = csr.col_indices;
  out.values.assign(csr.values.begin(), csr.values.end());
  return out;
}

#define APIARY_SPARSE_INSTANTIATE(T)                                  \
  template void validate<T>(const Coo<T>&, const std::string&);      \
  template void validate<T>(const Csr<T>&, const std::string&);      \
  template void validate<T>(const Csc<T>&, const std::string&);      \
  template Csr<T> coo_to_csr<T>(const Coo<T>&);                       \
  template Csc<T> coo_to_csc<T>(const Coo<T>&);                       \
  template Coo<T> csr_to_coo<T>(const Csr<T>&);                       \
  template Coo<T> csc_to_coo<T>(const Csc<T>&);                       \
  template Csc<T> csr_to_csc<T>(const Csr<T>&);                       \
  template Csr<T> csc_to_csr<T>(const Csc<T>&);                       \
  template Csr<T> transpose<T>(const Csr<T>&);                        \
  template void sort_rows<T>(Csr<T>&);
APIARY_SPARSE_INSTANTIATE(float)
APIARY_SPARSE_INSTANTIATE(double)
#undef APIARY_SPARSE_INSTANTIATE

template Csr<float> cast_values<float, double>(const Csr<double>&);
template Csr<double> cast_values<double, float>(const Csr<float>&);
template Csr<double> cast_values<double, double>(const Csr<double>&);
template Csr<float> cast_values<float, float>(const Csr<float>&);

}  // namespace apiary::sparse
