#include <apiary/sparse/generators.hpp>

#include <apiary/error.hpp>
#include <apiary/parse_number.hpp>
#include <apiary/platform.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <thread>
#include <utility>

namespace apiary::sparse {
namespace {

unsigned g_threads = 0;

unsigned thread_count(std::size_t work) {
  const unsigned hw = g_threads ? g_threads : std::max(1u, std::thread::hardware_concurrency());
  const std::size_t useful = std::max<std::size_t>(1, work / 8192);
  return static_cast<unsigned>(std::min<std::size_t>(hw, useful));
}

// Splits [0, n) into one contiguous chunk per thread; f(begin, end).
template <class F>
void parallel_for(std::size_t n, F&& f) {
  const unsigned t = thread_count(n);
  if (t <= 1) {
    f(std::size_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(t);
  for (unsigned i = 0; i < t; ++i) {
    const std::size_t b = n * i / t, e = n * (i + 1) / t;
    pool.emplace_back([&f, b, e] { f(b, e); });
  }
  for (auto& th : pool) th.join();
}

// Uniform double in [0, 1) from a counter.
inline double uniform(std::uint64_t key) { return static_cast<double>(mix64(key) >> 11) * 0x1.0p-53; }
inline std::uint64_t key2(std::uint64_t a, std::uint64_t b) { return mix64(a * 0x9e3779b97f4a7c15ull + b); }
inline std::uint64_t key3(std::uint64_t a, std::uint64_t b, std::uint64_t c) { return key2(key2(a, b), c); }

void check_entries(std::size_t total, const char* who) {
  if (total > static_cast<std::size_t>(max_entries))
    throw InputError(who, "the matrix would have " + std::to_string(total) + " entries; at most 2^31-1 fit 32-bit offsets");
}

// Builds CSR row by row in parallel. bound(r) is an upper bound of row r's length; fill(r,
// cols, vals) writes the row (sorted, unique) and returns its real length.
template <class Bound, class Fill>
Csr<double> build_rows(index_t rows, index_t cols, Bound&& bound, Fill&& fill, const char* who) {
  std::vector<std::int64_t> start(static_cast<std::size_t>(rows) + 1, 0);
  parallel_for(rows, [&](std::size_t b, std::size_t e) {
    for (std::size_t r = b; r < e; ++r) start[r + 1] = bound(static_cast<index_t>(r));
  });
  std::partial_sum(start.begin(), start.end(), start.begin());
  check_entries(static_cast<std::size_t>(start.back()), who);
  std::vector<index_t> c(static_cast<std::size_t>(start.back()));
  std::vector<double> v(static_cast<std::size_t>(start.back()));
  std::vector<index_t> len(rows);
  parallel_for(rows, [&](std::size_t b, std::size_t e) {
    for (std::size_t r = b; r < e; ++r) len[r] = fill(static_cast<index_t>(r), c.data() + start[r], v.data() + start[r]);
  });
  Csr<double> m;
  m.rows = rows;
  m.cols = cols;
  m.row_offsets.assign(static_cast<std::size_t>(rows) + 1, 0);
  for (index_t r = 0; r < rows; ++r) m.row_offsets[r + 1] = m.row_offsets[r] + len[r];
  if (static_cast<std::int64_t>(m.row_offsets.back()) == start.back()) {
    m.col_indices = std::move(c);
    m.values = std::move(v);
    return m;
  }
  m.col_indices.resize(static_cast<std::size_t>(m.row_offsets.back()));
  m.values.resize(m.col_indices.size());
  parallel_for(rows, [&](std::size_t b, std::size_t e) {
    for (std::size_t r = b; r < e; ++r) {
      std::copy_n(c.begin() + start[r], len[r], m.col_indices.begin() + m.row_offsets[r]);
      std::copy_n(v.begin() + start[r], len[r], m.values.begin() + m.row_offsets[r]);
    }
  });
  return m;
}

// Sorts the columns of a row in place and removes duplicates; returns the new length.
index_t sort_unique(index_t* c, index_t n) {
  std::sort(c, c + n);
  return static_cast<index_t>(std::unique(c, c + n) - c);
}

// CSR from an edge list (src[k] -> dst[k]); duplicates removed, optionally self loops too;
// value(i, j) gives each surviving entry's value.
template <class Value>
Csr<double> csr_from_edges(index_t n, const std::vector<index_t>& src, const std::vector<index_t>& dst, bool drop_self,
                           Value&& value, const char* who) {
  std::vector<index_t> count(static_cast<std::size_t>(n) + 1, 0);
  parallel_for(src.size(), [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) std::atomic_ref<index_t>(count[src[k] + 1]).fetch_add(1, std::memory_order_relaxed);
  });
  std::vector<std::int64_t> start(static_cast<std::size_t>(n) + 1, 0);
  for (index_t r = 0; r < n; ++r) start[r + 1] = start[r] + count[r + 1];
  std::vector<std::int64_t> cursor(start.begin(), start.end() - 1);
  std::vector<index_t> cols(src.size());
  parallel_for(src.size(), [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k)
      cols[std::atomic_ref<std::int64_t>(cursor[src[k]]).fetch_add(1, std::memory_order_relaxed)] = dst[k];
  });
  cursor = {};
  return build_rows(
      n, n, [&](index_t r) { return static_cast<index_t>(start[r + 1] - start[r]); },
      [&](index_t r, index_t* c, double* v) {
        index_t len = static_cast<index_t>(start[r + 1] - start[r]);
        std::copy_n(cols.begin() + start[r], len, c);
        len = sort_unique(c, len);
        if (drop_self) len = static_cast<index_t>(std::remove(c, c + len, r) - c);
        for (index_t k = 0; k < len; ++k) v[k] = value(r, c[k]);
        return len;
      },
      who);
}

// A symmetric random weight in [0.1, 1): the same for (i, j) and (j, i).
inline double symmetric_weight(std::uint64_t seed, index_t i, index_t j) {
  return 0.1 + 0.9 * uniform(key3(seed, static_cast<std::uint64_t>(std::min(i, j)), static_cast<std::uint64_t>(std::max(i, j))));
}

}  // namespace

void set_generator_threads(unsigned threads) { g_threads = threads; }

Csr<double> laplacian_2d(index_t nx, index_t ny, int points) {
  if (points != 5 && points != 9) throw InputError("laplacian_2d", "points must be 5 or 9, got " + std::to_string(points));
  if (nx <= 0 || ny <= 0) throw InputError("laplacian_2d", "grid sizes must be positive");
  check_entries(static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny) * static_cast<std::size_t>(points), "laplacian_2d");
  const index_t n = nx * ny;
  auto neighbours = [=](index_t r, index_t* c, double* v) {
    const index_t x = r % nx, y = r / nx;
    index_t len = 0;
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (points == 5 && dx != 0 && dy != 0) continue;
        if (x + dx < 0 || x + dx >= nx || y + dy < 0 || y + dy >= ny) continue;
        if (c) {
          c[len] = r + dy * nx + dx;
          v[len] = (dx == 0 && dy == 0) ? static_cast<double>(points - 1) : -1.0;
        }
        ++len;
      }
    return len;
  };
  return build_rows(
      n, n, [&](index_t r) { return neighbours(r, nullptr, nullptr); }, neighbours, "laplacian_2d");
}

