#include <apiary/error.hpp>
#include <apiary/sparse/conversions.hpp>
#include <apiary/sparse/generators.hpp>
#include <apiary/sparse/matrix_market.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

using namespace apiary::sparse;
namespace fs = std::filesystem;

namespace {

// Expects parsing `text` to fail with a message naming the file, the line and `reason`.
void expect_error(const std::string& text, int line, const std::string& reason) {
  INFO("input:\n" << text);
  try {
    parse_matrix_market(text, "bad.mtx");
    FAIL("no error");
  } catch (const apiary::InputError& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    CHECK(msg.find("bad.mtx:" + std::to_string(line) + ":") == 0);
    CHECK(msg.find(reason) != std::string::npos);
  }
}

Coo<double> sample() {
  Coo<double> m;
  m.rows = 4;
  m.cols = 5;
  m.row_indices = {0, 3, 1, 2, 3, 0};
  m.col_indices = {0, 4, 2, 2, 0, 3};
  m.values = {1.5, -2.25, 0.0, 1e-300, 3.141592653589793, 7};
  return m;
}

MmWriteOptions options(MmField field, MmSymmetry symmetry = MmSymmetry::general) {
  MmWriteOptions o;
  o.field = field;
  o.symmetry = symmetry;
  return o;
}

fs::path temp_file(const std::string& name) { return fs::temp_directory_path() / ("apiary_sparse_" + name); }

}  // namespace

TEST_CASE("Matrix Market round trip: real, integer, pattern; general and symmetric", "[sparse][mm]") {
  const Coo<double> m = sample();
  SECTION("real general, exact values and explicit zeros") {
    const auto path = temp_file("real.mtx").string();
    write_matrix_market(path, m, {MmField::real, MmSymmetry::general, {" written by a test", " second comment"}});
    const MatrixMarket back = read_matrix_market(path);
    CHECK(back.field == MmField::real);
    CHECK(back.symmetry == MmSymmetry::general);
    CHECK(back.comments == std::vector<std::string>{" written by a test", " second comment"});
    CHECK(back.entries.rows == 4);
    CHECK(back.entries.cols == 5);
    CHECK(back.entries.row_indices == m.row_indices);
    CHECK(back.entries.col_indices == m.col_indices);
    CHECK(back.entries.values == m.values);  // bit-exact: shortest round-trip formatting
    fs::remove(path);
  }
  SECTION("integer") {
    Coo<double> ints = m;
    ints.values = {1, -2, 0, 4, 5, 600000000000};
    const MatrixMarket back = parse_matrix_market(format_matrix_market(ints, options(MmField::integer)), "int.mtx");
    CHECK(back.field == MmField::integer);
    CHECK(back.entries.values == ints.values);
    Coo<double> fractional = m;
    CHECK_THROWS_AS(format_matrix_market(fractional, options(MmField::integer)), apiary::InputError);
  }
  SECTION("pattern") {
    const MatrixMarket back = parse_matrix_market(format_matrix_market(m, options(MmField::pattern)), "p.mtx");
    CHECK(back.field == MmField::pattern);
    CHECK(back.entries.row_indices == m.row_indices);
    CHECK(back.entries.values == std::vector<double>(6, 1.0));
  }
  SECTION("symmetric and skew-symmetric expansion") {
    Coo<double> full;
    full.rows = full.cols = 3;
    full.row_indices = {0, 1, 2, 2};
    full.col_indices = {0, 0, 1, 2};
    full.values = {4, -1, 0, 2};  // the 0 is an explicit zero and must survive
    const MatrixMarket sym = parse_matrix_market(format_matrix_market(full, options(MmField::real, MmSymmetry::symmetric)), "s.mtx");
    CHECK(sym.symmetry == MmSymmetry::symmetric);
    const Coo<double> expanded = expand_symmetry(sym);
    CHECK(expanded.nnz() == 6);
    Csr<double> csr = coo_to_csr(expanded);
    sort_rows(csr);
    CHECK(csr.row_offsets == std::vector<index_t>{0, 2, 4, 6});
    CHECK(csr.col_indices == std::vector<index_t>{0, 1, 0, 2, 1, 2});
    CHECK(csr.values == std::vector<double>{4, -1, -1, 0, 0, 2});

    Coo<double> skew = lower_triangle(full, /*keep_diagonal=*/false);
    const MatrixMarket sk = parse_matrix_market(format_matrix_market(skew, options(MmField::real, MmSymmetry::skew_symmetric)), "k.mtx");
    Csr<double> k = coo_to_csr(expand_symmetry(sk));
    sort_rows(k);
    CHECK(k.values == std::vector<double>{1, -1, -0.0, 0});
    CHECK_THROWS_AS(format_matrix_market(full, options(MmField::real, MmSymmetry::skew_symmetric)), apiary::InputError);
    Coo<double> upper = full;
    upper.row_indices = {0, 0};
    upper.col_indices = {0, 1};
    upper.values = {1, 2};
    CHECK_THROWS_AS(format_matrix_market(upper, options(MmField::real, MmSymmetry::symmetric)), apiary::InputError);
  }
}

TEST_CASE("Matrix Market reader tolerates comments, blank lines, case and CRLF", "[sparse][mm]") {
  const std::string text =
      "%%MatrixMarket Matrix Coordinate REAL General\r\n"
      "% a comment\r\n"
      "\r\n"
      "2 2 2\r\n"
      "1 1 +1.0e0\r\n"
      "% comment between entries\n"
      "\n"
      "  2\t2   -.5  \n";
  const MatrixMarket mm = parse_matrix_market(text, "ok.mtx");
  CHECK(mm.entries.values == std::vector<double>{1.0, -0.5});
  CHECK(mm.entries.row_indices == std::vector<index_t>{0, 1});
  CHECK(mm.comments.size() == 1);
}

