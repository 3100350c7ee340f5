// Reading JSON input with errors that point at the file, line and column.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace apiary {

// Parses `text`; a syntax error becomes InputError("source:line:column", reason).
nlohmann::json parse_json(std::string_view text, const std::string& source);
// Reads and parses a file; a missing file is an InputError naming it.
nlohmann::json load_json_file(const std::filesystem::path& file);
// Line and column (1-based) of a byte offset in `text`.
std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t offset);

}  // namespace apiary