Csr<double> laplacian_3d(index_t nx, index_t ny, index_t nz, int points) {
  if (points != 7 && points != 27) throw InputError("laplacian_3d", "points must be 7 or 27, got " + std::to_string(points));
  if (nx <= 0 || ny <= 0 || nz <= 0) throw InputError("laplacian_3d", "grid sizes must be positive");
  const std::size_t rows = static_cast<std::size_t>(nx) * ny * nz;
  if (rows > static_cast<std::size_t>(max_entries)) throw InputError("laplacian_3d", "too many rows for 32-bit indices");
  const index_t n = static_cast<index_t>(rows);
  const index_t plane = nx * ny;
  auto neighbours = [=](index_t r, index_t* c, double* v) {
    const index_t x = r % nx, y = (r / nx) % ny, z = r / plane;
    index_t len = 0;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (points == 7 && std::abs(dx) + std::abs(dy) + std::abs(dz) > 1) continue;
          if (x + dx < 0 || x + dx >= nx || y + dy < 0 || y + dy >= ny || z + dz < 0 || z + dz >= nz) continue;
          if (c) {
            c[len] = r + dz * plane + dy * nx + dx;
            v[len] = (dx == 0 && dy == 0 && dz == 0) ? static_cast<double>(points - 1) : -1.0;
          }
          ++len;
        }
    return len;
  };
  return build_rows(
      n, n, [&](index_t r) { return neighbours(r, nullptr, nullptr); }, neighbours, "laplacian_3d");
}

