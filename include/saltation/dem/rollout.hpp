#pragma once
// Per-system disk-contact rollout (host/device): velocity Verlet with fixed dt, n_frames
// frames of `stride` steps, forward tangents, and an optional position loss with its
// gradient. This is the one body both drivers run: the CPU driver calls it from an OpenMP
// loop (SerialTeam per system, or an OpenMP team over the disks of one system), the CUDA
// driver from a thin kernel (one thread per system, or a block per system).
//
// Layouts, with b the system (n_systems of them, fastest), d the disk, p the tangent
// direction, f the frame and i = 2*d + component:
//   per-disk inputs     radius, mass, material           [d*n_systems + b]
//   per-system inputs   log_stiffness, damping_ratio     [b]
//   states              x0, v0                           [i*n_systems + b]
//   saved frames        x, v                             [(f*2*n_disks + i)*n_systems + b]
//   saved tangents      dx, dv                           [((f*n_tangents + p)*2*n_disks + i)*n_systems + b]
//   observations        observed                         [(f*2*n_disks + i)*n_systems + b]
//   loss, status        [b]; gradient [p*n_systems + b]
// Work memory is addressed through Work (base pointer + stride), so the CPU can use a
// contiguous per-thread buffer and the GPU an interleaved (coalesced) one.
#include <cmath>
#include <limits>
#include <type_traits>

#include "saltation/config.hpp"
#include "saltation/dem/contact.hpp"
#include "saltation/numeric.hpp"
#include "saltation/status.hpp"

namespace saltation::dem {

// A direction of the forward tangents (the derivative of the whole rollout along it).
enum class TangentKind : int { LogStiffness, Damping, InitialVelocity, InitialPosition };

// What rollout_system reads and writes: sizes, options and raw pointers into host or device
// memory. Trivially copyable, passed to kernels by value. The host owners of the arrays are
// the engine's prepared inputs and RolloutResult (engine.hpp); src/dem/engine_internal.hpp
// holds the one list of the arrays that wires views, device mirrors and copies.
struct RolloutView {
  int n_systems = 0, n_disks = 0, n_tangents = 0, n_materials = 0;
  int n_frames = 0, stride = 0;
  double dt = 0;
  NormalModel normal = NormalModel::Linear;
  bool tangential = false;
  bool walls = false;  // reflecting (elastic-contact) walls at box_lo / box_hi
  double box_lo[2] = {0, 0}, box_hi[2] = {0, 0};
  bool use_cells = false;
  double grid_lo[2] = {0, 0};
  double cell_size = 0;
  int grid_n[2] = {0, 0};
  int cell_capacity = 0;
  int loss_components = 1;  // bit 0: x component, bit 1: y component
  // inputs
  const double* pair_k = nullptr;     // [n_materials^2], stiffness at log_stiffness = 0
  const double* pair_zeta = nullptr;  // damping ratio from the pair restitution
  const double* pair_mu = nullptr;
  const double* pair_gt = nullptr;
  const double* radius = nullptr;
  const double* mass = nullptr;
  const int* material = nullptr;
  const double* log_stiffness = nullptr;
  const double* damping_ratio = nullptr;
  const double* x0 = nullptr;
  const double* v0 = nullptr;
  const TangentKind* tangent_kind = nullptr;  // [n_tangents]
  const int* tangent_index = nullptr;         // [n_tangents] state index i of an initial-state direction
  const double* observed = nullptr;           // null: no loss
  const double* loss_scale = nullptr;         // [b]
  // outputs (null: not wanted)
  double* x = nullptr;
  double* v = nullptr;
  double* dx = nullptr;
  double* dv = nullptr;
  double* loss = nullptr;
  double* grad = nullptr;
  int* status = nullptr;

