#include <apiary/error.hpp>
#include <apiary/json_input.hpp>

#include <fstream>
#include <sstream>

namespace apiary {

std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

nlohmann::json parse_json(std::string_view text, const std::string& source) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is one past the offending character.
    const auto [line, column] = line_column(text, e.byte > 0 ? e.byte - 1 : 0);
    std::string reason = e.what();
    if (const auto pos = reason.find("syntax error"); pos != std::string::npos) reason = reason.substr(pos);
    throw InputError(source + ":" + std::to_string(line) + ":" + std::to_string(column),
                     "malformed JSON: " + reason);
  }
}

nlohmann::json load_json_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), "cannot open file (does it exist and is it readable?)");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_json(buffer.str(), file.string());
}

}  // namespace apiary