std::vector<index_t> random_permutation(index_t n, std::uint64_t seed) {
  std::vector<index_t> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  for (index_t i = n - 1; i > 0; --i) {
    const index_t j = static_cast<index_t>(mix64(key2(seed, static_cast<std::uint64_t>(i))) % static_cast<std::uint64_t>(i + 1));
    std::swap(p[i], p[j]);
  }
  return p;
}

Csr<double> permute_symmetric(const Csr<double>& a, const std::vector<index_t>& perm) {
  if (a.rows != a.cols || perm.size() != static_cast<std::size_t>(a.rows))
    throw InputError("permute_symmetric", "needs a square matrix and a permutation of its rows");
  std::vector<index_t> inverse(perm.size(), -1);
  for (std::size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= a.rows || inverse[perm[i]] != -1) throw InputError("permute_symmetric", "not a permutation");
    inverse[perm[i]] = static_cast<index_t>(i);
  }
  return build_rows(
      a.rows, a.cols, [&](index_t r) { return a.row_offsets[perm[r] + 1] - a.row_offsets[perm[r]]; },
      [&](index_t r, index_t* c, double* v) {
        const index_t old = perm[r], b = a.row_offsets[old], len = a.row_offsets[old + 1] - b;
        std::vector<std::pair<index_t, double>> row(static_cast<std::size_t>(len));
        for (index_t k = 0; k < len; ++k) row[k] = {inverse[a.col_indices[b + k]], a.values[b + k]};
        std::sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        for (index_t k = 0; k < len; ++k) {
          c[k] = row[k].first;
          v[k] = row[k].second;
        }
        return len;
      },
      "permute_symmetric");
}

Csr<double> rmat(int scale, double edge_factor, double a, double b, double c, std::uint64_t seed, bool symmetric) {
  if (scale < 1 || scale > 30) throw InputError("rmat", "scale must be in [1, 30]");
  if (!(a >= 0 && b >= 0 && c >= 0 && a + b + c <= 1))
    throw InputError("rmat", "quadrant probabilities must be >= 0 and sum to <= 1");
  const index_t n = index_t{1} << scale;
  if (!(edge_factor >= 0 && edge_factor * static_cast<double>(n) <= static_cast<double>(max_entries)))
    throw InputError("rmat", "edge factor " + std::to_string(edge_factor) + " must be >= 0, and edge factor x 2^scale at most 2^31-1");
  const auto edges = static_cast<std::size_t>(edge_factor * static_cast<double>(n));
  check_entries(edges * (symmetric ? 2 : 1), "rmat");
  const std::vector<index_t> label = random_permutation(n, key2(seed, 0x5eed));
  std::vector<index_t> src(edges * (symmetric ? 2 : 1)), dst(src.size());
  parallel_for(edges, [&](std::size_t begin, std::size_t end) {
    for (std::size_t e = begin; e < end; ++e) {
      index_t i = 0, j = 0;
      for (int level = 0; level < scale; ++level) {
        const double r = uniform(key3(seed, e, static_cast<std::uint64_t>(level)));
        const index_t bit = index_t{1} << (scale - 1 - level);
        if (r < a) {
        } else if (r < a + b) {
          j |= bit;
        } else if (r < a + b + c) {
          i |= bit;
        } else {
          i |= bit;
          j |= bit;
        }
      }
      src[e] = label[i];
      dst[e] = label[j];
      if (symmetric) {
        src[edges + e] = label[j];
        dst[edges + e] = label[i];
      }
    }
  });
  return csr_from_edges(
      n, src, dst, true, [&](index_t i, index_t j) { return symmetric_weight(seed, i, j); }, "rmat");
}