  SALTATION_HD int n_cells() const { return use_cells ? grid_n[0] * grid_n[1] : 0; }
  SALTATION_HD long work_doubles() const { return 7L * n_disks * (1 + n_tangents) + n_disks; }
  SALTATION_HD long work_ints() const { return 1L + n_disks + (long)n_cells() * (1 + cell_capacity); }
};
static_assert(std::is_trivially_copyable<RolloutView>::value, "RolloutView is passed to kernels by value");

// Per-system work memory: element k of the doubles at doubles[k * double_stride].
struct Work {
  double* doubles;
  long double_stride;
  int* ints;
  long int_stride;
};

// A "team" runs the per-system code together:
//   for_each(n, f)  f(0..n-1) split over the members, then a barrier;
//   single(f)       one member runs f, then a barrier;
//   any(pred)       true on every member when pred is true on any member. It is a barrier:
//                   every member evaluates pred before any member leaves, so a value read
//                   after the previous barrier cannot be overwritten by a fast member's next
//                   phase before a slow member has read it. Every decision that changes the
//                   sequence of barriers (break, early exit) must go through any().
// SerialTeam is the plain loop; the CUDA block team and the OpenMP team live in their drivers.
struct SerialTeam {
  template <class F>
  SALTATION_HD void for_each(int n, F&& f) const {
    for (int i = 0; i < n; ++i) f(i);
  }
  template <class F>
  SALTATION_HD void single(F&& f) const {
    f();
  }
  SALTATION_HD bool any(bool pred) const { return pred; }
};

// What a driver knows about a batch at compile time: the disk count (0: only at run time), the
// tangent count (-1: only at run time) and whether work memory is contiguous. The CPU driver
// instantiates the body for the seed's disk pairs, so that its loops unroll and its offsets are
// constants; every other batch runs the same body with run-time sizes.
template <int Disks = 0, int Tangents = -1, bool Contiguous = false>
struct Shape {
  static constexpr int disks = Disks, tangents = Tangents;
  static constexpr bool contiguous = Contiguous;
};

// What one call of rollout_system advances: one system, its per-system values doubles. Every
// driver runs this, except the CPU's SIMD lanes (src/dem/engine_lanes.cpp), whose policy has the
// same members for W consecutive systems b .. b + W - 1 (a value per lane of a vector, a Mask per
// comparison; W status slots in the int work memory) and runs the same body.
struct OneSystem {
  using Value = double;
  static constexpr int width = 1;
  // the value at p = &array[i * n_systems + b]
  SALTATION_HD static double load(const double* p) { return *p; }
  SALTATION_HD static void store(double* p, double v) { *p = v; }
  SALTATION_HD static void store_where(double* p, bool where, double v) {
    if (where) *p = v;
  }
  // table[material_d * n_materials + material_j], the materials at md and mj
  SALTATION_HD static double pair_entry(const double* table, const int* md, const int* mj, int n_materials) {
    return table[*md * n_materials + *mj];
  }
  SALTATION_HD static double* values(double* work) { return work; }
  // the status slot(s)
  SALTATION_HD static bool unfinished(const int* slot) { return *slot != static_cast<int>(Status::Finished); }
  SALTATION_HD static void set_status(int* slot, bool where, Status st) {
    if (where) *slot = static_cast<int>(st);
  }
  SALTATION_HD static void copy_status(int* out, const int* slot) { *out = *slot; }
};

template <class Team, class Fixed = Shape<>, class Lanes = OneSystem>
SALTATION_HD void rollout_system(const Team& team, const RolloutView& c, int b, const Work& w) {
  using T = typename Lanes::Value;
  using std::exp;
  using std::sqrt;
  const int n_disks = Fixed::disks > 0 ? Fixed::disks : c.n_disks;
  const int n_tangents = Fixed::tangents >= 0 ? Fixed::tangents : c.n_tangents;
  const int n_systems = c.n_systems;
  const int n_coords = 2 * n_disks;  // state entries of one system: x and y of every disk
  T* const wd = Lanes::values(w.doubles);
  const long s = Fixed::contiguous ? 1 : w.double_stride;
  // work offsets (in elements): positions, velocities, forces, their tangents, and the
  // per-disk loss and gradient accumulators, and the kicks' dt / (2 m)
  const long oX = 0, oV = n_coords, oF = 2L * n_coords, oDX = 3L * n_coords;
  const long oDV = oDX + (long)n_tangents * n_coords, oDF = oDV + (long)n_tangents * n_coords;
  const long oAL = oDF + (long)n_tangents * n_coords, oAG = oAL + n_disks;
  const long oH = oAG + (long)n_tangents * n_disks;
  int* const wi = w.ints;
  const long is = Fixed::contiguous ? 1 : w.int_stride;
  // int work: the status, each disk's cell, the cell counts, the cell slots
  const long oCell = 1, oCount = 1 + n_disks, oSlot = 1 + n_disks + c.n_cells();
#define SD(off) wd[(off)*s]
#define SI(off) wi[(off)*is]

  const T kscale = exp(Lanes::load(c.log_stiffness + b));
  const T zeta_b = c.damping_ratio ? Lanes::load(c.damping_ratio + b) : T(0.0);
  const double dt = c.dt;
  // A pair's stiffness, damping per unit ratio (from its effective mass) and contact parameters,
  // as its contacts form them.
  auto pair_stiffness = [&](int d, int j) {
    return kscale * Lanes::pair_entry(c.pair_k, c.material + (long)d * n_systems + b,
                                      c.material + (long)j * n_systems + b, c.n_materials);
  };
  auto pair_params = [&](int d, int j) {
    const int* const matd = c.material + (long)d * n_systems + b;
    const int* const matj = c.material + (long)j * n_systems + b;
    const T md = Lanes::load(c.mass + (long)d * n_systems + b), mj = Lanes::load(c.mass + (long)j * n_systems + b);
    ContactParams<T> cp;
    cp.k = pair_stiffness(d, j);
    cp.zeta = Lanes::pair_entry(c.pair_zeta, matd, matj, c.n_materials) + zeta_b;
    cp.damping_unit = damping_unit(c.normal, md * mj / (md + mj), cp.k);
    cp.mu = Lanes::pair_entry(c.pair_mu, matd, matj, c.n_materials);
    cp.gt = Lanes::pair_entry(c.pair_gt, matd, matj, c.n_materials);
    return cp;
  };
  // With two disks there is one pair, whose parameters and sum of radii are formed once here
  // instead of at each of its contacts: the same operations, so the same bits from either disk's
  // side (m_eff and the pair tables are symmetric in the two disks, and addition commutes exactly).
  // The compiler does not hoist them itself: they are read through pointers that the body's stores
  // to its work memory might alias.
  ContactParams<T> the_pair{};
  T the_pair_sum_of_radii = 0.0;
  if constexpr (Fixed::disks == 2) {
    the_pair = pair_params(0, 1);
    the_pair_sum_of_radii = Lanes::load(c.radius + b) + Lanes::load(c.radius + (long)n_systems + b);
  }

  // The status slot is written inside phases (all writers of one phase write the same value)
  // and read for decisions only through team.any() (see the team contract above). A stopped
  // lane of a group goes on computing with the others; only its first status counts, and its
  // outputs from the frame it stopped in are NaN.
  int* const status_slot = &SI(0);
  auto set_status = [&](auto where, Status st) { Lanes::set_status(status_slot, where, st); };
  auto stopped = [&]() { return team.any(all_lanes(Lanes::unfinished(status_slot))); };

  // Cell lists serve one system per call (the SIMD lanes run all pairs: their driver never asks for cells).
  auto build_cells = [&]() {
    if constexpr (Lanes::width == 1) {
      const int nc = c.n_cells();
      for (int q = 0; q < nc; ++q) SI(oCount + q) = 0;
      for (int d = 0; d < n_disks; ++d) {
        const double gx = (SD(oX + 2 * d) - c.grid_lo[0]) / c.cell_size;
        const double gy = (SD(oX + 2 * d + 1) - c.grid_lo[1]) / c.cell_size;
        if (!(gx >= 0.0 && gy >= 0.0 && gx < (double)c.grid_n[0] && gy < (double)c.grid_n[1])) {
          set_status(true, Status::OutOfGrid);
          return;
        }
        const int cell = (int)gy * c.grid_n[0] + (int)gx;
        const int cnt = SI(oCount + cell);
        if (cnt >= c.cell_capacity) {
          set_status(true, Status::CellOverflow);
          return;
        }
        SI(oSlot + (long)cell * c.cell_capacity + cnt) = d;
        SI(oCount + cell) = cnt + 1;
        SI(oCell + d) = cell;
      }
    }
  };

  // Force (and force tangents) on disk d from its contacts.
  auto force_on = [&](int d) SALTATION_HOST_INLINE {
    const T Rd = Lanes::load(c.radius + (long)d * n_systems + b);
    const T md = Lanes::load(c.mass + (long)d * n_systems + b);
    const int* const matd = c.material + (long)d * n_systems + b;
    const T xd0 = SD(oX + 2 * d), xd1 = SD(oX + 2 * d + 1);
    const T vd0 = SD(oV + 2 * d), vd1 = SD(oV + 2 * d + 1);
    T F0 = 0.0, F1 = 0.0;
    for (int p = 0; p < n_tangents; ++p) {
      SD(oDF + (long)p * n_coords + 2 * d) = 0.0;
      SD(oDF + (long)p * n_coords + 2 * d + 1) = 0.0;
    }
    auto dtheta_of = [&](int p) { return c.tangent_kind[p] == TangentKind::LogStiffness ? 1.0 : 0.0; };
    auto dzeta_of = [&](int p) { return c.tangent_kind[p] == TangentKind::Damping ? 1.0 : 0.0; };

    auto pair = [&](int j) SALTATION_HOST_INLINE {
      if (j == d) return;
      const T e0 = xd0 - SD(oX + 2 * j), e1 = xd1 - SD(oX + 2 * j + 1);
      const T r2 = e0 * e0 + e1 * e1;
      const T sumR = Fixed::disks == 2 ? the_pair_sum_of_radii : Rd + Lanes::load(c.radius + (long)j * n_systems + b);
      const auto touching = r2 < sumR * sumR;
      if (!any_lane(touching)) return;
      const auto coincident = r2 == T(0.0);
      if (any_lane(coincident)) set_status(coincident, Status::Coincident);
      const T r = sqrt(r2);
      const T delta = sumR - r;
      // lanes not in contact compute along and keep nothing
      const auto contact = touching && !coincident && delta > T(0.0);
      if (!any_lane(contact)) return;
      // One division per contact and step, not four: the divider is what a contact step waits for
      // (bench/README.md, "The disk engine's step").
      const T inv_r = 1.0 / r;
      const T n[2] = {e0 * inv_r, e1 * inv_r};
      const T vrel[2] = {vd0 - SD(oV + 2 * j), vd1 - SD(oV + 2 * j + 1)};
      const ContactParams<T> cp = Fixed::disks == 2 ? the_pair : pair_params(d, j);
      const ContactEval<T> ev = contact_eval(c.normal, c.tangential, cp, delta, n, vrel);
      F0 += select(contact, ev.F[0], T(0.0));
      F1 += select(contact, ev.F[1], T(0.0));
      for (int p = 0; p < n_tangents; ++p) {
        const long op = (long)p * n_coords;
        const T dd0 = SD(oDX + op + 2 * d) - SD(oDX + op + 2 * j);
        const T dd1 = SD(oDX + op + 2 * d + 1) - SD(oDX + op + 2 * j + 1);
        const T dr = n[0] * dd0 + n[1] * dd1;
        const T dn[2] = {(dd0 - n[0] * dr) * inv_r, (dd1 - n[1] * dr) * inv_r};
        const T dvrel[2] = {SD(oDV + op + 2 * d) - SD(oDV + op + 2 * j),
                            SD(oDV + op + 2 * d + 1) - SD(oDV + op + 2 * j + 1)};
        T dF[2];
        contact_tangent(ev, -dr, dn, dvrel, dtheta_of(p), dzeta_of(p), dF);
        SD(oDF + op + 2 * d) += select(contact, dF[0], T(0.0));
        SD(oDF + op + 2 * d + 1) += select(contact, dF[1], T(0.0));
      }
    };

    if (c.use_cells) {
      const int cell = SI(oCell + d);
      const int cx = cell % c.grid_n[0], cy = cell / c.grid_n[0];
      for (int yy = cy - 1; yy <= cy + 1; ++yy) {
        if (yy < 0 || yy >= c.grid_n[1]) continue;
        for (int xx = cx - 1; xx <= cx + 1; ++xx) {
          if (xx < 0 || xx >= c.grid_n[0]) continue;
          const int q = yy * c.grid_n[0] + xx;
          const int cnt = SI(oCount + q);
          for (int t = 0; t < cnt; ++t) pair(SI(oSlot + (long)q * c.cell_capacity + t));
        }
      }
    } else {
      for (int j = 0; j < n_disks; ++j) pair(j);
    }

    if (c.walls) {
      ContactParams<T> cp;
      cp.k = pair_stiffness(d, d);
      cp.zeta = Lanes::pair_entry(c.pair_zeta, matd, matd, c.n_materials) + zeta_b;
      cp.damping_unit = damping_unit(c.normal, md, cp.k);
      cp.mu = Lanes::pair_entry(c.pair_mu, matd, matd, c.n_materials);
      cp.gt = Lanes::pair_entry(c.pair_gt, matd, matd, c.n_materials);
      const T vrel[2] = {vd0, vd1};
      const T xs[2] = {xd0, xd1};
      for (int wall = 0; wall < 4; ++wall) {
        const int axis = wall >> 1;
        const bool upper = (wall & 1) != 0;
        const T delta = upper ? Rd - (c.box_hi[axis] - xs[axis]) : Rd - (xs[axis] - c.box_lo[axis]);
        const auto contact = delta > T(0.0);
        if (!any_lane(contact)) continue;
        T n[2] = {0.0, 0.0};
        n[axis] = upper ? -1.0 : 1.0;
        const ContactEval<T> ev = contact_eval(c.normal, c.tangential, cp, delta, n, vrel);
        F0 += select(contact, ev.F[0], T(0.0));
        F1 += select(contact, ev.F[1], T(0.0));
        const T dn[2] = {0.0, 0.0};
        for (int p = 0; p < n_tangents; ++p) {
          const long op = (long)p * n_coords;
          const T ddelta = -n[axis] * SD(oDX + op + 2 * d + axis);
          const T dvrel[2] = {SD(oDV + op + 2 * d), SD(oDV + op + 2 * d + 1)};
          T dF[2];
          contact_tangent(ev, ddelta, dn, dvrel, dtheta_of(p), dzeta_of(p), dF);
          SD(oDF + op + 2 * d) += select(contact, dF[0], T(0.0));
          SD(oDF + op + 2 * d + 1) += select(contact, dF[1], T(0.0));
        }
      }
    }
    SD(oF + 2 * d) = F0;
    SD(oF + 2 * d + 1) = F1;
  };

  // Every disk's force. A pair without walls has one contact, seen from either side: the force on
  // disk 1 is exactly minus the force on disk 0 (each quantity of the contact seen from disk 1 is
  // the one from disk 0 or its negation, exactly: a - b = -(b - a) in IEEE arithmetic, and the
  // material pair tables are symmetric), so it is copied. As 0 - F rather than -F, it is also the
  // zero force's +0 that force_on(1) would give.
  auto forces = [&]() {
    if constexpr (Fixed::disks == 2) {
      if (!c.walls) {
        team.single([&]() {
          force_on(0);
          for (int k = 0; k < 2; ++k) {
            SD(oF + 2 + k) = 0.0 - SD(oF + k);
            for (int p = 0; p < n_tangents; ++p)
              SD(oDF + (long)p * n_coords + 2 + k) = 0.0 - SD(oDF + (long)p * n_coords + k);
          }
        });
        return;
      }
    }
    team.for_each(n_disks, force_on);
  };

  // Disk d's kicks (v += dt/2 F/m) and drift: the previous step's closing kick when `closing`
  // (deferred to the next step, where its force is the same, or done at a frame's end), then, when
  // `opening`, this step's opening kick and x += dt v; h F is formed once and each value loaded once.
  auto kicks = [&](int d, bool closing, bool opening) {
    const T h = SD(oH + d);
    auto update = [&](long ov, long of, long ox) {
      const T hF = h * SD(of);
      T v = SD(ov);
      if (closing) v += hF;
      if (opening) v += hF;
      SD(ov) = v;
      if (opening) SD(ox) += dt * v;
    };
    for (int k = 2 * d; k < 2 * d + 2; ++k) {
      update(oV + k, oF + k, oX + k);
      for (int p = 0; p < n_tangents; ++p) {
        const long op = (long)p * n_coords + k;
        update(oDV + op, oDF + op, oDX + op);
      }
    }
  };
  const int n_loss_components = ((c.loss_components & 1) ? 1 : 0) + ((c.loss_components & 2) ? 1 : 0);
  auto save = [&](int f, int d) {
    for (int k = 2 * d; k < 2 * d + 2; ++k) {
      const T xv = SD(oX + k), vv = SD(oV + k);
      const auto finite = is_finite(xv) && is_finite(vv);
      if (!all_lanes(finite)) set_status(!finite, Status::NonFinite);
      const long of = ((long)f * n_coords + k) * n_systems + b;
      if (c.x) Lanes::store(c.x + of, xv);
      if (c.v) Lanes::store(c.v + of, vv);
      for (int p = 0; p < n_tangents; ++p) {
        const long ot = (((long)f * n_tangents + p) * n_coords + k) * n_systems + b;
        if (c.dx) Lanes::store(c.dx + ot, SD(oDX + (long)p * n_coords + k));
        if (c.dv) Lanes::store(c.dv + ot, SD(oDV + (long)p * n_coords + k));
      }
      if (c.observed && ((c.loss_components >> (k - 2 * d)) & 1)) {
        const T inv = 1.0 / Lanes::load(c.loss_scale + b);
        const T res = (xv - Lanes::load(c.observed + of)) * inv;
        SD(oAL + d) += res * res;
        for (int p = 0; p < n_tangents; ++p)
          SD(oAG + (long)p * n_disks + d) += 2.0 * res * inv * SD(oDX + (long)p * n_coords + k);
      }
    }
  };

  // ---- initial state, seeds, initial forces
  team.single([&]() {
    for (int l = 0; l < Lanes::width; ++l) status_slot[l] = static_cast<int>(Status::Finished);
  });
  team.for_each(n_disks, [&](int d) {
    for (int k = 2 * d; k < 2 * d + 2; ++k) {
      SD(oX + k) = Lanes::load(c.x0 + (long)k * n_systems + b);
      SD(oV + k) = Lanes::load(c.v0 + (long)k * n_systems + b);
      for (int p = 0; p < n_tangents; ++p) {
        const bool seed_index = c.tangent_index[p] == k;
        SD(oDX + (long)p * n_coords + k) =
            (c.tangent_kind[p] == TangentKind::InitialPosition && seed_index) ? 1.0 : 0.0;
        SD(oDV + (long)p * n_coords + k) =
            (c.tangent_kind[p] == TangentKind::InitialVelocity && seed_index) ? 1.0 : 0.0;
      }
    }
    SD(oAL + d) = 0.0;
    SD(oH + d) = 0.5 * dt / Lanes::load(c.mass + (long)d * n_systems + b);
    for (int p = 0; p < n_tangents; ++p) SD(oAG + (long)p * n_disks + d) = 0.0;
  });
  if (c.use_cells) team.single(build_cells);
  bool stop = stopped();
  if (!stop) {
    forces();
    stop = stopped();
  }
  T done_frames = 0.0;  // per lane: the frames completed before it stopped
  for (int f = 0; f < c.n_frames && !stop; ++f) {
#ifndef __CUDA_ARCH__
    // The CPU reads this frame's observations at its end, a few doubles from each of rows
    // 8 n_systems bytes apart (the system index is fastest), which its own prefetcher does not
    // follow: asked for now, they arrive during the frame's steps (bench/README.md, "The disk
    // engine's step"). Written here, not in a function: GCC drops a call to a function that
    // does nothing but prefetch.
    if (c.observed)
      for (int k = 0; k < n_coords; ++k)
        if ((c.loss_components >> (k & 1)) & 1) {
          const double* const row = c.observed + ((long)f * n_coords + k) * n_systems + b;
          __builtin_prefetch(row);
          __builtin_prefetch(row + Lanes::width - 1);
        }
#endif
    bool pending_kick = false;
    for (int st = 0; st < c.stride && !stop; ++st) {
      team.for_each(n_disks, [&](int d) { kicks(d, pending_kick, true); });
      pending_kick = true;
      if (c.use_cells) {
        team.single(build_cells);
        stop = stopped();
        if (stop) break;
      }
      forces();
      stop = stopped();
    }
    if (stop) break;
    team.for_each(n_disks, [&](int d) {
      kicks(d, true, false);
      save(f, d);
    });
    // read before any()'s barrier, as stopped() does
    const auto finished = !Lanes::unfinished(status_slot);
    stop = team.any(all_lanes(!finished));
    done_frames = select(finished, T(f + 1.0), done_frames);
  }
  // ---- frames not completed: NaN, never stale values
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (any_lane(done_frames < T((double)c.n_frames))) {
    team.for_each(n_disks, [&](int d) {
      for (int f = 0; f < c.n_frames; ++f) {
        const auto undone = T((double)f) >= done_frames;
        if (!any_lane(undone)) continue;
        for (int k = 2 * d; k < 2 * d + 2; ++k) {
          const long of = ((long)f * n_coords + k) * n_systems + b;
          if (c.x) Lanes::store_where(c.x + of, undone, nan);
          if (c.v) Lanes::store_where(c.v + of, undone, nan);
          for (int p = 0; p < n_tangents; ++p) {
            const long ot = (((long)f * n_tangents + p) * n_coords + k) * n_systems + b;
            if (c.dx) Lanes::store_where(c.dx + ot, undone, nan);
            if (c.dv) Lanes::store_where(c.dv + ot, undone, nan);
          }
        }
      }
    });
  }
  team.single([&]() {
    if (c.status) Lanes::copy_status(c.status + b, status_slot);
    if (c.observed && c.loss) {
      const auto finished = !Lanes::unfinished(status_slot);
      const double norm = 1.0 / ((double)c.n_frames * n_disks * n_loss_components);
      T L = 0.0;
      for (int d = 0; d < n_disks; ++d) L += SD(oAL + d);
      Lanes::store(c.loss + b, select(finished, L * norm, T(nan)));
      for (int p = 0; p < n_tangents; ++p) {
        T G = 0.0;
        for (int d = 0; d < n_disks; ++d) G += SD(oAG + (long)p * n_disks + d);
        if (c.grad) Lanes::store(c.grad + (long)p * n_systems + b, select(finished, G * norm, T(nan)));
      }
    }
  });
#undef SD
#undef SI
}

}  // namespace saltation::dem
