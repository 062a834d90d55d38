#pragma once
#include <stdexcept>
#include <string>
#include <utility>

namespace saltation {

// Bad user input, detected on the host before any work is launched. `parameter` names the
// offending input and `row` the batch row (-1 when the input is not per-row).
class InvalidInput : public std::invalid_argument {
 public:
  InvalidInput(std::string parameter, long row, const std::string& what)
      : InvalidInput(std::move(parameter), row, 0, 0, what) {}
  // An error at a place in a text input (a JSON syntax error): 1-based line and column.
  InvalidInput(std::string parameter, long row, long line, long column, const std::string& what)
      : std::invalid_argument(compose(parameter, row, line, column, what)),
        parameter_(std::move(parameter)),
        message_(what),
        row_(row),
        line_(line),
        column_(column) {}
  const std::string& parameter() const { return parameter_; }
  const std::string& message() const { return message_; }  // what() without the parameter and place
  long row() const { return row_; }
  long line() const { return line_; }      // 0 when the error has no place in a text
  long column() const { return column_; }  // 0 when the error has no place in a text

 private:
  static std::string compose(const std::string& parameter, long row, long line, long column, const std::string& what) {
    std::string place = row >= 0 ? "row " + std::to_string(row) : "";
    if (line > 0)
      place += (place.empty() ? "" : ", ") + ("line " + std::to_string(line) + ", column " + std::to_string(column));
    std::string s = "invalid input: " + parameter;
    if (!place.empty()) s += " (" + place + ")";
    return s + ": " + what;
  }
  std::string parameter_, message_;
  long row_;
  long line_, column_;
};

// A file that cannot be read or written (missing, unwritable, disk full), with its path.
class IoError : public std::runtime_error {
 public:
  IoError(std::string path, const std::string& what) : std::runtime_error(path + ": " + what), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A failed CUDA runtime call or kernel launch, with the call site.
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& what, const char* file, int line)
      : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what) {}
};

}  // namespace saltation