Csr<double> diagonally_dominant(index_t n, double avg_row, std::uint64_t seed) {
  // Written so that NaN fails too; a row cannot hold more than n entries.
  if (!(n > 0 && avg_row >= 1 && avg_row <= static_cast<double>(n)))
    throw InputError("diagonally_dominant", "needs n > 0 and 1 <= avg <= n, got n = " + std::to_string(n) +
                                                ", avg = " + std::to_string(avg_row));
  const auto pairs = static_cast<index_t>(std::max(0.0, std::round((avg_row - 1) / 2)));
  check_entries(static_cast<std::size_t>(n) * (2 * static_cast<std::size_t>(pairs) + 1), "diagonally_dominant");
  std::vector<index_t> src(static_cast<std::size_t>(n) * (2 * pairs + 1)), dst(src.size());
  parallel_for(n, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      std::size_t k = i * (2 * pairs + 1);
      src[k] = dst[k] = static_cast<index_t>(i);
      for (index_t p = 0; p < pairs; ++p) {
        const auto j = static_cast<index_t>(mix64(key3(seed, i, static_cast<std::uint64_t>(p))) % static_cast<std::uint64_t>(n));
        src[k + 1 + 2 * p] = static_cast<index_t>(i);
        dst[k + 1 + 2 * p] = j;
        src[k + 2 + 2 * p] = j;
        dst[k + 2 + 2 * p] = static_cast<index_t>(i);
      }
    }
  });
  Csr<double> m = csr_from_edges(
      n, src, dst, false, [&](index_t i, index_t j) { return i == j ? 0.0 : -symmetric_weight(seed, i, j); },
      "diagonally_dominant");
  // Strict diagonal dominance: diagonal = 1 + sum of |off-diagonal| of the row.
  parallel_for(n, [&](std::size_t b, std::size_t e) {
    for (std::size_t r = b; r < e; ++r) {
      double sum = 0;
      std::int64_t diag = -1;
      for (index_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
        if (m.col_indices[k] == static_cast<index_t>(r)) diag = k;
        else sum += std::abs(m.values[k]);
      }
      m.values[diag] = 1.0 + sum;
    }
  });
  return m;
}

Csr<double> power_law_rows(index_t n, double avg_row, double alpha, index_t max_row, std::uint64_t seed) {
  if (!(n > 0 && avg_row > 0 && avg_row <= static_cast<double>(n) && alpha > 1 && std::isfinite(alpha) && max_row >= 1))
    throw InputError("power_law_rows", "needs n > 0, 0 < avg <= n, finite alpha > 1, max >= 1");
  max_row = std::min(max_row, n);
  const double xmin = avg_row * (alpha - 1) / alpha;  // Pareto mean = xmin * alpha / (alpha - 1)
  auto length = [=](index_t r) {
    const double u = 1.0 - uniform(key2(seed, static_cast<std::uint64_t>(r)));  // (0, 1]
    const double x = xmin / std::pow(u, 1.0 / alpha);
    const double rounded = std::floor(x + uniform(key3(seed, r, 1)));
    return static_cast<index_t>(std::min<double>(rounded, max_row));
  };
  return build_rows(
      n, n, length,
      [&](index_t r, index_t* c, double* v) {
        const index_t len = length(r);
        for (index_t k = 0; k < len; ++k)
          c[k] = static_cast<index_t>(mix64(key3(seed ^ 0xc01, r, static_cast<std::uint64_t>(k))) % static_cast<std::uint64_t>(n));
        const index_t unique = sort_unique(c, len);
        for (index_t k = 0; k < unique; ++k) v[k] = symmetric_weight(seed, r, c[k]);
        return unique;
      },
      "power_law_rows");
}

