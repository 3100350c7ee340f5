#include <apiary/sparse/matrix_market.hpp>

#include <apiary/error.hpp>
#include <apiary/sparse/conversions.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

namespace apiary::sparse {

const char* to_string(MmField field) {
  switch (field) {
    case MmField::real: return "real";
    case MmField::integer: return "integer";
    case MmField::pattern: return "pattern";
  }
  return "?";
}

const char* to_string(MmSymmetry symmetry) {
  switch (symmetry) {
    case MmSymmetry::general: return "general";
    case MmSymmetry::symmetric: return "symmetric";
    case MmSymmetry::skew_symmetric: return "skew-symmetric";
  }
  return "?";
}

namespace {

// A hand-written scanner: the whole file is in memory and every entry line is parsed with
// std::from_chars, which is what makes >= 100 MB/s on one core possible (iostreams manage
// about a tenth of that).
class Scanner {
 public:
  Scanner(std::string_view text, const std::string& name) : p_(text.data()), end_(text.data() + text.size()), name_(name) {}

  bool at_end() const { return p_ >= end_; }
  std::size_t remaining_bytes() const { return static_cast<std::size_t>(end_ - p_); }
  std::size_t line() const { return line_; }

  [[noreturn]] void fail(const std::string& what) const { fail_at(line_, what); }
  [[noreturn]] void fail_at(std::size_t line, const std::string& what) const {
    throw InputError(name_ + ":" + std::to_string(line), what);
  }

  // The current line without its terminator; advances past it.
  std::string_view take_line() {
    const char* b = p_;
    const char* nl = static_cast<const char*>(std::memchr(p_, '\n', static_cast<std::size_t>(end_ - p_)));
    const char* e = nl ? nl : end_;
    p_ = nl ? nl + 1 : end_;
    ++line_;
    if (e > b && e[-1] == '\r') --e;
    return {b, static_cast<std::size_t>(e - b)};
  }

  // Starts a new line: returns false at end of input. Leaves the cursor on its first byte.
  bool begin_line() {
    if (p_ >= end_) return false;
    ++line_;
    return true;
  }
  void skip_blanks() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t')) ++p_;
  }
  // True when the rest of the current line is blank; consumes it.
  bool rest_blank() {
    skip_blanks();
    if (p_ < end_ && *p_ == '\r') ++p_;
    if (p_ >= end_) return true;
    if (*p_ == '\n') {
      ++p_;
      return true;
    }
    return false;
  }
  bool peek_is(char c) const { return p_ < end_ && *p_ == c; }
  void skip_line() {
    const char* nl = static_cast<const char*>(std::memchr(p_, '\n', static_cast<std::size_t>(end_ - p_)));
    p_ = nl ? nl + 1 : end_;
  }

  template <class I>
  bool parse_int(I& out) {
    skip_blanks();
    if (p_ < end_ && *p_ == '+') ++p_;
    auto [ptr, ec] = std::from_chars(p_, end_, out);
    if (ec != std::errc{} || ptr == p_) return false;
    p_ = ptr;
    return separator_follows();
  }
  bool parse_double(double& out) {
    skip_blanks();
    if (p_ < end_ && *p_ == '+') ++p_;
    auto [ptr, ec] = std::from_chars(p_, end_, out);
    if (ptr == p_) return false;
    if (ec == std::errc::result_out_of_range) {
      // Denormal underflow or overflow: keep what strtod would give (0 or +-inf).
      out = std::strtod(std::string(p_, ptr).c_str(), nullptr);
    } else if (ec != std::errc{}) {
      return false;
    }
    p_ = ptr;
    return separator_follows();
  }

 private:
  bool separator_follows() const {
    return p_ >= end_ || *p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r';
  }

  const char* p_;
  const char* end_;
  const std::string& name_;
  std::size_t line_ = 0;
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    std::size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j;
  }
  return words;
}

bool blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

}  // namespace

