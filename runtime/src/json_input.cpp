#include <apiary/error.hpp>
#include <apiary/json_input.hpp>

#include <fstream>
#include <sstream>

namespace apiary {

namespace {

using nlohmann::json;

// A SAX consumer that builds nothing and keeps the first error with its byte position. The
// DOM parser's exceptions carry a position only for syntax errors; a number overflow (406)
// says which number but not where, so a failed parse is replayed through this to find out.
class ErrorLocator : public nlohmann::json_sax<json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& error) override {
    found = true;
    byte = position;
    id = error.id;
    message = error.what();
    return false;
  }

  bool found = false;
  std::size_t byte = 0;  // one past the offending character
  int id = 0;
  std::string message;
};

// nlohmann's message without "[json.exception.parse_error.101] parse error at line L, column C: ".
std::string reason_of(const ErrorLocator& error) {
  std::string reason = error.message;
  if (const auto pos = reason.find("syntax error"); pos != std::string::npos) return "JSON syntax error: " + reason.substr(pos);
  if (const auto pos = reason.find("] "); pos != std::string::npos) reason = reason.substr(pos + 2);
  if (error.id == 406) return "JSON number out of range: " + reason + " (numbers must fit a 64-bit float)";
  return "malformed JSON: " + reason;
}

}  // namespace

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

json parse_json(std::string_view text, const std::string& source, JsonComments comments) {
  const bool ignore_comments = comments == JsonComments::allowed;
  try {
    return json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/true, ignore_comments);
  } catch (const json::exception& e) {
    ErrorLocator error;
    json::sax_parse(text.begin(), text.end(), &error, nlohmann::detail::input_format_t::json, /*strict=*/true,
                    ignore_comments);
    if (!error.found) throw InputError(source, std::string("malformed JSON: ") + e.what());
    const auto [line, column] = line_column(text, error.byte > 0 ? error.byte - 1 : 0);
    throw InputError(source + ":" + std::to_string(line) + ":" + std::to_string(column), reason_of(error));
  }
}

json load_json_file(const std::filesystem::path& file, JsonComments comments) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), "cannot open file (does it exist and is it readable?)");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_json(buffer.str(), file.string(), comments);
}

}  // namespace apiary
