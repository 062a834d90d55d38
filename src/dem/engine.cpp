// Host side of the disk-contact engine: validation, material pair tables, the CPU driver.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "engine_internal.hpp"
#include "saltation/errors.hpp"
#include "saltation/interrupt.hpp"
#include "saltation/numeric.hpp"
#include "saltation/progress_counter.hpp"

namespace saltation::dem {

DiskBatch DiskBatch::make(int n_systems, int n_disks) {
  DiskBatch b;
  b.n_systems = n_systems;
  b.n_disks = n_disks;
  const long systems = std::max(n_systems, 0), disks = std::max(n_disks, 0);
  b.radius.assign(disks * systems, 0.0);
  b.mass.assign(disks * systems, 0.0);
  b.material.assign(disks * systems, 0);
  b.x0.assign(2 * disks * systems, 0.0);
  b.v0.assign(2 * disks * systems, 0.0);
  b.log_stiffness.assign(systems, 0.0);
  b.damping_ratio.assign(systems, 0.0);
  return b;
}

namespace {

double harmonic(double a, double b) { return (a + b) == 0.0 ? 0.0 : 2.0 * a * b / (a + b); }

// Serial initial cell-list build on the host, so an overflowing or out-of-grid start is an
// InvalidInput before anything runs (the same logic as the per-step build).
void check_initial_cells(const RolloutView& c, const std::vector<double>& x0) {
  std::vector<int> count((size_t)c.n_cells());
  const int n_systems = c.n_systems;
  for (int b = 0; b < n_systems; ++b) {
    std::fill(count.begin(), count.end(), 0);
    for (int d = 0; d < c.n_disks; ++d) {
      const double x = x0[(2L * d) * n_systems + b], y = x0[(2L * d + 1) * n_systems + b];
      const double gx = (x - c.grid_lo[0]) / c.cell_size, gy = (y - c.grid_lo[1]) / c.cell_size;
      if (!(gx >= 0 && gy >= 0 && gx < c.grid_n[0] && gy < c.grid_n[1]))
        throw InvalidInput("x0", b,
                           "disk " + std::to_string(d) + " at (" + std::to_string(x) + ", " + std::to_string(y) +
                               ") is outside the cell-list grid");
      const int cell = (int)gy * c.grid_n[0] + (int)gx;
      if (++count[cell] > c.cell_capacity)
        throw InvalidInput("cell_capacity", b,
                           "cell-list overflow: more than " + std::to_string(c.cell_capacity) + " disks in cell (" +
                               std::to_string((int)gx) + ", " + std::to_string((int)gy) +
                               ") at the start (overlapping disks?); raise cell_capacity or spread the disks");
    }
  }
}

// The steps of detail::prepare, in the order it takes them: the first check that fails is the
// error reported, so the order is part of what prepare does.

// The batch's sizes: systems, disks and the length of each per-disk array.
void check_sizes(const DiskBatch& batch) {
  const int n_systems = batch.n_systems, n_disks = batch.n_disks;
  if (n_systems <= 0) throw InvalidInput("n_systems", -1, "must be positive, got " + std::to_string(n_systems));
  if (n_disks <= 0) throw InvalidInput("n_disks", -1, "must be positive, got " + std::to_string(n_disks));
  const long per_disk = (long)n_disks * n_systems;
  auto need = [](const std::vector<double>& v, long n, const char* name) {
    if ((long)v.size() != n)
      throw InvalidInput(name, -1, "expected " + std::to_string(n) + " values, got " + std::to_string(v.size()));
  };
  need(batch.radius, per_disk, "radius");
  need(batch.mass, per_disk, "mass");
  need(batch.x0, 2 * per_disk, "x0");
  need(batch.v0, 2 * per_disk, "v0");
}

// The time steps: their size, and how many frames are recorded how many steps apart.
void check_stepping(const RolloutOptions& o) {
  if (!(o.dt > 0.0) || !is_finite(o.dt))
    throw InvalidInput("dt", -1, "must be positive and finite, got " + std::to_string(o.dt));
  if (o.n_frames <= 0) throw InvalidInput("n_frames", -1, "must be positive, got " + std::to_string(o.n_frames));
  if (o.stride <= 0) throw InvalidInput("stride", -1, "must be positive, got " + std::to_string(o.stride));
}

// Checks the materials and fills the tables of material pairs: a material with itself keeps its
// values, two materials take their harmonic means; the restitution becomes a damping ratio.
void fill_material_pairs(const std::vector<Material>& materials, detail::RolloutInputs& in) {
  const int n_materials = (int)materials.size();
  if (n_materials == 0) throw InvalidInput("materials", -1, "at least one material is needed");
  for (int m = 0; m < n_materials; ++m) {
    const Material& mt = materials[m];
    const std::string who = "materials[" + std::to_string(m) + "].";
    if (!(mt.stiffness > 0.0) || !is_finite(mt.stiffness))
      throw InvalidInput(who + "stiffness", -1, "must be positive and finite, got " + std::to_string(mt.stiffness));
    if (!(mt.restitution > 0.0 && mt.restitution <= 1.0))
      throw InvalidInput(who + "restitution", -1, "must be in (0, 1], got " + std::to_string(mt.restitution));
    if (!(mt.friction >= 0.0) || !is_finite(mt.friction))
      throw InvalidInput(who + "friction", -1, "must be >= 0, got " + std::to_string(mt.friction));
    if (!(mt.tangential_damping >= 0.0) || !is_finite(mt.tangential_damping))
      throw InvalidInput(who + "tangential_damping", -1, "must be >= 0, got " + std::to_string(mt.tangential_damping));
  }
  const size_t n_pairs = (size_t)n_materials * n_materials;
  in.pair_k.resize(n_pairs);
  in.pair_zeta.resize(n_pairs);
  in.pair_mu.resize(n_pairs);
  in.pair_gt.resize(n_pairs);
  for (int a = 0; a < n_materials; ++a)
    for (int c = 0; c < n_materials; ++c) {
      const Material &A = materials[a], &C = materials[c];
      const size_t q = (size_t)a * n_materials + c;
      in.pair_k[q] = a == c ? A.stiffness : harmonic(A.stiffness, C.stiffness);
      const double e = a == c ? A.restitution : harmonic(A.restitution, C.restitution);
      in.pair_zeta[q] = damping_ratio_from_restitution(e);
      in.pair_mu[q] = a == c ? A.friction : harmonic(A.friction, C.friction);
      in.pair_gt[q] = a == c ? A.tangential_damping : harmonic(A.tangential_damping, C.tangential_damping);
    }
}

// The disks: material ids (material 0 where the batch gives none), radii, masses and initial
// states, checked disk by disk.
void fill_disks(const DiskBatch& batch, int n_materials, detail::RolloutInputs& in) {
  const int n_systems = batch.n_systems, n_disks = batch.n_disks;
  const long per_disk = (long)n_disks * n_systems;
  if (batch.material.empty()) {
    in.material.assign(per_disk, 0);
  } else {
    if ((long)batch.material.size() != per_disk)
      throw InvalidInput("material", -1,
                         "expected " + std::to_string(per_disk) + " ids, got " + std::to_string(batch.material.size()));
    in.material = batch.material;
  }
  for (int d = 0; d < n_disks; ++d)
    for (int b = 0; b < n_systems; ++b) {
      const long i = (long)d * n_systems + b;
      const std::string disk = "disk " + std::to_string(d) + ": ";
      if (!(batch.radius[i] > 0.0) || !is_finite(batch.radius[i]))
        throw InvalidInput("radius", b, disk + "must be positive and finite, got " + std::to_string(batch.radius[i]));
      if (!(batch.mass[i] > 0.0) || !is_finite(batch.mass[i]))
        throw InvalidInput("mass", b, disk + "must be positive and finite, got " + std::to_string(batch.mass[i]));
      if (in.material[i] < 0 || in.material[i] >= n_materials)
        throw InvalidInput(
            "material", b,
            disk + "id " + std::to_string(in.material[i]) + " is not in [0, " + std::to_string(n_materials) + ")");
      for (int c = 0; c < 2; ++c) {
        if (!is_finite(batch.x0[(2L * d + c) * n_systems + b]))
          throw InvalidInput("x0", b, disk + "non-finite position");
        if (!is_finite(batch.v0[(2L * d + c) * n_systems + b]))
          throw InvalidInput("v0", b, disk + "non-finite velocity");
      }
    }
  in.radius = batch.radius;
  in.mass = batch.mass;
  in.x0 = batch.x0;
  in.v0 = batch.v0;
}

// A per-system input: `fallback` for every system where `v` is empty, else `v`, which must hold
// one finite value per system.
std::vector<double> per_system(const std::vector<double>& v, int n_systems, const char* name, double fallback) {
  if (v.empty()) return std::vector<double>(n_systems, fallback);
  if ((long)v.size() != n_systems)
    throw InvalidInput(name, -1, "expected " + std::to_string(n_systems) + " values, got " + std::to_string(v.size()));
  for (int b = 0; b < n_systems; ++b)
    if (!is_finite(v[b])) throw InvalidInput(name, b, "non-finite value");
  return v;
}

// The systems' stiffness (as log k) and damping ratio.
void fill_systems(const DiskBatch& batch, detail::RolloutInputs& in) {
  in.log_stiffness = per_system(batch.log_stiffness, batch.n_systems, "log_stiffness", 0.0);
  in.damping_ratio = per_system(batch.damping_ratio, batch.n_systems, "damping_ratio", 0.0);
  for (int b = 0; b < batch.n_systems; ++b)
    if (in.damping_ratio[b] < 0.0)
      throw InvalidInput("damping_ratio", b, "must be >= 0, got " + std::to_string(in.damping_ratio[b]));
}

// The tangent directions: each one's kind and, for an initial position or velocity, its state index.
void fill_tangents(const std::vector<TangentParam>& tangents, int n_disks, detail::RolloutInputs& in) {
  const int n_tangents = (int)tangents.size();
  in.tangent_kind.resize(n_tangents);
  in.tangent_index.resize(n_tangents);
  for (int t = 0; t < n_tangents; ++t) {
    const TangentParam& tp = tangents[t];
    in.tangent_kind[t] = tp.kind;
    in.tangent_index[t] = 0;
    if (tp.kind == TangentKind::InitialVelocity || tp.kind == TangentKind::InitialPosition) {
      if (tp.disk < 0 || tp.disk >= n_disks || tp.component < 0 || tp.component > 1)
        throw InvalidInput("tangents[" + std::to_string(t) + "]", -1, "disk/component out of range");
      in.tangent_index[t] = 2 * tp.disk + tp.component;
    }
  }
}

// The reflecting walls, when the options have them: checks the box and that every disk starts
// inside it.
void place_walls(const DiskBatch& batch, const RolloutOptions& o, RolloutView& c) {
  c.walls = o.walls;
  if (!o.walls) return;
  for (int a = 0; a < 2; ++a) {
    if (!(o.box_hi[a] > o.box_lo[a]))
      throw InvalidInput("box_hi[" + std::to_string(a) + "]", -1,
                         std::to_string(o.box_hi[a]) + " must exceed box_lo[" + std::to_string(a) +
                             "] = " + std::to_string(o.box_lo[a]));
    c.box_lo[a] = o.box_lo[a];
    c.box_hi[a] = o.box_hi[a];
  }
  for (int d = 0; d < batch.n_disks; ++d)
    for (int b = 0; b < batch.n_systems; ++b)
      for (int a = 0; a < 2; ++a) {
        const double x = batch.x0[(2L * d + a) * batch.n_systems + b];
        if (x < o.box_lo[a] || x > o.box_hi[a])
          throw InvalidInput("x0", b, "disk " + std::to_string(d) + " starts outside the walls");
      }
}

// The rollout's sizes and options as a view without arrays, walls included (place_walls).
RolloutView shape_of(const DiskBatch& batch, const RolloutOptions& o) {
  RolloutView c;
  c.n_systems = batch.n_systems;
  c.n_disks = batch.n_disks;
  c.n_tangents = (int)o.tangents.size();
  c.n_materials = (int)o.materials.size();
  c.n_frames = o.n_frames;
  c.stride = o.stride;
  c.dt = o.dt;
  c.normal = o.normal;
  c.tangential = o.tangential;
  place_walls(batch, o, c);
  return c;
}

// The cell-list grid: cells at least the largest diameter wide, over the walls' box, the grid
// the options give, or else the disks' initial bounding box grown by grid_margin cells and one;
// checks that every disk starts in the grid without overflowing its cell.
void place_cell_grid(const DiskBatch& batch, const RolloutOptions& o, RolloutView& c) {
  const int n_systems = batch.n_systems, n_disks = batch.n_disks;
  if (o.cell_capacity < 1) throw InvalidInput("cell_capacity", -1, "must be >= 1");
  const double rmax = *std::max_element(batch.radius.begin(), batch.radius.end());
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
      for (int d = 0; d < n_disks; ++d)
        for (int b = 0; b < n_systems; ++b) {
          lo[a] = std::min(lo[a], batch.x0[(2L * d + a) * n_systems + b]);
          hi[a] = std::max(hi[a], batch.x0[(2L * d + a) * n_systems + b]);
        }
      const double margin = std::max(o.grid_margin, 0.0) * h + h;
      lo[a] -= margin;
      hi[a] += margin;
    }
  }
  c.use_cells = true;
  c.cell_size = h;
  c.cell_capacity = o.cell_capacity;
  for (int a = 0; a < 2; ++a) {
    c.grid_lo[a] = lo[a];
    const double n = std::ceil((hi[a] - lo[a]) / h);
    if (!(n >= 1.0) || n > 1e6) throw InvalidInput("cell_size", -1, "grid would have an unreasonable number of cells");
    c.grid_n[a] = std::max(1, (int)n);
  }
  if ((double)c.grid_n[0] * c.grid_n[1] > 1e8) throw InvalidInput("cell_size", -1, "grid has more than 1e8 cells");
  check_initial_cells(c, batch.x0);
}

