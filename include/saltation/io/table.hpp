#pragma once
// The I/O layer's one result shape: a table of named, shaped arrays over a common row axis
// (trajectories, systems, samples), plus the metadata that is not per row (model, names,
// provenance). Every output format is a writer of this table (writers.hpp), so the CLI, the C
// API, the disk engine and the bindings produce the same arrays under the same names.
//
// Arrays are views in the project's SoA layout: element (i, r) of an array with rows n and
// inner shape S sits at data[r * n + i], where r is the row-major flat index into S. The table
// does not own viewed data (the Result or RolloutResult must outlive it); add_owned() keeps
// arrays computed for the table alive inside it.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <deque>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace saltation::io {

enum class DType { F64, I32 };
std::size_t dtype_size(DType dtype);  // bytes of one element

struct Column {
  std::string name;
  DType dtype = DType::F64;
  std::vector<long> inner;  // shape after the row axis ({} for one value per row)
  const void* data = nullptr;
  // Optional: name of an I32 column of one value per row; only that many entries along the
  // first inner axis are meaningful (event slots past n_events). JSON and CSV trim to it.
  std::string count;
  std::string description;  // one line for indexes and docs

  long inner_size() const;
  double f64(std::size_t rows, std::size_t i, long r) const { return static_cast<const double*>(data)[r * rows + i]; }
  int i32(std::size_t rows, std::size_t i, long r) const { return static_cast<const int*>(data)[r * rows + i]; }
};

class ArrayTable {
 public:
  ArrayTable(std::string row_name, std::size_t rows) : row_name_(std::move(row_name)), rows_(rows) {}

  // `soa` (a std::vector or HostArray of double or int) must hold rows() * prod(inner) values;
  // throws std::logic_error otherwise.
  template <class Array>
  void add(const std::string& name, const Array& soa, std::vector<long> inner = {}, std::string description = "",
           std::string count = "") {
    using T = typename Array::value_type;
    static_assert(std::is_same<T, double>::value || std::is_same<T, int>::value, "a column holds double or int");
    add_column(Column{name, std::is_same<T, double>::value ? DType::F64 : DType::I32, std::move(inner), soa.data(),
                      std::move(count), std::move(description)},
               soa.size());
  }
  void add_owned(const std::string& name, std::vector<double> soa, std::vector<long> inner = {},
                 std::string description = "", std::string count = "");
  void add_owned(const std::string& name, std::vector<int> soa, std::vector<long> inner = {},
                 std::string description = "", std::string count = "");

  const std::string& row_name() const { return row_name_; }  // singular: "trajectory", "system"
  // The plural, the JSON writer's key for the rows: "trajectories", "systems".
  std::string rows_key() const {
    const bool y = !row_name_.empty() && row_name_.back() == 'y';
    return y ? row_name_.substr(0, row_name_.size() - 1) + "ies" : row_name_ + "s";
  }
  std::size_t rows() const { return rows_; }
  const std::vector<Column>& columns() const { return columns_; }
  const Column* find(const std::string& name) const;  // nullptr when absent
  // Bytes one row takes over all columns, stored as binary (the row's share of the table's data).
  std::size_t row_bytes() const;

  // Everything that is not per row: model, state and parameter names, provenance, ...
  nlohmann::json meta = nlohmann::json::object();

 private:
  void add_column(Column c, std::size_t values);
  std::string row_name_;
  std::size_t rows_;
  std::vector<Column> columns_;
  std::deque<std::vector<double>> owned_f64_;
  std::deque<std::vector<int>> owned_i32_;
};

}  // namespace saltation::io