Csr<double> long_rows(index_t n, double avg_row, index_t num_long, index_t long_len, std::uint64_t seed) {
  if (!(n > 0 && avg_row >= 1 && avg_row <= static_cast<double>(n) && num_long >= 0 && long_len >= 1))
    throw InputError("long_rows", "needs n > 0, 1 <= avg <= n, long >= 0, len >= 1");
  long_len = std::min(long_len, n);
  std::map<index_t, index_t> long_length;  // row -> length; the k-th long row has len/(k+1)
  for (index_t k = 0; k < num_long; ++k) {
    const auto row = static_cast<index_t>(mix64(key2(seed ^ 0x1009, static_cast<std::uint64_t>(k))) % static_cast<std::uint64_t>(n));
    long_length.emplace(row, std::max<index_t>(1, long_len / (k + 1)));
  }
  const auto band = static_cast<index_t>(std::max(8.0, 4 * avg_row));
  auto short_length = [=](index_t r) {
    // Uniform in [avg/2, 3avg/2], at least 1 (the diagonal).
    return std::max<index_t>(1, static_cast<index_t>(avg_row * (0.5 + uniform(key2(seed, static_cast<std::uint64_t>(r))))));
  };
  return build_rows(
      n, n,
      [&](index_t r) {
        auto it = long_length.find(r);
        return it != long_length.end() ? it->second : short_length(r);
      },
      [&](index_t r, index_t* c, double* v) {
        auto it = long_length.find(r);
        index_t len = 0;
        if (it != long_length.end()) {
          for (index_t k = 0; k < it->second; ++k)
            c[k] = static_cast<index_t>(mix64(key3(seed ^ 0x10c, r, static_cast<std::uint64_t>(k))) % static_cast<std::uint64_t>(n));
          len = it->second;
        } else {
          len = short_length(r);
          c[0] = r;
          for (index_t k = 1; k < len; ++k) {
            const auto off = static_cast<index_t>(mix64(key3(seed ^ 0xba4d, r, static_cast<std::uint64_t>(k))) % static_cast<std::uint64_t>(2 * band + 1)) - band;
            c[k] = std::clamp<index_t>(r + off, 0, n - 1);
          }
        }
        len = sort_unique(c, len);
        for (index_t k = 0; k < len; ++k) v[k] = c[k] == r ? 4.0 : -symmetric_weight(seed, r, c[k]);
        return len;
      },
      "long_rows");
}

Csr<double> regular_rows(index_t n, index_t k, std::uint64_t seed) {
  if (n <= 0 || k < 0 || k > n) throw InputError("regular_rows", "needs n > 0 and 0 <= k <= n");
  return build_rows(
      n, n, [=](index_t) { return k; },
      [&](index_t r, index_t* c, double* v) {
        index_t len = 0;
        for (std::uint64_t attempt = 0; len < k; ++attempt) {
          const auto col = static_cast<index_t>(mix64(key3(seed, r, attempt)) % static_cast<std::uint64_t>(n));
          if (std::find(c, c + len, col) == c + len) c[len++] = col;
        }
        std::sort(c, c + len);
        for (index_t i = 0; i < len; ++i) v[i] = symmetric_weight(seed, r, c[i]);
        return len;
      },
      "regular_rows");
}

Csr<double> road_network(index_t nx, index_t ny, double keep, std::uint64_t seed) {
  if (!(nx > 0 && ny > 0 && keep >= 0 && keep <= 1)) throw InputError("road_network", "needs nx, ny > 0 and 0 <= keep <= 1");
  if (static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny) > static_cast<std::size_t>(max_entries))
    throw InputError("road_network", "too many rows for 32-bit indices");
  const index_t n = nx * ny;
  // Edge (v, v+1) is "right of v", (v, v+nx) "below v"; each kept with probability `keep`.
  auto kept = [=](index_t v, int dir) { return uniform(key3(seed, static_cast<std::uint64_t>(v), static_cast<std::uint64_t>(dir))) < keep; };
  auto fill = [=](index_t r, index_t* c, double* v) {
    const index_t x = r % nx, y = r / nx;
    index_t len = 0;
    auto add = [&](index_t col) {
      if (c) {
        c[len] = col;
        v[len] = symmetric_weight(seed, r, col);
      }
      ++len;
    };
    if (y > 0 && kept(r - nx, 1)) add(r - nx);
    if (x > 0 && kept(r - 1, 0)) add(r - 1);
    if (x + 1 < nx && kept(r, 0)) add(r + 1);
    if (y + 1 < ny && kept(r, 1)) add(r + nx);
    return len;
  };
  return build_rows(
      n, n, [&](index_t r) { return fill(r, nullptr, nullptr); }, fill, "road_network");
}

