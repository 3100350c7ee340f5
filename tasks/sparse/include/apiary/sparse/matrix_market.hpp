// Matrix Market (coordinate) reader and writer.
//
// Supported: fields real, integer, pattern; symmetries general, symmetric, skew-symmetric;
// comment lines; 1-based indices; explicit zeros are kept (they are part of the pattern, e.g.
// mario001 falls apart into 312 components without its 1,244 stored zeros). Unsupported or
// malformed input (complex/hermitian, array format, bad header or size line, index out of
// range, bad number, too many or too few entries, truncated file) throws apiary::InputError
// whose `where` is "file:line" and whose message says what is wrong.
#pragma once

#include <apiary/sparse/formats.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace apiary::sparse {

enum class MmField { real, integer, pattern };
enum class MmSymmetry { general, symmetric, skew_symmetric };

const char* to_string(MmField field);
const char* to_string(MmSymmetry symmetry);

// A file as stored: the entries exactly as listed (for symmetric files only one triangle),
// values as double (1 for pattern files).
struct MatrixMarket {
  MmField field = MmField::real;
  MmSymmetry symmetry = MmSymmetry::general;
  std::vector<std::string> comments;  // comment lines without the leading '%'
  Coo<double> entries;
};

// Parses a whole file. `name` is used in error messages.
MatrixMarket read_matrix_market(const std::string& path);
MatrixMarket parse_matrix_market(std::string_view text, const std::string& name);

// The full matrix: symmetric files mirror every off-diagonal entry, skew-symmetric ones
// mirror it negated. Explicit zeros stay.
Coo<double> expand_symmetry(const MatrixMarket& mm);

// Convenience: read, expand, convert to CSR with sorted rows, cast to T.
template <class T> Csr<T> read_csr(const std::string& path);

struct MmWriteOptions {
  MmField field = MmField::real;
  MmSymmetry symmetry = MmSymmetry::general;
  std::vector<std::string> comments;
};

// Writes `entries` as listed. For symmetric/skew-symmetric output the caller passes one
// triangle (use lower_triangle); entries above the diagonal are rejected, as are diagonal
// entries of a skew-symmetric matrix. Real values are written with round-trip precision.
void write_matrix_market(const std::string& path, const Coo<double>& entries, const MmWriteOptions& options = {});
std::string format_matrix_market(const Coo<double>& entries, const MmWriteOptions& options = {});

// Keeps the entries with row >= col (the stored half of a symmetric matrix).
Coo<double> lower_triangle(const Coo<double>& coo, bool keep_diagonal = true);

}  // namespace apiary::sparse
