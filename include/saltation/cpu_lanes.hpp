#pragma once
// The CPU's SIMD lanes (docs/simd_lanes.md): W trajectories in lockstep, one per lane of a vector
// (8 with AVX-512, 4 with AVX2, chosen at run time), the CPU's analogue of a CUDA warp. Their
// free-flight steps run as one vector RK4 step of the same rk4_step and model code (dopri5's
// trial steps as one vector step of dopri5_step, each lane with its own size); every other
// step and every event takes the per-trajectory routine lane by lane, and a lane whose trajectory
// ends takes the next row. Results equal cpu::solve's bit for bit.
//
// Declarations only: the definitions (Google Highway, host code) are compiled into the library
// for the models with has_cpu_lanes (src/cpu_lanes.cpp); nvcc never sees them.
#include <cstddef>

#include "saltation/options.hpp"
#include "saltation/progress.hpp"

namespace saltation::cpu {

// What the environment variable SALTATION_SIMD asks of every SIMD-lane driver (the trajectories'
// here, the disk engine's), read at each call: "0" none, "avx2" AVX2 even where AVX-512 is present
// (for comparisons), anything else or unset the best target the CPU has. Defined in saltation_core.
enum class SimdRequest { Best, None, Avx2 };
SimdRequest simd_request();

// The vector instruction set the lanes would run on now and its width: "avx3" (AVX-512, 8 lanes),
// "avx2" (4 lanes) or "none" (0 lanes: the CPU has neither, or SALTATION_SIMD=0 in the
// environment). SALTATION_SIMD=avx2 asks for AVX2 where AVX-512 is present too.
struct LaneTarget {
  const char* name;
  int width;
};
LaneTarget lane_target();

// Runs the batch like cpu::solve<Output> (same arguments, same results) in SIMD lanes, and returns
// true; returns false, having done nothing, where the lanes do not apply: no lane target (above),
// or dopri5 with sensitivities (the built-in models' run in the scalar driver; a model file's or a
// C++ type's static lanes, below, take it).
// Defined for the models with has_cpu_lanes<Model>.
template <class Output, class Model>
bool solve_lanes(const Model& model, const double* theta, std::size_t n, const Options& options,
                 const typename Output::View& out, const Progress* progress);

// As solve_lanes, for the models with has_static_cpu_lanes<Model>: the lanes compiled into the
// calling program for its one vector target (cpu_lanes_static.hpp, which defines it). Returns false
// also where SALTATION_SIMD asks for another target than that one.
template <class Output, class Model>
bool solve_static_lanes(const Model& model, const double* theta, std::size_t n, const Options& options,
                        const typename Output::View& out, const Progress* progress);

}  // namespace saltation::cpu
