#include "saltation/io/writers.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "saltation/errors.hpp"
#include "saltation/io/files.hpp"
#include "saltation/io/npy.hpp"

namespace saltation::io {

using nlohmann::json;

namespace {

// Entries of row i of column c that are meaningful: all, or `count` along the first inner axis.
long used_size(const ArrayTable& t, const Column& c, std::size_t i) {
  if (c.count.empty() || c.inner[0] == 0) return c.inner_size();  // inner[0] 0: event_capacity 0, no slots
  const Column& count = *t.find(c.count);
  long n = count.i32(t.rows(), i, 0);
  if (n < 0) n = 0;
  if (n > c.inner[0]) n = c.inner[0];
  return n * (c.inner_size() / c.inner[0]);
}

json value_at(const ArrayTable& t, const Column& c, std::size_t i, long r) {
  if (c.dtype == DType::I32) return c.i32(t.rows(), i, r);
  return c.f64(t.rows(), i, r);  // NaN and Inf become null (JSON has no such numbers)
}

// Nested arrays over inner axes [axis, ...), starting at flat index `first`, trimmed to `used`.
json nested(const ArrayTable& t, const Column& c, std::size_t i, std::size_t axis, long first, long stride, long used) {
  json a = json::array();
  const long extent = c.inner[axis];
  if (extent == 0) return a;  // no slots (event_capacity 0)
  const long sub = stride / extent;
  for (long k = 0; k < extent; ++k) {
    const long at = first + k * sub;
    if (at >= used) break;
    a.push_back(axis + 1 == c.inner.size() ? value_at(t, c, i, at) : nested(t, c, i, axis + 1, at, sub, used));
  }
  return a;
}

std::string index_suffix(const Column& c, long r) {
  std::string s;
  long rest = r;
  std::vector<long> idx(c.inner.size());
  for (std::size_t a = c.inner.size(); a-- > 0;) {
    idx[a] = rest % c.inner[a];
    rest /= c.inner[a];
  }
  for (long k : idx) s += "[" + std::to_string(k) + "]";
  return s;
}

void write_text(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    std::cout.flush();
    if (!std::cout) throw IoError("standard output", "write failed");
  } else {
    write_file_atomically(path, text);
  }
}

}  // namespace

std::uint64_t estimated_text_bytes(const ArrayTable& shape, std::uint64_t rows) {
  constexpr std::uint64_t bytes_per_value = 32;
  std::uint64_t values = 0;
  for (const Column& c : shape.columns()) values += static_cast<std::uint64_t>(c.inner_size());
  return rows * values * bytes_per_value;
}

void refuse_large_text_output(const ArrayTable& shape, std::uint64_t rows, const std::string& parameter,
                              const std::string& what, const std::string& way_out) {
  const std::uint64_t estimate = estimated_text_bytes(shape, rows);
  if (estimate <= max_text_output_bytes) return;
  throw InvalidInput(parameter, -1,
                     what + " of " + std::to_string(rows) + " trajectories would be about " +
                         std::to_string(estimate >> 20) + " MiB, more than the " +
                         std::to_string(max_text_output_bytes >> 20) +
                         " MiB that text output is built in memory for; " + way_out);
}

json table_to_json(const ArrayTable& t) {
  json out = t.meta;
  json rows = json::array();
  for (std::size_t i = 0; i < t.rows(); ++i) {
    json row = json::object();
    for (const Column& c : t.columns()) {
      if (c.inner.empty()) row[c.name] = value_at(t, c, i, 0);
      else row[c.name] = nested(t, c, i, 0, 0, c.inner_size(), used_size(t, c, i));
    }
    rows.push_back(std::move(row));
  }
  out[t.rows_key()] = std::move(rows);
  return out;
}

std::string table_to_csv(const ArrayTable& t) {
  std::ostringstream s;
  s.precision(17);
  s << t.row_name();
  for (const Column& c : t.columns())
    for (long r = 0; r < c.inner_size(); ++r) s << "," << c.name << index_suffix(c, r);
  s << "\n";
  for (std::size_t i = 0; i < t.rows(); ++i) {
    s << i;
    for (const Column& c : t.columns()) {
      const long used = used_size(t, c, i);
      for (long r = 0; r < c.inner_size(); ++r) {
        s << ",";
        if (r >= used) continue;
        if (c.dtype == DType::I32) s << c.i32(t.rows(), i, r);
        else s << c.f64(t.rows(), i, r);
      }
    }
    s << "\n";
  }
  return s.str();
}

void write_json(const ArrayTable& t, const std::string& path) { write_text(path, table_to_json(t).dump(1) + "\n"); }

void write_csv(const ArrayTable& t, const std::string& path) { write_text(path, table_to_csv(t)); }

json write_npy(const ArrayTable& t, const std::string& prefix) {
  NpyTableWriter writer(prefix, t, t.rows());
  writer.append(t);
  return writer.commit();
}

}  // namespace saltation::io
