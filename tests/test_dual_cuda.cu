// The dual-number functions on the device: a kernel evaluates every function of dual.hpp at a
// set of points (kinks included) and the values and derivatives agree with the host's
// evaluation of the same code to about 1e-14 (CUDA's math library and the host's may differ in
// the last bits). Calls are unqualified through using-declarations, as in a user model. Skipped
// without a CUDA device (failed under SALTATION_REQUIRE_CUDA=1).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends.hpp"
#include "saltation/dual.hpp"

namespace dual_cuda_test {

using saltation::abs;
using saltation::acos;
using saltation::asin;
using saltation::atan;
using saltation::atan2;
using saltation::cbrt;
using saltation::cos;
using saltation::cosh;
using saltation::exp;
using saltation::fmax;
using saltation::fmin;
using saltation::hypot;
using saltation::log;
using saltation::pow;
using saltation::sin;
using saltation::sinh;
using saltation::sqrt;
using saltation::tan;
using saltation::tanh;
using D2 = saltation::Dual<2>;

const char* const function_names[] = {"exp",  "log",  "sqrt", "cbrt", "abs",   "sin", "cos",   "tan",  "asin", "acos",
                                      "atan", "sinh", "cosh", "tanh", "atan2", "pow", "hypot", "fmin", "fmax"};
constexpr int function_count = sizeof(function_names) / sizeof(function_names[0]);

// Function k of dual.hpp at (a, b); one-argument functions take a.
SALTATION_HD D2 evaluate(int k, const D2& a, const D2& b) {
  switch (k) {
    case 0: return exp(a);
    case 1: return log(a);
    case 2: return sqrt(a);
    case 3: return cbrt(a);
    case 4: return abs(a);
    case 5: return sin(a);
    case 6: return cos(a);
    case 7: return tan(a);
    case 8: return asin(a);
    case 9: return acos(a);
    case 10: return atan(a);
    case 11: return sinh(a);
    case 12: return cosh(a);
    case 13: return tanh(a);
    case 14: return atan2(a, b);
    case 15: return pow(a, b);
    case 16: return hypot(a, b);
    case 17: return fmin(a, b);
    default: return fmax(a, b);
  }
}

__global__ void evaluate_kernel(const double* a, const double* b, int points, D2* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < function_count * points) {
    const int k = i / points, p = i % points;
    out[i] = evaluate(k, D2::variable(a[p], 0), D2::variable(b[p], 1));
  }
}

// Equal, both NaN, or within 1e-14 relative to the host value.
void expect_agree(double device, double host, const std::string& what) {
  if (std::isnan(host) || std::isinf(host)) {
    EXPECT_TRUE(std::isnan(host) ? std::isnan(device) : device == host)
        << what << ": device " << device << " host " << host;
    return;
  }
  EXPECT_NEAR(device, host, 1e-14 * std::max(1.0, std::fabs(host))) << what;
}

#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

TEST(DualFunctionsCuda, DeviceAgreesWithHost) {
  SALTATION_SKIP_WITHOUT_CUDA_DEVICE();
  // All four atan2 quadrants; the origin (abs, hypot and fmin/fmax kinks, 0^0); a tie.
  const std::vector<double> a = {0.3, 0.55, 0.8, -0.45, -0.7, 0.0, 0.5};
  const std::vector<double> b = {-1.2, 0.7, 2.5, -0.9, 1.6, 0.0, 0.5};
  const int points = static_cast<int>(a.size()), total = function_count * points;
  double *d_a = nullptr, *d_b = nullptr;
  D2* d_out = nullptr;
  ASSERT_CUDA(cudaMalloc(&d_a, points * sizeof(double)));
  ASSERT_CUDA(cudaMalloc(&d_b, points * sizeof(double)));
  ASSERT_CUDA(cudaMalloc(&d_out, total * sizeof(D2)));
  ASSERT_CUDA(cudaMemcpy(d_a, a.data(), points * sizeof(double), cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemcpy(d_b, b.data(), points * sizeof(double), cudaMemcpyHostToDevice));
  evaluate_kernel<<<(total + 127) / 128, 128>>>(d_a, d_b, points, d_out);
  ASSERT_CUDA(cudaGetLastError());
  std::vector<D2> device(total);
  ASSERT_CUDA(cudaMemcpy(device.data(), d_out, total * sizeof(D2), cudaMemcpyDeviceToHost));
  ASSERT_CUDA(cudaFree(d_a));
  ASSERT_CUDA(cudaFree(d_b));
  ASSERT_CUDA(cudaFree(d_out));
  for (int k = 0; k < function_count; ++k)
    for (int p = 0; p < points; ++p) {
      const D2 host = evaluate(k, D2::variable(a[p], 0), D2::variable(b[p], 1));
      const D2& dev = device[k * points + p];
      const std::string what =
          std::string(function_names[k]) + " at (" + std::to_string(a[p]) + ", " + std::to_string(b[p]) + ")";
      expect_agree(dev.v, host.v, what + " value");
      expect_agree(dev.d[0], host.d[0], what + " d/da");
      expect_agree(dev.d[1], host.d[1], what + " d/db");
    }
}

}  // namespace dual_cuda_test