// Values of one frame-indexed output, n_frames * 2 * n_disks * n_systems (also the observations').
long frame_values(const RolloutView& c) { return (long)c.n_frames * 2 * ((long)c.n_disks * c.n_systems); }

// The position loss: the observations (borrowed, not copied), the components compared and the
// per-system scales.
void fill_loss(const LossSpec& loss, detail::RolloutInputs& in, RolloutView& c) {
  if ((long)loss.observed.size() != frame_values(c))
    throw InvalidInput("observed", -1,
                       "expected " + std::to_string(frame_values(c)) +
                           " values (n_frames * 2 * n_disks * n_systems), got " + std::to_string(loss.observed.size()));
  if (loss.components < 1 || loss.components > 3)
    throw InvalidInput("loss_components", -1, "must be 1 (x), 2 (y) or 3 (x and y)");
  in.loss_scale = per_system(loss.scale, c.n_systems, "loss_scale", 1.0);
  for (int b = 0; b < c.n_systems; ++b)
    if (!(in.loss_scale[b] > 0.0)) throw InvalidInput("loss_scale", b, "must be positive");
  in.observed = {loss.observed.data(), loss.observed.size()};
  c.loss_components = loss.components;
}

// The result, every output the options ask for allocated; every system starts Finished.
RolloutResult allocate_result(const RolloutView& c, const RolloutOptions& o, bool loss) {
  RolloutResult res;
  res.n_systems = c.n_systems;
  res.n_disks = c.n_disks;
  res.n_frames = c.n_frames;
  res.n_tangents = c.n_tangents;
  res.used_cells = c.use_cells;
  if (o.save_positions) res.x.resize(frame_values(c));
  if (o.save_velocities) res.v.resize(frame_values(c));
  if (o.save_tangents && c.n_tangents > 0) {
    res.dx.resize(frame_values(c) * c.n_tangents);
    res.dv.resize(frame_values(c) * c.n_tangents);
  }
  res.status.assign(c.n_systems, static_cast<int>(Status::Finished));
  if (loss) {
    res.loss.assign(c.n_systems, 0.0);
    res.grad.assign((size_t)c.n_tangents * c.n_systems, 0.0);
  }
  return res;
}

}  // namespace