MatrixMarket parse_matrix_market(std::string_view text, const std::string& name) {
  Scanner in(text, name);
  MatrixMarket mm;

  // Header: %%MatrixMarket matrix coordinate <field> <symmetry>
  if (in.at_end()) in.fail_at(1, "empty file: expected a '%%MatrixMarket matrix coordinate ...' header");
  const std::string_view header = in.take_line();
  const auto words = split_words(header);
  if (words.empty() || lower(words[0]) != "%%matrixmarket")
    in.fail("bad header: the first line must start with '%%MatrixMarket'");
  if (words.size() != 5)
    in.fail("bad header: expected '%%MatrixMarket matrix coordinate <field> <symmetry>', got '" + std::string(header) + "'");
  if (lower(words[1]) != "matrix") in.fail("unsupported object '" + std::string(words[1]) + "' (only 'matrix')");
  const std::string format = lower(words[2]);
  if (format == "array") in.fail("unsupported format 'array' (dense); only 'coordinate' is supported");
  if (format != "coordinate") in.fail("bad header: unknown format '" + std::string(words[2]) + "'");
  const std::string field = lower(words[3]);
  if (field == "real" || field == "double") mm.field = MmField::real;
  else if (field == "integer") mm.field = MmField::integer;
  else if (field == "pattern") mm.field = MmField::pattern;
  else if (field == "complex") in.fail("unsupported field 'complex' (real, integer and pattern are supported)");
  else in.fail("bad header: unknown field '" + std::string(words[3]) + "'");
  const std::string symmetry = lower(words[4]);
  if (symmetry == "general") mm.symmetry = MmSymmetry::general;
  else if (symmetry == "symmetric") mm.symmetry = MmSymmetry::symmetric;
  else if (symmetry == "skew-symmetric") mm.symmetry = MmSymmetry::skew_symmetric;
  else if (symmetry == "hermitian") in.fail("unsupported symmetry 'hermitian' (complex matrices are not supported)");
  else in.fail("bad header: unknown symmetry '" + std::string(words[4]) + "'");

  // Comments and blank lines, then the size line: rows cols entries.
  std::string_view size_line;
  for (;;) {
    if (in.at_end()) in.fail_at(in.line() + 1, "truncated file: missing the size line 'rows cols entries'");
    std::string_view line = in.take_line();
    if (!line.empty() && line[0] == '%') {
      mm.comments.emplace_back(line.substr(1));
      continue;
    }
    if (blank(line)) continue;
    size_line = line;
    break;
  }
  const std::size_t size_line_no = in.line();
  long long rows = -1, cols = -1, count = -1;
  {
    const auto sizes = split_words(size_line);
    auto to_ll = [](std::string_view w, long long& v) {
      auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
      return ec == std::errc{} && ptr == w.data() + w.size();
    };
    if (sizes.size() != 3 || !to_ll(sizes[0], rows) || !to_ll(sizes[1], cols) || !to_ll(sizes[2], count))
      in.fail("bad size line: expected three integers 'rows cols entries', got '" + std::string(size_line) + "'");
    if (rows < 0 || cols < 0 || count < 0) in.fail("bad size line: negative size");
    if (rows > max_entries || cols > max_entries || count > max_entries)
      in.fail("unsupported size: dimensions and entry count must fit 32-bit indices");
    if (count > 0 && (rows == 0 || cols == 0)) in.fail("bad size line: entries in an empty matrix");
    if (mm.symmetry != MmSymmetry::general && rows != cols)
      in.fail(std::string("bad size line: a ") + to_string(mm.symmetry) + " matrix must be square");
  }

  // Room for the declared entries, but never more than the rest of the file can hold: a size
  // line "1 1 2000000000" in a 20-byte file must end in "truncated file", not in 32 GB of
  // storage. An entry line takes at least "i j\n" (pattern) or "i j v\n"; the last may lack its
  // line end.
  Coo<double>& coo = mm.entries;
  coo.rows = static_cast<index_t>(rows);
  coo.cols = static_cast<index_t>(cols);
  const std::size_t shortest_line = mm.field == MmField::pattern ? 4 : 6;
  const std::size_t room = std::min(static_cast<std::size_t>(count), (in.remaining_bytes() + 1) / shortest_line);
  coo.row_indices.reserve(room);
  coo.col_indices.reserve(room);
  coo.values.reserve(room);

  long long k = 0;
  while (in.begin_line()) {
    if (in.rest_blank()) continue;  // blank lines between entries are tolerated
    if (in.peek_is('%')) {          // so are comment lines
      in.skip_line();
      continue;
    }
    if (k == count)
      in.fail("wrong entry count: more entries than the " + std::to_string(count) + " declared on line " +
              std::to_string(size_line_no));
    long long i = 0, j = 0;
    if (!in.parse_int(i)) in.fail("bad entry: expected an integer row index");
    if (!in.parse_int(j)) in.fail("bad entry: expected an integer column index");
    if (i < 1 || i > rows || j < 1 || j > cols)
      in.fail("index out of range: (" + std::to_string(i) + ", " + std::to_string(j) + ") outside the " +
              std::to_string(rows) + " x " + std::to_string(cols) + " matrix (indices are 1-based)");
    double v = 1.0;
    if (mm.field == MmField::real) {
      if (!in.parse_double(v)) in.fail("bad entry: expected a real value");
    } else if (mm.field == MmField::integer) {
      long long iv = 0;
      if (!in.parse_int(iv)) in.fail("bad entry: expected an integer value");
      v = static_cast<double>(iv);
    }
    if (!in.rest_blank())
      in.fail(mm.field == MmField::pattern ? "bad entry: a pattern entry has exactly two indices"
                                           : "bad entry: unexpected text after the value");
    if (mm.symmetry == MmSymmetry::skew_symmetric && i == j)
      in.fail("bad entry: a skew-symmetric matrix stores no diagonal entries");
    coo.row_indices.push_back(static_cast<index_t>(i - 1));
    coo.col_indices.push_back(static_cast<index_t>(j - 1));
    coo.values.push_back(v);
    ++k;
  }
  if (k < count)
    in.fail_at(in.line() + 1, "truncated file: expected " + std::to_string(count) + " entries (line " +
                                  std::to_string(size_line_no) + "), found " + std::to_string(k));
  return mm;
}

