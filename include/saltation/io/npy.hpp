#pragma once
// NPY (format 1.0) files, written as a stream of rows: the shape is fixed up front and rows
// are appended in order, so a large result goes to disk chunk by chunk in bounded memory.
// The file appears under its name only when commit() succeeds (atomic rename).
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "saltation/io/table.hpp"

namespace saltation::io {

// The NPY header of a C-order little-endian array (data 64-byte aligned).
std::string npy_header(DType dtype, const std::vector<long>& shape);
std::size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);  // "float64", "int32"

class NpyWriter {
 public:
  NpyWriter(std::string path, DType dtype, std::vector<long> shape);  // throws IoError
  NpyWriter(const NpyWriter&) = delete;
  NpyWriter& operator=(const NpyWriter&) = delete;
  ~NpyWriter();  // removes the temporary file unless committed

  // Appends `values` elements (row-major, continuing where the last call stopped).
  void append(const void* data, std::size_t values);
  // Checks that every element was written, then moves the file into place. Throws IoError.
  void commit();

 private:
  std::string path_, tmp_;
  DType dtype_;
  std::size_t expected_ = 0, written_ = 0;
  std::FILE* file_ = nullptr;
};

}  // namespace saltation::io