Csr<double> generate(const std::string& spec) {
  const auto colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  std::map<std::string, double> args;
  if (colon != std::string::npos) {
    std::size_t pos = colon + 1;
    while (pos < spec.size()) {
      std::size_t comma = spec.find(',', pos);
      if (comma == std::string::npos) comma = spec.size();
      const std::string item = spec.substr(pos, comma - pos);
      const auto eq = item.find('=');
      if (eq == std::string::npos) throw InputError(spec, "expected key=value, got '" + item + "'");
      args[item.substr(0, eq)] = parse_real(item.substr(eq + 1), spec, std::numeric_limits<double>::lowest(),
                                             std::numeric_limits<double>::max());
      pos = comma + 1;
    }
  }
  std::set<std::string> used;
  auto get = [&](const std::string& key, double fallback) {
    used.insert(key);
    auto it = args.find(key);
    return it == args.end() ? fallback : it->second;
  };
  auto need = [&](const std::string& key) {
    used.insert(key);
    auto it = args.find(key);
    if (it == args.end()) throw InputError(spec, "missing key '" + key + "'");
    return it->second;
  };
  // Values are doubles (so that 1e6 works); converting one that does not fit is undefined.
  auto whole = [&](double v, double lo, double hi, const char* what) {
    if (!(v >= lo && v <= hi && v == std::floor(v)))
      throw InputError(spec, std::string(what) + " " + std::to_string(v) + " must be a whole number in [" +
                                 std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  };
  auto as_index = [&](double v) { return static_cast<index_t>(whole(v, 0, static_cast<double>(max_entries), "size")); };
  auto as_int = [&](double v) { return static_cast<int>(whole(v, -1024, 1024, "parameter")); };
  const auto seed = static_cast<std::uint64_t>(whole(get("seed", 1), 0, 0x1p63, "seed"));

  Csr<double> m;
  if (kind == "A3" || kind == "A4" || kind == "A5" || kind == "A6") {
    // The thesis's Jacobi matrices: n and average entries per row.
    const std::map<std::string, std::pair<index_t, double>> shapes{
        {"A3", {10000, 11}}, {"A4", {10000, 21}}, {"A5", {20000, 27}}, {"A6", {32000, 14}}};
    m = diagonally_dominant(shapes.at(kind).first, shapes.at(kind).second, seed);
  } else if (kind == "lap2d") {
    const double n = get("n", 0);
    m = laplacian_2d(as_index(get("nx", n)), as_index(get("ny", get("nx", n))), as_int(get("points", 5)));
  } else if (kind == "lap3d") {
    const double n = get("n", 0);
    m = laplacian_3d(as_index(get("nx", n)), as_index(get("ny", get("nx", n))), as_index(get("nz", get("nx", n))),
                     as_int(get("points", 7)));
  } else if (kind == "rmat") {
    m = rmat(as_int(need("scale")), get("ef", 16), get("a", 0.57), get("b", 0.19), get("c", 0.19), seed,
             get("sym", 1) != 0);
  } else if (kind == "diagdom") {
    m = diagonally_dominant(as_index(need("n")), need("avg"), seed);
  } else if (kind == "powerlaw") {
    m = power_law_rows(as_index(need("n")), need("avg"), get("alpha", 2.0), as_index(get("max", 1e9)), seed);
  } else if (kind == "longrows") {
    m = long_rows(as_index(need("n")), get("avg", 10), as_index(get("long", 1)), as_index(need("len")), seed);
  } else if (kind == "regular") {
    m = regular_rows(as_index(need("n")), as_index(get("k", 8)), seed);
  } else if (kind == "road") {
    const double n = get("n", 0);
    m = road_network(as_index(get("nx", n)), as_index(get("ny", get("nx", n))), get("keep", 0.53), seed);
  } else {
    throw InputError(spec, "unknown generator '" + kind +
                               "' (lap2d, lap3d, rmat, diagdom, powerlaw, longrows, regular, road, A3..A6)");
  }
  if (get("perm", 0) != 0) m = permute_symmetric(m, random_permutation(m.rows, seed ^ 0x9e37));
  for (const auto& [key, value] : args)
    if (!used.count(key)) throw InputError(spec, "unknown key '" + key + "' for generator '" + kind + "'");
  return m;
}

}  // namespace apiary::sparse