TEST_CASE("malformed and unsupported Matrix Market files name file, line and reason", "[sparse][mm]") {
  const std::string ok_header = "%%MatrixMarket matrix coordinate real general\n";
  expect_error("", 1, "empty file");
  expect_error("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1, "unsupported field 'complex'");
  expect_error("%%MatrixMarket matrix coordinate real hermitian\n", 1, "unsupported symmetry 'hermitian'");
  expect_error("%%MatrixMarket matrix array real general\n", 1, "unsupported format 'array'");
  expect_error("%MatrixMarket matrix coordinate real general\n", 1, "bad header");
  expect_error("%%MatrixMarket matrix coordinate real\n", 1, "bad header");
  expect_error("%%MatrixMarket matrix coordinate real sideways\n", 1, "unknown symmetry");
  expect_error(ok_header + "% c\n2 2\n", 3, "bad size line");
  expect_error(ok_header + "2 x 1\n", 2, "bad size line");
  expect_error(ok_header + "-2 2 1\n", 2, "negative size");
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n", 2, "must be square");
  expect_error(ok_header, 2, "truncated file: missing the size line");
  expect_error(ok_header + "2 2 1\n3 1 1.0\n", 3, "index out of range");
  expect_error(ok_header + "2 2 1\n1 0 1.0\n", 3, "index out of range");
  expect_error(ok_header + "2 2 3\n1 1 1.0\n2 2 2.0\n", 5, "truncated file: expected 3 entries");
  expect_error(ok_header + "2 2 3\n1 1 1.0\n2 2 2", 5, "truncated file: expected 3 entries");  // no final newline
  // A size line that promises more than the file holds is found out at the end of the file, as
  // above, not by reserving storage for 2^31 entries (34 GB) first.
  expect_error(ok_header + "2 2 2147483647\n1 1 1.0\n", 4, "truncated file: expected 2147483647 entries");
  expect_error("%%MatrixMarket matrix coordinate pattern general\n9 9 2000000000\n1 1\n", 4,
               "truncated file: expected 2000000000 entries");
  expect_error(ok_header + "2 2 1\n1 1 1.0\n2 2 2.0\n", 4, "wrong entry count: more entries than the 1 declared on line 2");
  expect_error(ok_header + "2 2 1\n1 1 abc\n", 3, "expected a real value");
  expect_error(ok_header + "2 2 1\n1 1\n", 3, "expected a real value");
  expect_error(ok_header + "2 2 1\n1 1 1.0 5\n", 3, "unexpected text after the value");
  expect_error(ok_header + "2 2 1\n1.5 1 1.0\n", 3, "expected an integer row index");
  expect_error("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3, "expected an integer value");
  expect_error("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1.5\n", 3, "pattern entry has exactly two indices");
  expect_error("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1.5\n", 3, "no diagonal entries");
}

TEST_CASE("a missing file is an InputError naming it", "[sparse][mm]") {
  try {
    read_matrix_market("/nonexistent/dir/x.mtx");
    FAIL("no error");
  } catch (const apiary::InputError& e) {
    CHECK(std::string(e.what()).find("/nonexistent/dir/x.mtx") != std::string::npos);
  }
}

TEST_CASE("the shared real matrices load with their documented sizes", "[sparse][mm][data]") {
  const char* env = std::getenv("APIARY_MATRIX_DIR");
  const fs::path dir = env ? env : APIARY_MATRIX_DIR;
  if (!fs::exists(dir / "mario001.mtx")) {
    WARN("matrix directory " << dir << " not found; skipped");
    return;
  }
  const MatrixMarket mario = read_matrix_market((dir / "mario001.mtx").string());
  CHECK(mario.entries.rows == 38434);
  CHECK(mario.entries.nnz() == 114643);
  CHECK(mario.symmetry == MmSymmetry::symmetric);
  std::size_t stored_zeros = 0, zeros = 0;
  for (double v : mario.entries.values) stored_zeros += v == 0.0;
  for (double v : expand_symmetry(mario).values) zeros += v == 0.0;
  CHECK(stored_zeros == 622);  // explicit zeros kept: 622 stored (off-diagonal) ...
  CHECK(zeros == 1244);        // ... 1,244 in the symmetric pattern (FACTS.md)
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".mtx") continue;
    INFO(entry.path());
    const Csr<double> csr = read_csr<double>(entry.path().string());
    validate(csr);
    CHECK(csr.rows == csr.cols);
  }
}

TEST_CASE("Matrix Market parsing speed", "[sparse][mm][speed]") {
  // About 50 MB: a permuted 3D Laplacian written as a general real matrix.
  const Csr<double> a = generate("lap3d:n=62,points=27,perm=1");
  const std::string text = format_matrix_market(csr_to_coo(a));
  const auto start = std::chrono::steady_clock::now();
  const MatrixMarket mm = parse_matrix_market(text, "speed.mtx");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double mb_per_s = static_cast<double>(text.size()) / 1e6 / seconds;
  std::printf("Matrix Market parse: %.1f MB in %.3f s = %.0f MB/s (one core)\n", text.size() / 1e6, seconds, mb_per_s);
  CHECK(mm.entries.nnz() == a.nnz());
  CHECK(mm.entries.values == a.values);
#if APIARY_RELEASE_BUILD
  CHECK(mb_per_s >= 100.0);
#endif
}
