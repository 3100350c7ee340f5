// Reading JSON input with errors that point at the file, line and column.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace apiary {

// Whether // and /* */ comments are allowed (hand-written configs) or not (machine output).
enum class JsonComments { rejected, allowed };

// Parses `text`. Malformed JSON, and numbers that do not fit a double (1e999), become
// InputError("source:line:column", reason) pointing at the offending character; nothing else
// escapes from here.
nlohmann::json parse_json(std::string_view text, const std::string& source,
                          JsonComments comments = JsonComments::rejected);
// Reads and parses a file; a missing file is an InputError naming it.
nlohmann::json load_json_file(const std::filesystem::path& file,
                              JsonComments comments = JsonComments::rejected);
// Line and column (1-based) of a byte offset in `text`.
std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t offset);

}  // namespace apiary
