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
      : std::invalid_argument(compose(parameter, row, what)), parameter_(std::move(parameter)), row_(row) {}
  const std::string& parameter() const { return parameter_; }
  long row() const { return row_; }

 private:
  static std::string compose(const std::string& parameter, long row, const std::string& what) {
    std::string s = "invalid input: " + parameter;
    if (row >= 0) s += " (row " + std::to_string(row) + ")";
    return s + ": " + what;
  }
  std::string parameter_;
  long row_;
};

// A file that cannot be read or written (missing, unwritable, disk full), with its path.
class IoError : public std::runtime_error {
 public:
  IoError(std::string path, const std::string& what)
      : std::runtime_error(path + ": " + what), path_(std::move(path)) {}
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
