#pragma once
// Files in and out: JSON input with errors that name the input, and atomic writes.
#include <nlohmann/json.hpp>

#include <string>

namespace saltation::io {

// Reads and parses a JSON file ("-": standard input). Throws IoError when the file cannot be
// read and InvalidInput("input", ...) when it is not JSON (NaN and Inf are not JSON numbers).
nlohmann::json read_json_file(const std::string& path);
// Parses JSON text, throwing InvalidInput("input", ...) with the parser's line and column.
nlohmann::json parse_json(const std::string& text);

// Writes bytes to `path` atomically (a temporary file renamed into place). Throws IoError.
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace saltation::io
