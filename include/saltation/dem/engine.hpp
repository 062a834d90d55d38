#pragma once
// Host API of the batched 2D disk-contact (DEM) engine. See docs/disks.md.
//
// n_systems independent systems of n_disks disks each. Per-disk radius, mass and material id
// per system; per-system log-stiffness theta (every pair stiffness is k_pair * exp(theta))
// and an added normal damping ratio zeta. Velocity Verlet with fixed dt, n_frames frames of
// `stride` steps, positions and velocities saved after each frame (the initial state is not
// saved). Forward tangents of the whole discrete rollout along chosen directions, and
// optionally a position loss and its gradient computed in the same pass.
#include <vector>

#include "saltation/backend.hpp"
#include "saltation/dem/contact.hpp"
#include "saltation/dem/rollout.hpp"
#include "saltation/progress.hpp"
#include "saltation/status.hpp"

namespace saltation::dem {

enum class Neighbors { Auto, AllPairs, CellList };

// Material properties. Pair values use the harmonic-mean rule 2ab/(a+b) (for a == b the
// pair value is a); a pair's restitution is mapped to a damping ratio
// zeta = -ln e / sqrt(pi^2 + ln^2 e) and gamma = 2 zeta sqrt(m_eff k).
struct Material {
  double stiffness = 1.0;           // k at theta = 0 (the reference stiffness k_ref)
  double restitution = 1.0;         // in (0, 1]
  double friction = 0.0;            // Coulomb coefficient mu >= 0
  double tangential_damping = 0.0;  // viscous tangential coefficient gt >= 0
};

struct TangentParam {
  TangentKind kind = TangentKind::LogStiffness;
  int disk = 0;       // for InitialVelocity / InitialPosition
  int component = 0;  // 0: x, 1: y
};

// The inputs of a batch, in the engine's SoA layouts (system index fastest).
struct DiskBatch {
  int n_systems = 0;
  int n_disks = 0;
  std::vector<double> radius;         // [d*n_systems + b]
  std::vector<double> mass;           // [d*n_systems + b]
  std::vector<int> material;          // [d*n_systems + b]; empty: all 0
  std::vector<double> x0, v0;         // [(2d + c)*n_systems + b]
  std::vector<double> log_stiffness;  // [b]; empty: all 0
  std::vector<double> damping_ratio;  // [b] added normal damping ratio; empty: all 0

  // Allocates every array for n_systems systems of n_disks disks (zeros; radius and mass
  // must be filled).
  static DiskBatch make(int n_systems, int n_disks);
  double& x(int b, int d, int c) { return x0[(2L * d + c) * n_systems + b]; }
  double& v(int b, int d, int c) { return v0[(2L * d + c) * n_systems + b]; }
  double& r(int b, int d) { return radius[(long)d * n_systems + b]; }
  double& m(int b, int d) { return mass[(long)d * n_systems + b]; }
};

struct RolloutOptions {
  double dt = 0.0;
  int n_frames = 0;
  int stride = 1;
  NormalModel normal = NormalModel::Linear;
  bool tangential = false;
  std::vector<Material> materials{Material{}};
  bool walls = false;             // reflecting walls (elastic contact with the wall, the
  double box_lo[2] = {0.0, 0.0};  // disk's own material) at box_lo / box_hi
  double box_hi[2] = {0.0, 0.0};
  Neighbors neighbors = Neighbors::Auto;  // Auto: cell list when n_disks > 64
  double cell_size = 0.0;                 // 0: 2 * largest radius
  int cell_capacity = 8;                  // disks per cell; more -> Status::CellOverflow
  // Cell-list grid without walls: [grid_lo, grid_hi]; when equal, the initial bounding box of
  // all systems grown by grid_margin on every side. A disk leaving it stops its system with
  // Status::OutOfGrid (never a silent drop).
  double grid_lo[2] = {0.0, 0.0};
  double grid_hi[2] = {0.0, 0.0};
  double grid_margin = 4.0;
  std::vector<TangentParam> tangents;
  bool save_positions = true;
  bool save_velocities = true;
  bool save_tangents = true;
  int cuda_block_threshold = 32;  // CUDA: thread per system when n_disks <= this, else block per system
  // CPU: when n_systems < threads and n_disks >= this, the OpenMP threads share one system (a
  // team over its disks, barriers every step); otherwise one system per thread. The team only
  // pays off for many disks on an otherwise idle machine (barriers suffer badly from
  // oversubscription).
  int cpu_team_threshold = 4096;
};

// Optional position loss L_b = mean over frames, disks and selected components of
// ((x - observed) / scale_b)^2, and dL_b/dp for every tangent direction p.
struct LossSpec {
  std::vector<double> observed;  // [(f*2*n_disks + 2d + c)*n_systems + b]
  int components = 1;            // bit 0: x, bit 1: y
  std::vector<double> scale;     // [b]; empty: all 1
};

// Host storage of a rollout's outputs. The arrays are named as in RolloutView (the view the
// per-system code writes through); arrays that were not asked for are empty.
struct RolloutResult {
  int n_systems = 0, n_disks = 0, n_frames = 0, n_tangents = 0;
  std::vector<double> x, v;    // [(f*2*n_disks + 2d + c)*n_systems + b]
  std::vector<double> dx, dv;  // [((f*n_tangents + p)*2*n_disks + 2d + c)*n_systems + b]
  std::vector<double> loss;    // [b]
  std::vector<double> grad;    // [p*n_systems + b]
  std::vector<int> status;     // [b], a saltation::Status
  bool used_cells = false;
  Backend backend = Backend::Cpu;
  double seconds = 0.0;  // engine wall time (no validation)

  Status status_of(int b) const { return static_cast<Status>(status[b]); }
  double pos(int f, int b, int d, int c) const { return x[frame_at(f, d, c) * n_systems + b]; }
  double vel(int f, int b, int d, int c) const { return v[frame_at(f, d, c) * n_systems + b]; }
  double dpos(int f, int p, int b, int d, int c) const { return dx[tangent_at(f, p, d, c) * n_systems + b]; }
  double dvel(int f, int p, int b, int d, int c) const { return dv[tangent_at(f, p, d, c) * n_systems + b]; }

 private:
  long frame_at(int f, int d, int c) const { return (long)f * 2 * n_disks + 2 * d + c; }
  long tangent_at(int f, int p, int d, int c) const { return ((long)f * n_tangents + p) * 2 * n_disks + 2 * d + c; }
};

// Validates everything (throws InvalidInput naming the parameter and the system) and runs on
// `backend` (Auto: CUDA when built with it and a device is present). `progress`, when given,
// is told how many systems are done (see progress.hpp). A system that stops early (see
// saltation::Status) has NaN in its remaining frames, loss and gradient.
RolloutResult rollout(const DiskBatch& batch, const RolloutOptions& options, Backend backend = Backend::Auto,
                      const Progress& progress = nullptr);
// The same, with the loss of `loss` and its gradient along every tangent direction.
RolloutResult rollout(const DiskBatch& batch, const RolloutOptions& options, const LossSpec& loss,
                      Backend backend = Backend::Auto, const Progress& progress = nullptr);

}  // namespace saltation::dem