namespace detail {

Prepared prepare(const DiskBatch& batch, const RolloutOptions& o, const LossSpec* loss) {
  check_sizes(batch);
  check_stepping(o);
  Prepared prep;
  fill_material_pairs(o.materials, prep.inputs);
  fill_disks(batch, (int)o.materials.size(), prep.inputs);
  fill_systems(batch, prep.inputs);
  fill_tangents(o.tangents, batch.n_disks, prep.inputs);
  prep.shape = shape_of(batch, o);
  if (o.neighbors == Neighbors::CellList || (o.neighbors == Neighbors::Auto && batch.n_disks > 64))
    place_cell_grid(batch, o, prep.shape);
  if (loss) fill_loss(*loss, prep.inputs, prep.shape);
  prep.result = allocate_result(prep.shape, o, loss != nullptr);
  return prep;
}

RolloutView Prepared::host_view() {
  RolloutView view = shape;
  auto point = [](auto& array, auto& pointer) { pointer = array.empty() ? nullptr : array.data(); };
  zip_inputs(inputs, view, point);
  zip_outputs(result, view, point);
  return view;
}

namespace {
// All threads of an OpenMP parallel region run the body together over the disks of one system.
struct OmpTeam {
  int* votes;  // shared by the team: any()'s result

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
  bool any(bool pred) const {
    // The first barrier: every member has read the previous result before it is reset.
#pragma omp barrier
#pragma omp single
    *votes = 0;
    if (pred) {
#pragma omp atomic write
      *votes = 1;
    }
#pragma omp barrier
    int result;
#pragma omp atomic read
    result = *votes;
    return result != 0;
  }
};
}  // namespace

namespace {
// The widest vector's doubles (AVX-512), and the first address in p's buffer aligned for it.
constexpr int kVectorDoubles = 8;
double* vector_aligned(double* p) {
  const auto misalignment = reinterpret_cast<std::uintptr_t>(p) % (kVectorDoubles * sizeof(double));
  return misalignment ? p + (kVectorDoubles * sizeof(double) - misalignment) / sizeof(double) : p;
}
}  // namespace

void run_cpu(const RolloutView& c, int team_threshold, const Progress* progress) {
  const long wd = c.work_doubles(), wi = c.work_ints();
  const int nt = omp_get_max_threads();
  ProgressCounter counter(progress, (std::size_t)c.n_systems);
  if (c.n_systems >= nt || c.n_disks < team_threshold || nt == 1) {
    // Groups of neighbouring systems in SIMD lanes where the CPU has them, all pairs only (cell
    // lists serve one system per call); the systems past the last full group one at a time.
    const SystemLanes lanes = c.use_cells ? SystemLanes{} : system_lanes();
    const int width = std::max(1, lanes.width);
    const int n_groups = (c.n_systems + width - 1) / width;
    // Never more threads than groups: a small batch (e.g. the last rounds of a fit) does not
    // wait at barriers for threads with nothing to do.
#pragma omp parallel num_threads(std::max(1, std::min(nt, n_groups)))
    {
      std::vector<double> bufd((size_t)(wd * width + kVectorDoubles));
      std::vector<int> bufi((size_t)(wi * width));
      const Work w{vector_aligned(bufd.data()), 1, bufi.data(), 1};
#pragma omp for schedule(dynamic, std::max(1, 16 / width))
      for (int g = 0; g < n_groups; ++g) {
        if (interrupt_requested()) continue;  // the remaining systems are skipped, not run
        const int b = g * width;
        const int end = std::min(b + width, c.n_systems);
        if (lanes.width && end - b == width) lanes.run_group(c, b, w);
        else
          for (int s = b; s < end; ++s) rollout_at_known_sizes<OneSystem>(c, s, w);
        for (int s = b; s < end; ++s) counter.one_done();
      }
    }
  } else {
    // Few large systems: the threads share one system at a time.
    std::vector<double> bufd((size_t)wd);
    std::vector<int> bufi((size_t)wi);
    const Work w{bufd.data(), 1, bufi.data(), 1};
    int votes = 0;
    for (int b = 0; b < c.n_systems && !interrupt_requested(); ++b) {
#pragma omp parallel
      rollout_system(OmpTeam{&votes}, c, b, w);
      counter.one_done();
    }
  }
  throw_if_interrupted();
  counter.finish();
}

}  // namespace detail

namespace {
RolloutResult run(const DiskBatch& batch, const RolloutOptions& options, const LossSpec* loss, Backend backend,
                  const Progress& progress) {
  detail::Prepared prep = detail::prepare(batch, options, loss);
  const Progress* report = progress ? &progress : nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  const Backend resolved = run_on_backend(
      backend, [&] { detail::run_cpu(prep.host_view(), options.cpu_team_threshold, report); },
      [&] {
        if (options.cuda_block_threshold < 1) throw InvalidInput("cuda_block_threshold", -1, "must be >= 1");
        detail::run_cuda(prep, options.cuda_block_threshold, report);
      });
  prep.result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  prep.result.backend = resolved;
  return std::move(prep.result);
}
}  // namespace

RolloutResult rollout(const DiskBatch& batch, const RolloutOptions& options, Backend backend,
                      const Progress& progress) {
  return run(batch, options, nullptr, backend, progress);
}

RolloutResult rollout(const DiskBatch& batch, const RolloutOptions& options, const LossSpec& loss, Backend backend,
                      const Progress& progress) {
  return run(batch, options, &loss, backend, progress);
}

}  // namespace saltation::dem
