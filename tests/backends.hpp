#pragma once
// What the backend-neutral tests share: a fixture whose parameter is the backend, one
// instantiation per backend compiled in (the CPU always, CUDA where the library has it), and
// solve_on(). A test written as TEST_P(Suite, Name) against this fixture runs as
// Cpu/Suite.Name/0 and Cuda/Suite.Name/0; the CUDA instance skips where no device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "saltation/backend.hpp"
#include "saltation/batch.hpp"
#include "saltation/solve.hpp"

// Where no CUDA device is usable, skips the calling test (call it from the test body or SetUp),
// or fails it when the environment sets SALTATION_REQUIRE_CUDA (scripts/gpu-check does, on the
// device machine, so that a broken device setup cannot pass as a row of skips).
#define SALTATION_SKIP_WITHOUT_CUDA_DEVICE()                                      \
  if (::saltation::cuda_device_available()) {                                     \
  } else if (::saltation::testing::cuda_required())                               \
    GTEST_FAIL() << "SALTATION_REQUIRE_CUDA is set but no CUDA device is usable"; \
  else GTEST_SKIP() << "no CUDA device"

namespace saltation {
// How GoogleTest shows the parameter in test listings and failure messages ("cpu", "cuda").
inline void PrintTo(Backend backend, std::ostream* os) { *os << backend_name(backend); }
}  // namespace saltation

namespace saltation::testing {

inline bool cuda_required() {
  const char* value = std::getenv("SALTATION_REQUIRE_CUDA");
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

class BackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (backend() == Backend::Cuda) {
      SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
    }
  }
  Backend backend() const { return GetParam(); }
};

// Runs `theta` (one vector per trajectory) through `model` on `backend`.
template <class Model>
Result solve_on(Backend backend, const Model& model, const std::vector<std::vector<double>>& theta,
                const Options& options) {
  return solve(model, Batch::from_rows(theta, Model::P), options, backend);
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

}  // namespace saltation::testing

// Instantiates every TEST_P of `suite` (a BackendTest) once per backend compiled into the library.
#if SALTATION_HAVE_CUDA
#define SALTATION_INSTANTIATE_ON_EVERY_BACKEND(suite)                                 \
  INSTANTIATE_TEST_SUITE_P(Cpu, suite, ::testing::Values(::saltation::Backend::Cpu)); \
  INSTANTIATE_TEST_SUITE_P(Cuda, suite, ::testing::Values(::saltation::Backend::Cuda))
#else
#define SALTATION_INSTANTIATE_ON_EVERY_BACKEND(suite) \
  INSTANTIATE_TEST_SUITE_P(Cpu, suite, ::testing::Values(::saltation::Backend::Cpu))
#endif
