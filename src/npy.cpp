#include "saltation/npy.hpp"

#include <string>

namespace saltation {
namespace {

template <class T>
std::string npy_of(const std::vector<T>& data, const std::vector<long>& shape, const char* descr) {
  std::string dims;
  for (long s : shape) dims += std::to_string(s) + ", ";
  if (shape.size() > 1) dims.erase(dims.size() - 2);
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';  // the data starts 64-byte aligned
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(T));
  return out;
}

}  // namespace

std::string npy_bytes(const std::vector<double>& data, const std::vector<long>& shape) {
  return npy_of(data, shape, "<f8");
}
std::string npy_bytes(const std::vector<int>& data, const std::vector<long>& shape) {
  static_assert(sizeof(int) == 4, "NPY '<i4' needs a 32-bit int");
  return npy_of(data, shape, "<i4");
}

}  // namespace saltation