MatrixMarket read_matrix_market(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));
  std::string text;
  if (std::fseek(file.get(), 0, SEEK_END) == 0) {
    const long size = std::ftell(file.get());
    if (size > 0) text.resize(static_cast<std::size_t>(size));
    std::rewind(file.get());
  }
  const std::size_t got = text.empty() ? 0 : std::fread(text.data(), 1, text.size(), file.get());
  text.resize(got);
  return parse_matrix_market(text, path);
}

Coo<double> expand_symmetry(const MatrixMarket& mm) {
  if (mm.symmetry == MmSymmetry::general) return mm.entries;
  const Coo<double>& in = mm.entries;
  const double mirror_sign = mm.symmetry == MmSymmetry::skew_symmetric ? -1.0 : 1.0;
  Coo<double> out;
  out.rows = in.rows;
  out.cols = in.cols;
  std::size_t off_diagonal = 0;
  for (std::size_t k = 0; k < in.nnz(); ++k) off_diagonal += in.row_indices[k] != in.col_indices[k];
  const std::size_t total = in.nnz() + off_diagonal;
  if (total > static_cast<std::size_t>(max_entries))
    throw InputError("expand_symmetry", "the expanded matrix has more than 2^31-1 entries");
  out.row_indices.reserve(total);
  out.col_indices.reserve(total);
  out.values.reserve(total);
  for (std::size_t k = 0; k < in.nnz(); ++k) {
    const index_t i = in.row_indices[k], j = in.col_indices[k];
    out.row_indices.push_back(i);
    out.col_indices.push_back(j);
    out.values.push_back(in.values[k]);
    if (i != j) {
      out.row_indices.push_back(j);
      out.col_indices.push_back(i);
      out.values.push_back(mirror_sign * in.values[k]);
    }
  }
  return out;
}

