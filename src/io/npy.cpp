#include "saltation/io/npy.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "saltation/errors.hpp"
#include "saltation/io/files.hpp"

namespace saltation::io {

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
    : path_(std::move(path)), tmp_(temporary_path(path_)), dtype_(dtype), shape_(std::move(shape)), expected_(1) {
  for (long s : shape_) expected_ *= static_cast<std::size_t>(s);
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (!file_) throw IoError(path_, std::string("cannot open for writing: ") + std::strerror(errno));
  const std::string header = npy_header(dtype, shape_);
  header_bytes_ = header.size();
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
  if (std::fwrite(data, 1, bytes, file_) != bytes)
    throw IoError(path_, std::string("write failed: ") + std::strerror(errno));
  written_ += values;
}

void NpyWriter::commit() {
  if (written_ != expected_)
    throw IoError(path_, std::to_string(written_) + " of " + std::to_string(expected_) + " values written");
  std::FILE* f = file_;
  file_ = nullptr;
  commit_temporary(f, true, path_);
}

void NpyWriter::commit_rows(std::size_t rows, const std::string& path) {
  if (!file_) throw IoError(path_, "commit after commit");
  std::vector<long> shape = shape_;
  shape.front() = static_cast<long>(rows);
  std::size_t elements = 1;
  for (long s : shape) elements *= static_cast<std::size_t>(s);
  if (elements != written_)
    throw IoError(path, std::to_string(written_) + " values written, not " + std::to_string(rows) + " whole rows");
  // Fewer rows take no more digits, so the header is padded back to its length and the data stays
  // where it is.
  std::string header = npy_header(dtype_, shape);
  header.insert(header.size() - 1, header_bytes_ - header.size(), ' ');
  header[8] = static_cast<char>((header_bytes_ - 10) & 0xff);
  header[9] = static_cast<char>((header_bytes_ - 10) >> 8);
  std::FILE* f = file_;
  file_ = nullptr;
  const bool rewritten = std::fflush(f) == 0 && std::fseek(f, 0, SEEK_SET) == 0 &&
                         std::fwrite(header.data(), 1, header.size(), f) == header.size();
  const int err = errno;
  if (!rewritten) {
    std::fclose(f);
    std::remove(tmp_.c_str());
    throw IoError(path, std::string("write failed: ") + std::strerror(err));
  }
  const std::string tmp = temporary_path(path);
  if (std::rename(tmp_.c_str(), tmp.c_str()) != 0) {
    std::fclose(f);
    std::remove(tmp_.c_str());
    throw IoError(path, std::string("cannot rename the temporary: ") + std::strerror(errno));
  }
  commit_temporary(f, true, path);
}

namespace {

// Appends rows [0, rows) of column c, transposed from SoA to row-major a block of rows at a time
// (a block holds about 1 MiB), so the scratch memory stays bounded whatever the chunk size.
template <class T>
void append_rows(NpyWriter& file, const Column& c, std::size_t rows) {
  const std::size_t inner = static_cast<std::size_t>(c.inner_size());
  if (inner == 0) return;
  const std::size_t block_rows = std::max<std::size_t>(1, (std::size_t(1) << 20) / (inner * sizeof(T)));
  const T* soa = static_cast<const T*>(c.data);
  std::vector<T> block;
  for (std::size_t first = 0; first < rows; first += block_rows) {
    const std::size_t end = std::min(rows, first + block_rows);
    block.resize((end - first) * inner);
    for (std::size_t i = first; i < end; ++i)
      for (std::size_t r = 0; r < inner; ++r) block[(i - first) * inner + r] = soa[r * rows + i];
    file.append(block.data(), block.size());
  }
}

}  // namespace

NpyTableWriter::NpyTableWriter(std::string prefix, const ArrayTable& shape, std::size_t rows)
    : prefix_(std::move(prefix)), index_(shape.meta), rows_(rows) {
  nlohmann::json arrays = nlohmann::json::object();
  for (const Column& c : shape.columns()) {
    std::vector<long> dims{static_cast<long>(rows)};
    dims.insert(dims.end(), c.inner.begin(), c.inner.end());
    const std::string file = prefix_ + "_" + c.name + ".npy";
    files_.push_back(std::make_unique<NpyWriter>(file, c.dtype, dims));
    nlohmann::json entry{{"file", file}, {"shape", dims}, {"dtype", dtype_name(c.dtype)}};
    if (!c.description.empty()) entry["description"] = c.description;
    if (!c.count.empty()) entry["valid_count"] = c.count;
    arrays[c.name] = entry;
    columns_.push_back(c);
    columns_.back().data = nullptr;
  }
  index_["arrays"] = arrays;
}

void NpyTableWriter::append(const ArrayTable& chunk) {
  const std::vector<Column>& columns = chunk.columns();
  bool same = columns.size() == columns_.size();
  for (std::size_t k = 0; same && k < columns.size(); ++k)
    same = columns[k].name == columns_[k].name && columns[k].dtype == columns_[k].dtype &&
           columns[k].inner == columns_[k].inner;
  if (!same) throw std::logic_error("NpyTableWriter: a chunk's columns differ from the table's (" + prefix_ + ")");
  for (std::size_t k = 0; k < columns.size(); ++k) {
    if (columns[k].dtype == DType::F64) append_rows<double>(*files_[k], columns[k], chunk.rows());
    else append_rows<int>(*files_[k], columns[k], chunk.rows());
  }
  rows_appended_ += chunk.rows();
}

nlohmann::json NpyTableWriter::commit() {
  for (const auto& file : files_) file->commit();
  write_file_atomically(prefix_ + ".json", index_.dump(1) + "\n");
  return index_;
}

nlohmann::json NpyTableWriter::commit_partial(const std::string& partial_prefix) {
  nlohmann::json index = index_;
  for (std::size_t k = 0; k < files_.size(); ++k) {
    const std::string file = partial_prefix + "_" + columns_[k].name + ".npy";
    files_[k]->commit_rows(rows_appended_, file);
    nlohmann::json& entry = index["arrays"][columns_[k].name];
    entry["file"] = file;
    entry["shape"][0] = rows_appended_;
  }
  index["partial"] = {{"rows", {0, rows_appended_}}, {"of", rows_}};
  write_file_atomically(partial_prefix + ".json", index.dump(1) + "\n");
  return index;
}

}  // namespace saltation::io
