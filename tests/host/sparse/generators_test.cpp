#include <apiary/error.hpp>
#include <apiary/sparse/conversions.hpp>
#include <apiary/sparse/generators.hpp>
#include <apiary/sparse/stats.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace apiary::sparse;

namespace {
bool symmetric(const Csr<double>& m) {
  const Csr<double> t = transpose(m);
  Csr<double> s = m;
  sort_rows(s);
  return t.row_offsets == s.row_offsets && t.col_indices == s.col_indices && t.values == s.values;
}
bool strictly_diagonally_dominant(const Csr<double>& m) {
  for (index_t r = 0; r < m.rows; ++r) {
    double diag = 0, off = 0;
    for (index_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
      (m.col_indices[k] == r ? diag : off) += std::abs(m.values[k]);
    if (!(diag > off)) return false;
  }
  return true;
}
bool rows_sorted_unique(const Csr<double>& m) {
  for (index_t r = 0; r < m.rows; ++r)
    for (index_t k = m.row_offsets[r] + 1; k < m.row_offsets[r + 1]; ++k)
      if (m.col_indices[k - 1] >= m.col_indices[k]) return false;
  return true;
}
}  // namespace

TEST_CASE("Laplacians: sizes, symmetry, stencil counts", "[sparse][generators]") {
  const Csr<double> l5 = laplacian_2d(10, 7, 5);
  validate(l5);
  CHECK(l5.rows == 70);
  CHECK(l5.nnz() == static_cast<std::size_t>(5 * 70 - 2 * 10 - 2 * 7));
  CHECK(symmetric(l5));
  CHECK(rows_sorted_unique(l5));
  const Csr<double> l9 = laplacian_2d(6, 6, 9);
  CHECK(l9.nnz() == static_cast<std::size_t>((3 * 6 - 2) * (3 * 6 - 2)));
  CHECK(symmetric(l9));
  const Csr<double> l7 = laplacian_3d(5, 4, 3, 7);
  CHECK(l7.nnz() == static_cast<std::size_t>(7 * 60 - 2 * (4 * 3 + 5 * 3 + 5 * 4)));
  CHECK(symmetric(l7));
  const Csr<double> l27 = laplacian_3d(4, 4, 4, 27);
  CHECK(l27.nnz() == static_cast<std::size_t>(10 * 10 * 10));
  CHECK(symmetric(l27));
  // The shared lap2D_5pt_n100 file is this matrix (n = 100).
  CHECK(laplacian_2d(100, 100, 5).nnz() == 49600);
  CHECK_THROWS_AS(laplacian_2d(3, 3, 7), apiary::InputError);
}

TEST_CASE("random symmetric permutation keeps symmetry and the multiset of values", "[sparse][generators]") {
  const Csr<double> a = laplacian_3d(6, 5, 4, 27);
  const auto perm = random_permutation(a.rows, 3);
  std::vector<index_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (index_t i = 0; i < a.rows; ++i) REQUIRE(sorted[i] == i);
  const Csr<double> b = permute_symmetric(a, perm);
  validate(b);
  CHECK(symmetric(b));
  CHECK(rows_sorted_unique(b));
  for (index_t r = 0; r < a.rows; ++r) CHECK(b.row_offsets[r + 1] - b.row_offsets[r] == a.row_offsets[perm[r] + 1] - a.row_offsets[perm[r]]);
  CHECK(generate("lap3d:n=6,points=27,perm=1,seed=9").nnz() == generate("lap3d:n=6,points=27").nnz());
}

TEST_CASE("RMAT graphs are power-law, symmetric, simple", "[sparse][generators]") {
  const Csr<double> g = rmat(14, 16, 0.57, 0.19, 0.19, 1, true);
  validate(g);
  CHECK(symmetric(g));
  CHECK(rows_sorted_unique(g));
  for (index_t r = 0; r < g.rows; ++r)
    for (index_t k = g.row_offsets[r]; k < g.row_offsets[r + 1]; ++k) REQUIRE(g.col_indices[k] != r);
  const RowStats s = row_stats(g.row_offsets, g.cols);
  CHECK(s.max > 20 * s.mean);  // heavy tail
  CHECK(s.empty_rows > 0);
  // Deterministic regardless of the number of threads.
  set_generator_threads(1);
  const Csr<double> one = rmat(12, 8, 0.57, 0.19, 0.19, 4, true);
  set_generator_threads(3);
  const Csr<double> three = rmat(12, 8, 0.57, 0.19, 0.19, 4, true);
  set_generator_threads(0);
  CHECK(one.col_indices == three.col_indices);
  CHECK(one.values == three.values);
}

TEST_CASE("the thesis's A3..A6 shapes: symmetric, strictly diagonally dominant", "[sparse][generators]") {
  for (const char* name : {"A3", "A4", "A5", "A6"}) {
    INFO(name);
    const Csr<double> a = generate(name);
    validate(a);
    CHECK(symmetric(a));
    CHECK(strictly_diagonally_dominant(a));
    CHECK(rows_sorted_unique(a));
  }
  const RowStats s3 = row_stats(generate("A3").row_offsets, 10000);
  CHECK(s3.rows == 10000);
  CHECK(s3.mean == Approx(11).margin(0.5));
  const RowStats s5 = row_stats(generate("A5").row_offsets, 20000);
  CHECK(s5.mean == Approx(27).margin(1.0));
}

TEST_CASE("skewed generators: long rows, power law, regular, road", "[sparse][generators]") {
  const Csr<double> c = long_rows(20000, 10, 3, 15000, 1);
  validate(c);
  const RowStats cs = row_stats(c.row_offsets, c.cols);
  CHECK(cs.max > 10000);
  CHECK(cs.mean == Approx(11).margin(2.5));
  CHECK(rows_sorted_unique(c));

  const Csr<double> p = power_law_rows(50000, 5, 1.8, 3000, 2);
  const RowStats ps = row_stats(p.row_offsets, p.cols);
  CHECK(ps.mean == Approx(5).margin(1.5));
  CHECK(ps.stddev > 2 * ps.mean);
  CHECK(ps.max <= 3000);

  const Csr<double> r = regular_rows(1000, 8, 3);
  const RowStats rs = row_stats(r.row_offsets, r.cols);
  CHECK(rs.min == 8);
  CHECK(rs.max == 8);
  CHECK(rows_sorted_unique(r));

  const Csr<double> road = road_network(100, 100, 0.53, 4);
  const RowStats ds = row_stats(road.row_offsets, road.cols);
  CHECK(symmetric(road));
  CHECK(ds.max <= 4);
  CHECK(ds.mean == Approx(2.1).margin(0.2));
}

TEST_CASE("generate() rejects unknown kinds and keys", "[sparse][generators]") {
  CHECK_THROWS_AS(generate("nope:n=3"), apiary::InputError);
  CHECK_THROWS_AS(generate("lap2d:n=3,colour=2"), apiary::InputError);
  CHECK_THROWS_AS(generate("lap2d:n=abc"), apiary::InputError);
  CHECK_THROWS_AS(generate("regular:k=3"), apiary::InputError);  // missing n
  CHECK(generate("regular:n=1e3,k=4").nnz() == 4000);
}

// Impossible parameters end in an InputError before any storage is taken: not in a double that
// does not fit its integer (undefined), a wrapped row count or a bad_alloc.
TEST_CASE("generate() rejects impossible parameters before generating", "[sparse][generators]") {
  for (const char* spec : {"lap2d:n=nan", "lap2d:n=inf", "lap2d:n=-3", "lap2d:n=2.5", "lap2d:n=1e300",
                           "lap2d:n=10,points=1e12", "lap3d:n=10,points=nan", "rmat:scale=1e10", "rmat:scale=8,ef=-1",
                           "rmat:scale=30,ef=1e9", "rmat:scale=8,a=nan", "diagdom:n=10,avg=1e10",
                           "diagdom:n=1000000,avg=100000", "diagdom:n=10,avg=nan", "powerlaw:n=100,avg=5,alpha=nan",
                           "powerlaw:n=100,avg=1e9", "longrows:n=100,avg=1e300,len=5", "road:nx=100000,ny=100000",
                           "road:n=10,keep=nan", "regular:n=10,k=4,seed=-1"}) {
    INFO(spec);
    CHECK_THROWS_AS(generate(spec), apiary::InputError);
  }
}