template <class T>
Csr<T> read_csr(const std::string& path) {
  Csr<double> csr = coo_to_csr(expand_symmetry(read_matrix_market(path)));
  sort_rows(csr);
  if constexpr (std::is_same_v<T, double>) return csr;
  else return cast_values<T>(csr);
}
template Csr<float> read_csr<float>(const std::string&);
template Csr<double> read_csr<double>(const std::string&);

Coo<double> lower_triangle(const Coo<double>& coo, bool keep_diagonal) {
  Coo<double> out;
  out.rows = coo.rows;
  out.cols = coo.cols;
  for (std::size_t k = 0; k < coo.nnz(); ++k) {
    const index_t i = coo.row_indices[k], j = coo.col_indices[k];
    if (i > j || (keep_diagonal && i == j)) {
      out.row_indices.push_back(i);
      out.col_indices.push_back(j);
      out.values.push_back(coo.values[k]);
    }
  }
  return out;
}

std::string format_matrix_market(const Coo<double>& entries, const MmWriteOptions& options) {
  validate(entries, "write_matrix_market");
  if (options.symmetry != MmSymmetry::general && entries.rows != entries.cols)
    throw InputError("write_matrix_market", std::string("a ") + to_string(options.symmetry) + " matrix must be square");
  std::string out;
  out.reserve(64 + entries.nnz() * 32);
  out += "%%MatrixMarket matrix coordinate ";
  out += to_string(options.field);
  out += ' ';
  out += to_string(options.symmetry);
  out += '\n';
  for (const std::string& c : options.comments) {
    if (c.find('\n') != std::string::npos) throw InputError("write_matrix_market", "a comment line contains a newline");
    out += '%';
    out += c;
    out += '\n';
  }
  out += std::to_string(entries.rows) + ' ' + std::to_string(entries.cols) + ' ' + std::to_string(entries.nnz()) + '\n';
  char buf[64];
  for (std::size_t k = 0; k < entries.nnz(); ++k) {
    const index_t i = entries.row_indices[k], j = entries.col_indices[k];
    if (options.symmetry != MmSymmetry::general && i < j)
      throw InputError("write_matrix_market", "entry " + std::to_string(k) + " lies above the diagonal of a " +
                                                  to_string(options.symmetry) + " matrix (pass lower_triangle(m))");
    if (options.symmetry == MmSymmetry::skew_symmetric && i == j)
      throw InputError("write_matrix_market", "entry " + std::to_string(k) + " is on the diagonal of a skew-symmetric matrix");
    auto put = [&](auto number) { out.append(buf, std::to_chars(buf, buf + sizeof buf, number).ptr); };
    put(i + 1);
    out += ' ';
    put(j + 1);
    const double v = entries.values[k];
    if (options.field == MmField::real) {
      out += ' ';
      put(v);  // shortest representation that round-trips
    } else if (options.field == MmField::integer) {
      if (v != std::floor(v) || std::abs(v) > 9.0e18)
        throw InputError("write_matrix_market", "entry " + std::to_string(k) + " is not an integer value");
      out += ' ';
      put(static_cast<long long>(v));
    }
    out += '\n';
  }
  return out;
}

void write_matrix_market(const std::string& path, const Coo<double>& entries, const MmWriteOptions& options) {
  const std::string text = format_matrix_market(entries, options);
  std::ofstream file(path, std::ios::binary);
  if (!file) throw InputError(path, std::string("cannot create: ") + std::strerror(errno));
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!file) throw InputError(path, "write failed");
}

}  // namespace apiary::sparse
