// Device copies of the host formats: explicit upload (constructor) and download, plus the
// raw-pointer views that kernels take.
#pragma once

#include <apiary/sparse/device_buffer.hpp>
#include <apiary/sparse/formats.hpp>
#include <apiary/sparse/views.hpp>

namespace apiary::sparse {

template <class T>
class DeviceCsr {
 public:
  explicit DeviceCsr(const Csr<T>& host)
      : rows_(host.rows), cols_(host.cols), row_offsets_(host.row_offsets), col_indices_(host.col_indices),
        values_(host.values) {}
  CsrView<T> view() const {
    return {rows_, cols_, static_cast<index_t>(values_.size()), row_offsets_.data(), col_indices_.data(),
            values_.data()};
  }
  Csr<T> download() const { return {rows_, cols_, row_offsets_.download(), col_indices_.download(), values_.download()}; }
  index_t rows() const { return rows_; }
  index_t cols() const { return cols_; }
  std::size_t nnz() const { return values_.size(); }
  std::size_t bytes() const { return row_offsets_.bytes() + col_indices_.bytes() + values_.bytes(); }

 private:
  index_t rows_, cols_;
  DeviceBuffer<index_t> row_offsets_, col_indices_;
  DeviceBuffer<T> values_;
};

template <class T>
class DeviceCsc {
 public:
  explicit DeviceCsc(const Csc<T>& host)
      : rows_(host.rows), cols_(host.cols), col_offsets_(host.col_offsets), row_indices_(host.row_indices),
        values_(host.values) {}
  CscView<T> view() const {
    return {rows_, cols_, static_cast<index_t>(values_.size()), col_offsets_.data(), row_indices_.data(),
            values_.data()};
  }
  Csc<T> download() const { return {rows_, cols_, col_offsets_.download(), row_indices_.download(), values_.download()}; }

 private:
  index_t rows_, cols_;
  DeviceBuffer<index_t> col_offsets_, row_indices_;
  DeviceBuffer<T> values_;
};

template <class T>
class DeviceCoo {
 public:
  explicit DeviceCoo(const Coo<T>& host)
      : rows_(host.rows), cols_(host.cols), row_indices_(host.row_indices), col_indices_(host.col_indices),
        values_(host.values) {}
  CooView<T> view() const {
    return {rows_, cols_, static_cast<index_t>(values_.size()), row_indices_.data(), col_indices_.data(),
            values_.data()};
  }
  Coo<T> download() const { return {rows_, cols_, row_indices_.download(), col_indices_.download(), values_.download()}; }

 private:
  index_t rows_, cols_;
  DeviceBuffer<index_t> row_indices_, col_indices_;
  DeviceBuffer<T> values_;
};

}  // namespace apiary::sparse
