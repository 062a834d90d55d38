// Host side of the disk-contact engine: validation, material pair tables, the CPU driver.
#include "saltation/dem/engine.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "saltation/errors.hpp"

namespace saltation::dem {

DiskBatch DiskBatch::make(int n_systems, int n_disks) {
  DiskBatch b;
  b.n_systems = n_systems;
  b.n_disks = n_disks;
  const long B = std::max(n_systems, 0), M = std::max(n_disks, 0);
  b.radius.assign(M * B, 0.0);
  b.mass.assign(M * B, 0.0);
  b.material.assign(M * B, 0);
  b.x0.assign(2 * M * B, 0.0);
  b.v0.assign(2 * M * B, 0.0);
  b.log_stiffness.assign(B, 0.0);
  b.damping_ratio.assign(B, 0.0);
  return b;
}

const char* status_message(int code) {
  switch (code) {
    case kOk: return "ok";
    case kCellOverflow: return "cell-list overflow: a cell would hold more than cell_capacity disks";
    case kOutOfGrid: return "a disk left the cell-list grid";
    case kCoincident: return "two disks at the same position (contact normal undefined)";
    case kNonFinite: return "a position or velocity became non-finite";
    default: return "unknown status";
  }
}

namespace {

bool finite(double v) { return std::isfinite(v); }

double harmonic(double a, double b) { return (a + b) == 0.0 ? 0.0 : 2.0 * a * b / (a + b); }

// Serial initial cell-list build on the host, so an overflowing or out-of-grid start is an
// InvalidInput before anything runs (the same logic as the per-step build).
void check_initial_cells(const RolloutConfig& c) {
  std::vector<int> count((size_t)c.n_cells());
  for (int b = 0; b < c.B; ++b) {
    std::fill(count.begin(), count.end(), 0);
    for (int d = 0; d < c.M; ++d) {
      const double x = c.x0[(2L * d) * c.B + b], y = c.x0[(2L * d + 1) * c.B + b];
      const double gx = (x - c.grid_lo[0]) / c.cell_size, gy = (y - c.grid_lo[1]) / c.cell_size;
      if (!(gx >= 0 && gy >= 0 && gx < c.grid_n[0] && gy < c.grid_n[1]))
        throw InvalidInput("x0", b, "disk " + std::to_string(d) + " at (" + std::to_string(x) + ", " +
                                        std::to_string(y) + ") is outside the cell-list grid");
      const int cell = (int)gy * c.grid_n[0] + (int)gx;
      if (++count[cell] > c.cell_cap)
        throw InvalidInput("cell_capacity", b,
                           "cell-list overflow: more than " + std::to_string(c.cell_cap) + " disks in cell (" +
                               std::to_string((int)gx) + ", " + std::to_string((int)gy) +
                               ") at the start (overlapping disks?); raise cell_capacity or spread the disks");
    }
  }
}

}  // namespace

namespace detail {

void prepare(const DiskBatch& batch, const RolloutOptions& o, const LossSpec* loss, RolloutResult& res, Prepared& p) {
  const int B = batch.n_systems, M = batch.n_disks;
  if (B <= 0) throw InvalidInput("n_systems", -1, "must be positive, got " + std::to_string(B));
  if (M <= 0) throw InvalidInput("n_disks", -1, "must be positive, got " + std::to_string(M));
  const long MB = (long)M * B;
  auto need = [&](const std::vector<double>& v, long n, const char* name) {
    if ((long)v.size() != n)
      throw InvalidInput(name, -1, "expected " + std::to_string(n) + " values, got " + std::to_string(v.size()));
  };
  need(batch.radius, MB, "radius");
  need(batch.mass, MB, "mass");
  need(batch.x0, 2 * MB, "x0");
  need(batch.v0, 2 * MB, "v0");
  if (!(o.dt > 0.0) || !finite(o.dt)) throw InvalidInput("dt", -1, "must be positive and finite, got " + std::to_string(o.dt));
  if (o.n_frames <= 0) throw InvalidInput("n_frames", -1, "must be positive, got " + std::to_string(o.n_frames));
  if (o.stride <= 0) throw InvalidInput("stride", -1, "must be positive, got " + std::to_string(o.stride));
  const int nm = (int)o.materials.size();
  if (nm == 0) throw InvalidInput("materials", -1, "at least one material is needed");
  for (int m = 0; m < nm; ++m) {
    const Material& mt = o.materials[m];
    const std::string who = "materials[" + std::to_string(m) + "].";
    if (!(mt.stiffness > 0.0) || !finite(mt.stiffness))
      throw InvalidInput(who + "stiffness", -1, "must be positive and finite, got " + std::to_string(mt.stiffness));
    if (!(mt.restitution > 0.0 && mt.restitution <= 1.0))
      throw InvalidInput(who + "restitution", -1, "must be in (0, 1], got " + std::to_string(mt.restitution));
    if (!(mt.friction >= 0.0) || !finite(mt.friction))
      throw InvalidInput(who + "friction", -1, "must be >= 0, got " + std::to_string(mt.friction));
    if (!(mt.tangential_damping >= 0.0) || !finite(mt.tangential_damping))
      throw InvalidInput(who + "tangential_damping", -1, "must be >= 0, got " + std::to_string(mt.tangential_damping));
  }
  p.pair_k.resize((size_t)nm * nm);
  p.pair_zeta.resize((size_t)nm * nm);
  p.pair_mu.resize((size_t)nm * nm);
  p.pair_gt.resize((size_t)nm * nm);
  for (int a = 0; a < nm; ++a)
    for (int c = 0; c < nm; ++c) {
      const Material &A = o.materials[a], &C = o.materials[c];
      const size_t q = (size_t)a * nm + c;
      p.pair_k[q] = a == c ? A.stiffness : harmonic(A.stiffness, C.stiffness);
      const double e = a == c ? A.restitution : harmonic(A.restitution, C.restitution);
      p.pair_zeta[q] = damping_ratio_from_restitution(e);
      p.pair_mu[q] = a == c ? A.friction : harmonic(A.friction, C.friction);
      p.pair_gt[q] = a == c ? A.tangential_damping : harmonic(A.tangential_damping, C.tangential_damping);
    }
  if (batch.material.empty()) {
    p.material.assign(MB, 0);
  } else {
    if ((long)batch.material.size() != MB)
      throw InvalidInput("material", -1, "expected " + std::to_string(MB) + " ids, got " + std::to_string(batch.material.size()));
    p.material = batch.material;
  }
  double rmax = 0.0;
  for (int d = 0; d < M; ++d)
    for (int b = 0; b < B; ++b) {
      const long i = (long)d * B + b;
      if (!(batch.radius[i] > 0.0) || !finite(batch.radius[i]))
        throw InvalidInput("radius", b, "disk " + std::to_string(d) + ": must be positive and finite, got " + std::to_string(batch.radius[i]));
      if (!(batch.mass[i] > 0.0) || !finite(batch.mass[i]))
        throw InvalidInput("mass", b, "disk " + std::to_string(d) + ": must be positive and finite, got " + std::to_string(batch.mass[i]));
      if (p.material[i] < 0 || p.material[i] >= nm)
        throw InvalidInput("material", b, "disk " + std::to_string(d) + ": id " + std::to_string(p.material[i]) + " is not in [0, " + std::to_string(nm) + ")");
      for (int c = 0; c < 2; ++c) {
        if (!finite(batch.x0[(2L * d + c) * B + b])) throw InvalidInput("x0", b, "disk " + std::to_string(d) + ": non-finite position");
        if (!finite(batch.v0[(2L * d + c) * B + b])) throw InvalidInput("v0", b, "disk " + std::to_string(d) + ": non-finite velocity");
      }
      rmax = std::max(rmax, batch.radius[i]);
    }
  auto per_system = [&](const std::vector<double>& v, const char* name, double dflt, std::vector<double>& out) {
    if (v.empty()) {
      out.assign(B, dflt);
      return;
    }
    if ((long)v.size() != B) throw InvalidInput(name, -1, "expected " + std::to_string(B) + " values, got " + std::to_string(v.size()));
    for (int b = 0; b < B; ++b)
      if (!finite(v[b])) throw InvalidInput(name, b, "non-finite value");
    out = v;
  };
  per_system(batch.log_stiffness, "log_stiffness", 0.0, p.theta);
  per_system(batch.damping_ratio, "damping_ratio", 0.0, p.zeta);
  for (int b = 0; b < B; ++b)
    if (p.zeta[b] < 0.0) throw InvalidInput("damping_ratio", b, "must be >= 0, got " + std::to_string(p.zeta[b]));

  const int P = (int)o.tangents.size();
  p.tan_kind.resize(P);
  p.tan_index.resize(P);
  for (int t = 0; t < P; ++t) {
    const TangentParam& tp = o.tangents[t];
    p.tan_kind[t] = (int)tp.kind;
    p.tan_index[t] = 0;
    if (tp.kind == TangentKind::InitialVelocity || tp.kind == TangentKind::InitialPosition) {
      if (tp.disk < 0 || tp.disk >= M || tp.component < 0 || tp.component > 1)
        throw InvalidInput("tangents[" + std::to_string(t) + "]", -1, "disk/component out of range");
      p.tan_index[t] = 2 * tp.disk + tp.component;
    }
  }

  RolloutConfig& c = p.cfg;
  c = RolloutConfig{};
  c.B = B;
  c.M = M;
  c.P = P;
  c.n_mat = nm;
  c.n_frames = o.n_frames;
  c.stride = o.stride;
  c.dt = o.dt;
  c.normal_model = o.normal == NormalModel::Hertz ? kHertz : kLinear;
  c.tangential = o.tangential ? 1 : 0;
  c.walls = o.walls ? 1 : 0;
  if (o.walls) {
    for (int a = 0; a < 2; ++a) {
      if (!(o.box_hi[a] > o.box_lo[a])) throw InvalidInput("box", -1, "box_hi must exceed box_lo in every axis");
      c.box_lo[a] = o.box_lo[a];
      c.box_hi[a] = o.box_hi[a];
    }
    for (int d = 0; d < M; ++d)
      for (int b = 0; b < B; ++b)
        for (int a = 0; a < 2; ++a) {
          const double x = batch.x0[(2L * d + a) * B + b];
          if (x < o.box_lo[a] || x > o.box_hi[a])
            throw InvalidInput("x0", b, "disk " + std::to_string(d) + " starts outside the walls");
        }
  }
  bool cells = o.neighbors == Neighbors::CellList || (o.neighbors == Neighbors::Auto && M > 64);
  if (cells) {
    if (o.cell_capacity < 1) throw InvalidInput("cell_capacity", -1, "must be >= 1");
    const double h = o.cell_size > 0.0 ? o.cell_size : 2.0 * rmax;
    if (h < 2.0 * rmax * (1.0 - 1e-15))
      throw InvalidInput("cell_size", -1, "must be at least the largest diameter " + std::to_string(2 * rmax));
    double lo[2], hi[2];
    if (o.walls) {
      for (int a = 0; a < 2; ++a) lo[a] = o.box_lo[a], hi[a] = o.box_hi[a];
    } else if (o.grid_hi[0] > o.grid_lo[0] && o.grid_hi[1] > o.grid_lo[1]) {
      for (int a = 0; a < 2; ++a) lo[a] = o.grid_lo[a], hi[a] = o.grid_hi[a];
    } else {
      for (int a = 0; a < 2; ++a) {
        lo[a] = std::numeric_limits<double>::infinity();
        hi[a] = -lo[a];
        for (int d = 0; d < M; ++d)
          for (int b = 0; b < B; ++b) {
            lo[a] = std::min(lo[a], batch.x0[(2L * d + a) * B + b]);
            hi[a] = std::max(hi[a], batch.x0[(2L * d + a) * B + b]);
          }
        const double margin = std::max(o.grid_margin, 0.0) * h + h;
        lo[a] -= margin;
        hi[a] += margin;
      }
    }
    c.use_cells = 1;
    c.cell_size = h;
    c.cell_cap = o.cell_capacity;
    for (int a = 0; a < 2; ++a) {
      c.grid_lo[a] = lo[a];
      const double n = std::ceil((hi[a] - lo[a]) / h);
      if (!(n >= 1.0) || n > 1e6) throw InvalidInput("cell_size", -1, "grid would have an unreasonable number of cells");
      c.grid_n[a] = std::max(1, (int)n);
    }
    if ((double)c.grid_n[0] * c.grid_n[1] > 1e8) throw InvalidInput("cell_size", -1, "grid has more than 1e8 cells");
  }

  c.pair_k = p.pair_k.data();
  c.pair_zeta = p.pair_zeta.data();
  c.pair_mu = p.pair_mu.data();
  c.pair_gt = p.pair_gt.data();
  c.radius = batch.radius.data();
  c.mass = batch.mass.data();
  c.material = p.material.data();
  c.theta = p.theta.data();
  c.zeta = p.zeta.data();
  c.x0 = batch.x0.data();
  c.v0 = batch.v0.data();
  c.tan_kind = p.tan_kind.data();
  c.tan_index = p.tan_index.data();
  if (c.use_cells) check_initial_cells(c);

  res = RolloutResult{};
  res.n_systems = B;
  res.n_disks = M;
  res.n_frames = o.n_frames;
  res.n_tangents = P;
  res.used_cells = c.use_cells != 0;
  const long frame_vals = (long)o.n_frames * 2 * M * B;
  if (o.save_positions) res.x.resize(frame_vals);
  if (o.save_velocities) res.v.resize(frame_vals);
  if (o.save_tangents && P > 0) {
    res.dx.resize(frame_vals * P);
    res.dv.resize(frame_vals * P);
  }
  res.status.assign(B, 0);
  c.out_x = res.x.empty() ? nullptr : res.x.data();
  c.out_v = res.v.empty() ? nullptr : res.v.data();
  c.out_dx = res.dx.empty() ? nullptr : res.dx.data();
  c.out_dv = res.dv.empty() ? nullptr : res.dv.data();
  c.status = res.status.data();
  if (loss) {
    if ((long)loss->observed.size() != frame_vals)
      throw InvalidInput("observed", -1, "expected " + std::to_string(frame_vals) + " values (n_frames * 2M * B), got " + std::to_string(loss->observed.size()));
    if (loss->components < 1 || loss->components > 3) throw InvalidInput("loss_components", -1, "must be 1 (x), 2 (y) or 3 (x and y)");
    per_system(loss->scale, "loss_scale", 1.0, p.scale);
    for (int b = 0; b < B; ++b)
      if (!(p.scale[b] > 0.0)) throw InvalidInput("loss_scale", b, "must be positive");
    c.obs = loss->observed.data();
    c.loss_mask = loss->components;
    c.loss_scale = p.scale.data();
    res.loss.assign(B, 0.0);
    res.grad.assign((size_t)P * B, 0.0);
    c.loss = res.loss.data();
    c.grad = P > 0 ? res.grad.data() : nullptr;
  }
}

namespace {
// All threads of an OpenMP parallel region run the body together over the disks of one system.
struct OmpTeam {
  template <class F>
  void for_each(int n, F&& f) const {
#pragma omp for schedule(static)
    for (int i = 0; i < n; ++i) f(i);
  }
  template <class F>
  void single(F&& f) const {
#pragma omp single
    f();
  }
};
}  // namespace

void run_cpu(const RolloutConfig& c, int team_threshold) {
  const long wd = c.work_doubles(), wi = c.work_ints();
  const int nt = omp_get_max_threads();
  if (c.B >= nt || c.M < team_threshold || nt == 1) {
    // Never more threads than systems: a small batch (e.g. the last rounds of a fit) does not
    // wait at barriers for threads with nothing to do.
#pragma omp parallel num_threads(std::max(1, std::min(nt, c.B)))
    {
      std::vector<double> bufd((size_t)wd);
      std::vector<int> bufi((size_t)wi);
      const Work w{bufd.data(), 1, bufi.data(), 1};
#pragma omp for schedule(dynamic, 16)
      for (int b = 0; b < c.B; ++b) rollout_system(SerialTeam{}, c, b, w);
    }
  } else {
    // Few large systems: the threads share one system at a time.
    std::vector<double> bufd((size_t)wd);
    std::vector<int> bufi((size_t)wi);
    const Work w{bufd.data(), 1, bufi.data(), 1};
    for (int b = 0; b < c.B; ++b) {
#pragma omp parallel
      rollout_system(OmpTeam{}, c, b, w);
    }
  }
}

}  // namespace detail

RolloutResult rollout(const DiskBatch& batch, const RolloutOptions& options, const LossSpec* loss) {
  RolloutResult res;
  detail::Prepared prep;
  detail::prepare(batch, options, loss, res, prep);
  const Backend be = resolve_backend(options.backend);
  res.backend = be;
  const auto t0 = std::chrono::steady_clock::now();
  if (be == Backend::Cuda) {
    if (options.cuda_block_threshold < 1) throw InvalidInput("cuda_block_threshold", -1, "must be >= 1");
    detail::run_cuda(prep.cfg, options.cuda_block_threshold);
  } else {
    detail::run_cpu(prep.cfg, options.cpu_team_threshold);
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace saltation::dem
