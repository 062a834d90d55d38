#pragma once
// Host API of the batched 2D disk-contact (DEM) engine. See docs/disks.md.
//
// B independent systems of M disks each. Per-disk radius, mass and material id per system;
// per-system log-stiffness theta (every pair stiffness is k_pair * exp(theta)) and an added
// normal damping ratio zeta. Velocity Verlet with fixed dt, n_frames frames of `stride`
// steps, positions and velocities saved after each frame (the initial state is not saved).
// Forward tangents of the whole discrete rollout along chosen parameters, and optionally a
// position loss and its gradient computed in the same pass.
#include <string>
#include <vector>

#include "saltation/backend.hpp"
#include "saltation/dem/rollout.hpp"

namespace saltation::dem {

enum class NormalModel { Linear, Hertz };
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

enum class TangentKind { LogStiffness, Damping, InitialVelocity, InitialPosition };
struct TangentParam {
  TangentKind kind = TangentKind::LogStiffness;
  int disk = 0;       // for InitialVelocity / InitialPosition
  int component = 0;  // 0: x, 1: y
};

struct DiskBatch {
  int n_systems = 0;  // B
  int n_disks = 0;    // M
  std::vector<double> radius;      // [d*B + b]
  std::vector<double> mass;        // [d*B + b]
  std::vector<int> material;       // [d*B + b]; empty: all 0
  std::vector<double> x0, v0;      // [(2d + c)*B + b]
  std::vector<double> log_stiffness;  // [b]; empty: all 0
  std::vector<double> damping_ratio;  // [b] added normal damping ratio; empty: all 0

  // Allocates every array for B systems of M disks (zeros; radius/mass 0 must be filled).
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
  Neighbors neighbors = Neighbors::Auto;  // Auto: cell list when M > 64
  double cell_size = 0.0;                 // 0: 2 * largest radius
  int cell_capacity = 8;                  // disks per cell; more -> kCellOverflow
  // Cell-list grid without walls: [grid_lo, grid_hi]; when equal, the initial bounding box of
  // all systems grown by grid_margin on every side. A disk leaving it stops its system with
  // kOutOfGrid (never a silent drop).
  double grid_lo[2] = {0.0, 0.0};
  double grid_hi[2] = {0.0, 0.0};
  double grid_margin = 4.0;
  std::vector<TangentParam> tangents;
  bool save_positions = true;
  bool save_velocities = true;
  bool save_tangents = true;
  Backend backend = Backend::Cpu;
  int cuda_block_threshold = 32;  // CUDA: thread per system when M <= this, else block per system
  // CPU: when B < threads and M >= this, the OpenMP threads share one system (a team over its
  // disks, barriers every step); otherwise one system per thread. The team only pays off for
  // large M on an otherwise idle machine (barriers suffer badly from oversubscription).
  int cpu_team_threshold = 4096;
};

// Optional position loss L_b = mean over frames, disks and selected components of
// ((x - obs) / scale_b)^2, and dL_b/dp for every tangent direction p.
struct LossSpec {
  std::vector<double> observed;  // [(f*2M + 2d + c)*B + b]
  int components = 1;            // bit 0: x, bit 1: y
  std::vector<double> scale;     // [b]; empty: all 1
};

struct RolloutResult {
  int n_systems = 0, n_disks = 0, n_frames = 0, n_tangents = 0;
  std::vector<double> x, v;    // [(f*2M + 2d + c)*B + b]
  std::vector<double> dx, dv;  // [((f*P + p)*2M + 2d + c)*B + b]
  std::vector<double> loss;    // [b]
  std::vector<double> grad;    // [p*B + b]
  std::vector<int> status;     // [b], StatusCode
  bool used_cells = false;
  Backend backend = Backend::Cpu;
  double seconds = 0.0;        // engine wall time (no validation)

  double pos(int f, int b, int d, int c) const { return x[((long)f * 2 * n_disks + 2 * d + c) * n_systems + b]; }
  double vel(int f, int b, int d, int c) const { return v[((long)f * 2 * n_disks + 2 * d + c) * n_systems + b]; }
  double dpos(int f, int p, int b, int d, int c) const {
    return dx[(((long)f * n_tangents + p) * 2 * n_disks + 2 * d + c) * n_systems + b];
  }
  double dvel(int f, int p, int b, int d, int c) const {
    return dv[(((long)f * n_tangents + p) * 2 * n_disks + 2 * d + c) * n_systems + b];
  }
};

const char* status_message(int code);

// Validates everything (throws InvalidInput naming the parameter and the system) and runs.
RolloutResult rollout(const DiskBatch& batch, const RolloutOptions& options, const LossSpec* loss = nullptr);

// ---- internals shared by the drivers (not part of the stable API)
namespace detail {
struct Prepared {
  RolloutConfig cfg;  // host pointers into the vectors below / the batch / the result
  std::vector<double> pair_k, pair_zeta, pair_mu, pair_gt, theta, zeta, scale;
  std::vector<int> material, tan_kind, tan_index;
};
void prepare(const DiskBatch& batch, const RolloutOptions& options, const LossSpec* loss, RolloutResult& result,
             Prepared& prep);
void run_cpu(const RolloutConfig& cfg, int team_threshold = 4096);
// CUDA driver: copies the host arrays named by cfg to the device, runs, copies results back.
void run_cuda(const RolloutConfig& cfg, int block_threshold);
}  // namespace detail

}  // namespace saltation::dem
