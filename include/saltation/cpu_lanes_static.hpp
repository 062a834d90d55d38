#pragma once
// The CPU's SIMD lanes (cpu_lanes-inl.h) compiled into the including program for the one vector
// target its compiler flags enable (Highway's static target): what a model that is not built
// into the library needs to run W trajectories per thread. A model file's plugin is built this
// way for the CPU it runs on (user_model/toolchain). For a C++ model type: include this header
// in the source that calls saltation::solve for it, compile that source with -march=x86-64-v4
// (AVX-512, 8 lanes) or -march=x86-64-v3 (AVX2, 4 lanes) and -ffp-contract=off (so that no
// multiply-add is fused and each lane computes what the scalar driver computes), and specialize
// saltation::has_static_cpu_lanes<Model>. Its flow and guards must be templates over the scalar.
// A program built for no such target keeps the scalar driver.
#include "hwy/highway.h"
#include "saltation/cpu_lanes-inl.h"
#include "saltation/cpu_lanes.hpp"

namespace saltation::cpu {

template <class Output, class Model>
bool solve_static_lanes(const Model& model, const double* theta, std::size_t n, const Options& options,
                        const typename Output::View& out, const Progress* progress) {
#if HWY_STATIC_TARGET == HWY_AVX2 || HWY_STATIC_TARGET == HWY_AVX3
  const SimdRequest request = simd_request();
  if (request == SimdRequest::None || (request == SimdRequest::Avx2 && HWY_STATIC_TARGET != HWY_AVX2)) return false;
  namespace lanes = cpu_lanes::HWY_NAMESPACE;
  if (options.method == Method::Dopri5) {
    if (options.sensitivities) {
      lanes::run_lanes<Output, Model, true, Method::Dopri5>(model, theta, n, options, out, progress);
    } else {
      lanes::run_lanes<Output, Model, false, Method::Dopri5>(model, theta, n, options, out, progress);
    }
  } else if (options.sensitivities) {
    lanes::run_lanes<Output, Model, true>(model, theta, n, options, out, progress);
  } else {
    lanes::run_lanes<Output, Model, false>(model, theta, n, options, out, progress);
  }
  return true;
#else
  (void)model, (void)theta, (void)n, (void)options, (void)out, (void)progress;
  return false;
#endif
}

}  // namespace saltation::cpu
