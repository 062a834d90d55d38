#pragma once
// Internals shared by the disk-contact drivers (engine.cpp, engine_cuda.cu, fit.cpp): the
// prepared inputs, the one list of the arrays a RolloutView points to, and the drivers.
#include <cstddef>
#include <vector>

#include "saltation/dem/engine.hpp"
#include "saltation/result.hpp"  // SALTATION_ZIP_MEMBER

namespace saltation::dem::detail {

// An input array read where the caller keeps it, for the duration of the call (the array
// interface of std::vector that the drivers use, read-only).
template <class T>
struct Borrowed {
  using value_type = T;
  const T* pointer = nullptr;
  std::size_t count = 0;
  const T* data() const { return pointer; }
  std::size_t size() const { return count; }
  bool empty() const { return count == 0; }
};

// Host storage of everything a rollout reads, validated and normalised (defaults filled in,
// material pair tables built), named as in RolloutView. The observations, the largest input
// (n_frames * 2 * n_disks * n_systems values), are borrowed from the LossSpec, not copied: the
// copy and its page faults were a tenth of a rollout of the seed's 10^4 disk pairs.
struct RolloutInputs {
  std::vector<double> pair_k, pair_zeta, pair_mu, pair_gt;
  std::vector<double> radius, mass;
  std::vector<int> material;
  std::vector<double> log_stiffness, damping_ratio;
  std::vector<double> x0, v0;
  std::vector<TangentKind> tangent_kind;
  std::vector<int> tangent_index;
  Borrowed<double> observed;       // empty: no loss
  std::vector<double> loss_scale;  // empty: no loss
};

// Call f(a.x, b.x) for each input array x, and for each output array x, of any two of
// RolloutInputs / RolloutResult, RolloutView and the CUDA driver's device mirror (they name
// their arrays alike): the one list of the arrays.
// clang-format off
#define SALTATION_DISK_INPUT_ARRAYS(X)                                                                         \
  X(pair_k) X(pair_zeta) X(pair_mu) X(pair_gt) X(radius) X(mass) X(material) X(log_stiffness) X(damping_ratio) \
  X(x0) X(v0) X(tangent_kind) X(tangent_index) X(observed) X(loss_scale)
#define SALTATION_DISK_OUTPUT_ARRAYS(X) X(x) X(v) X(dx) X(dv) X(loss) X(grad) X(status)
// clang-format on
template <class A, class B, class F>
void zip_inputs(A& a, B& b, F&& f) {
  SALTATION_DISK_INPUT_ARRAYS(SALTATION_ZIP_MEMBER)
}
template <class A, class B, class F>
void zip_outputs(A& a, B& b, F&& f) {
  SALTATION_DISK_OUTPUT_ARRAYS(SALTATION_ZIP_MEMBER)
}

// A validated rollout: its inputs, its sizes and options as a view without arrays, and the
// result with every wanted output allocated.
struct Prepared {
  RolloutInputs inputs;
  RolloutView shape;  // sizes and options; the array pointers are null
  RolloutResult result;

  // The view of the host arrays (the CPU driver runs on it).
  RolloutView host_view();
};

// Validates the batch, the options and the loss (throws InvalidInput naming the parameter
// and the system) and allocates the result. The result borrows loss->observed: `loss` must
// outlive its use.
Prepared prepare(const DiskBatch& batch, const RolloutOptions& options, const LossSpec* loss);
void run_cpu(const RolloutView& view, int team_threshold, const Progress* progress);

// The body for one call (one system, or a group of SIMD lanes: `Lanes`, rollout.hpp) on one
// thread, at compile-time sizes for the seed's disk pairs without and with one tangent (the fit's
// d/dlog k), so that its loops unroll and its offsets are constants; at run-time sizes otherwise.
template <class Lanes>
void rollout_at_known_sizes(const RolloutView& c, int b, const Work& w) {
  if (c.n_disks == 2 && c.n_tangents == 0) rollout_system<SerialTeam, Shape<2, 0, true>, Lanes>(SerialTeam{}, c, b, w);
  else if (c.n_disks == 2 && c.n_tangents == 1)
    rollout_system<SerialTeam, Shape<2, 1, true>, Lanes>(SerialTeam{}, c, b, w);
  else rollout_system<SerialTeam, Shape<0, -1, true>, Lanes>(SerialTeam{}, c, b, w);
}

// The CPU's SIMD lanes for systems (engine_lanes.cpp): run_group runs systems b .. b + width - 1,
// with work memory for width systems (doubles aligned to 64 bytes: width * work_doubles(), ints:
// width * work_ints()). width 0: no lanes (no AVX2 on this CPU, or SALTATION_SIMD=0).
struct SystemLanes {
  int width = 0;
  void (*run_group)(const RolloutView& c, int b, const Work& w) = nullptr;
};
SystemLanes system_lanes();
// Copies the inputs to the device, runs, copies the outputs back into prepared.result.
void run_cuda(Prepared& prepared, int block_threshold, const Progress* progress);

}  // namespace saltation::dem::detail
