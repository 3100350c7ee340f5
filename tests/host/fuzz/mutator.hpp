// Mutations of valid input files for the robustness tests of the parsers: what a typo, an
// editor, a cut-off download or a hostile file does to a config, a Matrix Market file or a
// trace. Deterministic for a seed, so a failure can be replayed (APIARY_FUZZ_SEED).
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>

namespace apiary::fuzz {

// Tokens that hit the parsers' edges: integer and float limits, signs, JSON literals and
// structure, Matrix Market markers, line ends.
inline constexpr std::array<std::string_view, 40> tokens = {
    "0", "-0", "1", "-1", "+1", "2", "255", "65536", "2147483647", "2147483648", "-2147483649",
    "4294967295", "4294967296", "9223372036854775807", "9223372036854775808", "18446744073709551615",
    "18446744073709551616", "99999999999999999999999", "1e308", "1e999", "-1e999", "1e-400",
    "0.5", "1.5", "nan", "inf", "null", "true", "\"auto\"", "\"\"", "[]", "{}", "[[[[[[[[",
    "\"\\u0000\"", "%%MatrixMarket matrix coordinate real general", "%", "\n", "\r\n", "\t", "\xff\xfe"};

inline constexpr std::string_view structure_bytes = "{}[]\":,.-+eE0123456789 \n%\\";

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}

  // One to four mutations of `text`.
  std::string mutate(std::string text) {
    const int count = 1 + static_cast<int>(below(4));
    for (int i = 0; i < count; ++i) mutate_once(text);
    return text;
  }

 private:
  std::size_t below(std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
  std::size_t position(const std::string& text) { return below(text.size() + 1); }
  std::string_view token() { return tokens[below(tokens.size())]; }

  void mutate_once(std::string& text) {
    switch (below(8)) {
      case 0: flip_byte(text); break;
      case 1: set_structure_byte(text); break;
      case 2: erase_range(text); break;
      case 3: duplicate_range(text); break;
      case 4: text.insert(position(text), token()); break;
      case 5: text.resize(position(text)); break;  // a file cut short
      case 6: replace_number(text); break;
      default: replace_number(text); break;  // numbers carry most of the meaning: twice the weight
    }
  }

  void flip_byte(std::string& text) {
    if (text.empty()) return;
    text[below(text.size())] = static_cast<char>(below(256));
  }
  void set_structure_byte(std::string& text) {
    if (text.empty()) return;
    text[below(text.size())] = structure_bytes[below(structure_bytes.size())];
  }
  void erase_range(std::string& text) {
    const std::size_t at = position(text);
    text.erase(at, 1 + below(16));
  }
  void duplicate_range(std::string& text) {
    const std::size_t from = position(text);
    const std::string piece = text.substr(from, 1 + below(64));
    text.insert(position(text), piece);
  }
  // Swaps a run of digits (a count, a size, an index, a value) for a limit token.
  void replace_number(std::string& text) {
    if (text.empty()) return;
    std::size_t at = below(text.size());
    const std::size_t digit = text.find_first_of("0123456789", at);
    at = digit != std::string::npos ? digit : text.find_first_of("0123456789");
    if (at == std::string::npos) return;
    std::size_t end = at;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    text.replace(at, end - at, token());
  }

  std::mt19937_64 rng_;
};

// The seed of this run: APIARY_FUZZ_SEED when set (to replay a failure), else a fresh one.
inline std::uint64_t run_seed() {
  if (const char* s = std::getenv("APIARY_FUZZ_SEED")) return std::strtoull(s, nullptr, 0);
  return std::random_device{}() * 0x9e3779b97f4a7c15ULL ^ std::random_device{}();
}

// Mutants per seed input, scaled by APIARY_FUZZ_SCALE (the sanitizer build runs fewer).
inline std::size_t mutants_per_input(std::size_t base) {
  double scale = 1.0;
  if (const char* s = std::getenv("APIARY_FUZZ_SCALE")) scale = std::strtod(s, nullptr);
  return std::max<std::size_t>(1, static_cast<std::size_t>(static_cast<double>(base) * scale));
}

// The input, printable: control and non-ASCII bytes as \xNN, cut at `limit` bytes.
inline std::string escaped(std::string_view text, std::size_t limit = 2000) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') out += "\\n\n";
    else if (c == '\\') out += "\\\\";
    else if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else out.append("\\x").append(1, hex[c >> 4]).append(1, hex[c & 15]);
  }
  if (text.size() > limit) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace apiary::fuzz
