#pragma once
// Files in and out: JSON input with errors that name the input, and atomic writes.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

namespace saltation::io {

// Reads and parses a JSON file ("-": standard input). Throws IoError when the file cannot be
// read and InvalidInput("input", ...) when it is not JSON (NaN and Inf are not JSON numbers).
nlohmann::json read_json_file(const std::string& path);
// The folder of a file named in an input ("" for the working folder): what a path in that input is relative to.
std::string parent_folder(const std::string& path);
// Parses JSON text, throwing InvalidInput("input", ...) with the parser's line and column.
nlohmann::json parse_json(const std::string& text);

// Writes bytes to `path` atomically (a temporary file renamed into place). Throws IoError.
void write_file_atomically(const std::string& path, const std::string& bytes);

// The temporary file a writer fills before it appears under its name: path + ".tmp.<pid>".
std::string temporary_path(const std::string& path);
// Finishes an atomic write: flushes, syncs and closes `file` (the temporary, written in full and
// without error when `written`), then renames it to `path`. On any failure the temporary is
// removed and IoError names `path`: a failed write never leaves a file behind.
void commit_temporary(std::FILE* file, bool written, const std::string& path);

}  // namespace saltation::io
