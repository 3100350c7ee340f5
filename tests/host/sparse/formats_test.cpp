#include <apiary/error.hpp>
#include <apiary/sparse/conversions.hpp>
#include <apiary/sparse/generators.hpp>
#include <apiary/sparse/host_views.hpp>
#include <apiary/sparse/stats.hpp>

#include <catch2/catch.hpp>

#include <random>

using namespace apiary::sparse;

namespace {
Coo<double> random_coo(std::mt19937& rng, index_t rows, index_t cols, std::size_t nnz) {
  Coo<double> m;
  m.rows = rows;
  m.cols = cols;
  for (std::size_t k = 0; k < nnz; ++k) {
    m.row_indices.push_back(static_cast<index_t>(rng() % rows));
    m.col_indices.push_back(static_cast<index_t>(rng() % cols));
    m.values.push_back(static_cast<double>(k));  // unique values identify entries
  }
  return m;
}
}  // namespace

TEST_CASE("conversions between COO, CSR and CSC keep every entry", "[sparse][formats]") {
  std::mt19937 rng(11);
  for (int round = 0; round < 20; ++round) {
    const index_t rows = 1 + static_cast<index_t>(rng() % 50), cols = 1 + static_cast<index_t>(rng() % 50);
    const Coo<double> coo = random_coo(rng, rows, cols, rng() % 400);
    const Csr<double> csr = coo_to_csr(coo);
    validate(csr);
    const Csc<double> csc = coo_to_csc(coo);
    validate(csc);
    // Every entry lands in its row / column.
    for (index_t r = 0; r < rows; ++r)
      for (index_t k = csr.row_offsets[r]; k < csr.row_offsets[r + 1]; ++k) {
        const auto e = static_cast<std::size_t>(csr.values[k]);
        REQUIRE(coo.row_indices[e] == r);
        REQUIRE(coo.col_indices[e] == csr.col_indices[k]);
      }
    // CSR -> COO -> CSR is the identity; CSR -> CSC equals COO -> CSC; CSC -> CSR back.
    const Csr<double> again = coo_to_csr(csr_to_coo(csr));
    REQUIRE(again.row_offsets == csr.row_offsets);
    REQUIRE(again.col_indices == csr.col_indices);
    REQUIRE(again.values == csr.values);
    const Csc<double> via_csr = csr_to_csc(csr);
    REQUIRE(via_csr.col_offsets == csc.col_offsets);
    const Csr<double> back = csc_to_csr(via_csr);
    REQUIRE(back.row_offsets == csr.row_offsets);
    Csr<double> sorted = csr;
    sort_rows(sorted);
    REQUIRE(back.col_indices == sorted.col_indices);
    REQUIRE(back.values == sorted.values);
    const Coo<double> from_csc = csc_to_coo(csc);
    REQUIRE(from_csc.nnz() == coo.nnz());
    const Csr<double> tt = transpose(transpose(csr));
    REQUIRE(tt.col_indices == sorted.col_indices);
    const Csr<float> f = cast_values<float>(csr);
    REQUIRE(f.values.size() == csr.values.size());
    const CsrView<double> v = view(csr);
    REQUIRE(v.nnz == static_cast<index_t>(csr.nnz()));
  }
}

TEST_CASE("validate rejects broken matrices", "[sparse][formats]") {
  Csr<double> m = laplacian_2d(3, 3);
  validate(m);
  Csr<double> bad = m;
  bad.col_indices[4] = 9;
  CHECK_THROWS_AS(validate(bad), apiary::InputError);
  bad = m;
  bad.row_offsets[2] = bad.row_offsets[1] - 1;
  CHECK_THROWS_AS(validate(bad), apiary::InputError);
  bad = m;
  bad.values.pop_back();
  CHECK_THROWS_AS(validate(bad), apiary::InputError);
}

TEST_CASE("row statistics", "[sparse][stats]") {
  const RowStats s = row_stats({0, 2, 2, 8}, 10);
  CHECK(s.rows == 3);
  CHECK(s.nnz == 8);
  CHECK(s.max == 6);
  CHECK(s.min == 0);
  CHECK(s.empty_rows == 1);
  CHECK(s.mean == Approx(8.0 / 3));
  CHECK(s.column_spread == 1);  // not measured without the column indices
}

TEST_CASE("column spread tells banded from scattered columns", "[sparse][stats]") {
  // Row 0: columns 3..4 (2 of 10), row 1 empty (skipped), row 2: columns 0..9 (all 10).
  const RowStats s = row_stats({0, 2, 2, 8}, {3, 4, 0, 9, 5, 1, 2, 8}, 10);
  CHECK(s.column_spread == Approx((0.2 + 1.0) / 2));
  const auto laplacian = generate("lap3d:n=30,points=27");
  const RowStats banded = row_stats(laplacian.row_offsets, laplacian.col_indices, laplacian.cols);
  const auto permuted = generate("lap3d:n=30,points=27,perm=1");
  const RowStats scattered = row_stats(permuted.row_offsets, permuted.col_indices, permuted.cols);
  CHECK(banded.column_spread < 0.1);    // a row reaches +-(n^2 + n + 1) columns: 2/n of them
  CHECK(scattered.column_spread > 0.5);
  CHECK(banded.mean == Approx(scattered.mean));  // what row lengths cannot tell apart
}
