#pragma once
// A batch of parameter rows in SoA layout: parameter p of trajectory i at theta[p * n + i].
#include <cstddef>
#include <string>
#include <vector>

#include "saltation/errors.hpp"

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
  static Batch from_rows(const std::vector<std::vector<double>>& rows, int P) {
    Batch b(rows.size(), P);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (static_cast<int>(rows[i].size()) != P)
        throw InvalidInput("theta", static_cast<long>(i),
                           "has " + std::to_string(rows[i].size()) + " entries, expected " + std::to_string(P));
      for (int p = 0; p < P; ++p) b.at(i, p) = rows[i][p];
    }
    return b;
  }
};

}  // namespace saltation
