#pragma once
// NPY (format 1.0) files, written as a stream of rows: the shape is fixed up front and rows
// are appended in order, so a large result goes to disk chunk by chunk in bounded memory.
// The file appears under its name only when commit() succeeds (atomic rename).
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "saltation/io/table.hpp"

namespace saltation::io {

// The NPY header of a C-order little-endian array (data 64-byte aligned).
std::string npy_header(DType dtype, const std::vector<long>& shape);
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
  // Moves what was written so far into place under `path` as an array of `rows` rows (the
  // header's first dimension rewritten; `rows` x the inner size must be the elements written), for
  // a run stopped part of the way (--keep-partial). Throws IoError.
  void commit_rows(std::size_t rows, const std::string& path);

 private:
  std::string path_, tmp_;
  DType dtype_;
  std::vector<long> shape_;
  std::size_t header_bytes_ = 0;
  std::size_t expected_ = 0, written_ = 0;
  std::FILE* file_ = nullptr;
};

// The NPY output of a table whose rows arrive in chunks (a batch solved piece by piece, so that
// the whole result is never in memory): one NpyWriter per column, PREFIX_<name>.npy, each chunk
// transposed from SoA to row-major and appended, and the index PREFIX.json written by commit()
// (the format of write_npy, writers.hpp).
class NpyTableWriter {
 public:
  // `shape` fixes the columns (name, dtype, inner shape, description, count) and the index's
  // meta; its rows are not read. `rows`: the rows all chunks together will append.
  NpyTableWriter(std::string prefix, const ArrayTable& shape, std::size_t rows);  // throws IoError
  // Appends the chunk's rows after those already written. Its columns must be the shape's.
  void append(const ArrayTable& chunk);
  // Checks that every row was written, moves the arrays into place and writes PREFIX.json.
  // Returns the index. Throws IoError. No array appears under its name before commit(); a
  // writer destroyed uncommitted (an error on the way) removes its temporary files.
  nlohmann::json commit();
  // For a run stopped part of the way (--keep-partial): the rows appended so far, as arrays
  // PARTIAL_<name>.npy and the index PARTIAL.json, which has "partial": {"rows": [0, R], "of": N}.
  // The writer's own files are then gone. Returns the index. Throws IoError.
  nlohmann::json commit_partial(const std::string& partial_prefix);
  std::size_t rows_appended() const { return rows_appended_; }

 private:
  std::string prefix_;
  nlohmann::json index_;
  std::vector<Column> columns_;  // the shape's, for checking chunks (no data)
  std::vector<std::unique_ptr<NpyWriter>> files_;
  std::size_t rows_ = 0, rows_appended_ = 0;
};

}  // namespace saltation::io
