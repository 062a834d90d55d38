#pragma once
// A batch of parameter rows in SoA layout: parameter p of trajectory i at theta[p * n + i].
#include <cstddef>
#include <vector>

namespace saltation {

struct Batch {
  std::size_t n = 0;
  int P = 0;
  std::vector<double> theta;

  Batch() = default;
  Batch(std::size_t n, int P) : n(n), P(P), theta(n * static_cast<std::size_t>(P), 0.0) {}
  double& at(std::size_t i, int p) { return theta[static_cast<std::size_t>(p) * n + i]; }
  double at(std::size_t i, int p) const { return theta[static_cast<std::size_t>(p) * n + i]; }
  // Throws InvalidInput naming the row when a row's length is not P.
  static Batch from_rows(const std::vector<std::vector<double>>& rows, int P);
};

}  // namespace saltation
