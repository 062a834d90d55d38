#include "saltation/io/table.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace saltation::io {

std::size_t dtype_size(DType dtype) { return dtype == DType::F64 ? sizeof(double) : sizeof(int); }

long Column::inner_size() const {
  long s = 1;
  for (long d : inner) s *= d;
  return s;
}

void ArrayTable::add_column(Column c, std::size_t values) {
  if (find(c.name)) throw std::logic_error("ArrayTable: column " + c.name + " added twice");
  if (values != rows_ * static_cast<std::size_t>(c.inner_size()))
    throw std::logic_error("ArrayTable: column " + c.name + " has " + std::to_string(values) + " values, expected " +
                           std::to_string(rows_ * static_cast<std::size_t>(c.inner_size())));
  if (!c.count.empty()) {
    const Column* count = find(c.count);
    if (!count || count->dtype != DType::I32 || !count->inner.empty() || c.inner.empty())
      throw std::logic_error("ArrayTable: column " + c.name + " is counted by " + c.count +
                             ", which must be an earlier int32 column with one value per row");
  }
  columns_.push_back(std::move(c));
}

void ArrayTable::add_owned(const std::string& name, std::vector<double> soa, std::vector<long> inner,
                           std::string description, std::string count) {
  owned_f64_.push_back(std::move(soa));
  add(name, owned_f64_.back(), std::move(inner), std::move(description), std::move(count));
}

void ArrayTable::add_owned(const std::string& name, std::vector<int> soa, std::vector<long> inner,
                           std::string description, std::string count) {
  owned_i32_.push_back(std::move(soa));
  add(name, owned_i32_.back(), std::move(inner), std::move(description), std::move(count));
}

std::size_t ArrayTable::row_bytes() const {
  std::size_t bytes = 0;
  for (const Column& c : columns_) bytes += static_cast<std::size_t>(c.inner_size()) * dtype_size(c.dtype);
  return bytes;
}

const Column* ArrayTable::find(const std::string& name) const {
  for (const Column& c : columns_)
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace saltation::io
