#include "saltation/io/npy.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "saltation/errors.hpp"
#include "saltation/io/files.hpp"

namespace saltation::io {

std::size_t dtype_size(DType dtype) { return dtype == DType::F64 ? sizeof(double) : sizeof(int); }
const char* dtype_name(DType dtype) { return dtype == DType::F64 ? "float64" : "int32"; }

std::string npy_header(DType dtype, const std::vector<long>& shape) {
  static_assert(sizeof(int) == 4, "NPY '<i4' needs a 32-bit int");
  std::string dims;
  for (long s : shape) dims += std::to_string(s) + ", ";
  if (shape.size() > 1) dims.erase(dims.size() - 2);
  std::string header = std::string("{'descr': '") + (dtype == DType::F64 ? "<f8" : "<i4") +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';  // the data starts 64-byte aligned
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header;
}

NpyWriter::NpyWriter(std::string path, DType dtype, std::vector<long> shape)
    : path_(std::move(path)), tmp_(temporary_path(path_)), dtype_(dtype), expected_(1) {
  for (long s : shape) expected_ *= static_cast<std::size_t>(s);
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (!file_) throw IoError(path_, std::string("cannot open for writing: ") + std::strerror(errno));
  const std::string header = npy_header(dtype, shape);
  if (std::fwrite(header.data(), 1, header.size(), file_) != header.size()) {
    const int err = errno;
    std::fclose(file_);
    file_ = nullptr;
    std::remove(tmp_.c_str());
    throw IoError(path_, std::string("write failed: ") + std::strerror(err));
  }
}

NpyWriter::~NpyWriter() {
  if (file_) {
    std::fclose(file_);
    std::remove(tmp_.c_str());
  }
}

void NpyWriter::append(const void* data, std::size_t values) {
  if (!file_) throw IoError(path_, "append after commit");
  if (written_ + values > expected_) throw IoError(path_, "more values appended than the shape holds");
  const std::size_t bytes = values * dtype_size(dtype_);
  if (std::fwrite(data, 1, bytes, file_) != bytes) throw IoError(path_, std::string("write failed: ") + std::strerror(errno));
  written_ += values;
}

void NpyWriter::commit() {
  if (written_ != expected_)
    throw IoError(path_, std::to_string(written_) + " of " + std::to_string(expected_) + " values written");
  std::FILE* f = file_;
  file_ = nullptr;
  commit_temporary(f, true, path_);
}

}  // namespace saltation::io
