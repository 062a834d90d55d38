#pragma once
// Shared helpers for the core tests: build batches, run a backend, central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "saltation/batch.hpp"
#include "saltation/solve.hpp"

namespace saltation::testing {

inline Batch rows(const std::vector<std::vector<double>>& r, int P) { return Batch::from_rows(r, P); }

template <class Model>
Result solve_cpu(const Model& m, const std::vector<std::vector<double>>& theta, Options o) {
  return solve(m, rows(theta, Model::P), o, Backend::Cpu);
}

// Central difference of f(theta) with a step relative to the parameter's size.
inline double central_difference(const std::function<double(const std::vector<double>&)>& f, std::vector<double> theta,
                                 int p, double rel_step) {
  const double h = rel_step * std::max(1.0, std::fabs(theta[p]));
  const double x = theta[p];
  theta[p] = x + h;
  const double up = f(theta);
  theta[p] = x - h;
  const double down = f(theta);
  return (up - down) / (2.0 * h);
}

// |a - b| <= rtol |b| + atol, with a message naming what was compared.
#define EXPECT_CLOSE_REL(a, b, rtol, atol) EXPECT_LE(std::fabs((a) - (b)), (rtol) * std::fabs(b) + (atol)) << #a " = " << (a) << " vs " #b " = " << (b)

}  // namespace saltation::testing
