#pragma once
// NPY (format 1.0) files of row-major little-endian arrays, for results too large for JSON.
#include <string>
#include <vector>

namespace saltation {

std::string npy_bytes(const std::vector<double>& data, const std::vector<long>& shape);
std::string npy_bytes(const std::vector<int>& data, const std::vector<long>& shape);

}  // namespace saltation
