#pragma once
// Per-system disk-contact rollout (host/device): velocity Verlet with fixed dt, n_frames
// frames of `stride` steps, forward tangents, and an optional position loss with its
// gradient. This is the one body both drivers run: the CPU driver calls it from an OpenMP
// loop (SerialTeam per system, or an OpenMP team over the disks of one system), the CUDA
// driver from a thin kernel (one thread per system, or a block per system).
//
// Layouts (B systems, M disks, P tangent directions, F frames; i = 2*disk + component):
//   per-disk inputs     radius, mass, material           [d*B + b]
//   per-system inputs   theta (log stiffness), zeta      [b]
//   states              x0, v0                           [i*B + b]
//   saved frames        out_x, out_v                     [(f*2M + i)*B + b]
//   saved tangents      out_dx, out_dv                   [((f*P + p)*2M + i)*B + b]
//   observations        obs                              [(f*2M + i)*B + b]
//   loss, status        [b]; gradient [p*B + b]
// Work memory is addressed through Work (base pointer + stride), so the CPU can use a
// contiguous per-thread buffer and the GPU an interleaved (coalesced) one.
#include <cmath>
#include <limits>

#include "saltation/config.hpp"
#include "saltation/dem/contact.hpp"

namespace saltation::dem {

// Status codes written per system. Nonzero stops that system; remaining outputs are NaN.
enum StatusCode : int {
  kOk = 0,
  kCellOverflow = 1,    // a cell of the cell list would hold more than cell_capacity disks
  kOutOfGrid = 2,       // a disk left the cell-list grid
  kCoincident = 3,      // two disks at exactly the same position (normal undefined)
  kNonFinite = 4,       // a position or velocity became NaN/Inf
};

enum TangentKindCode : int { kTanLogStiffness = 0, kTanDamping = 1, kTanV0 = 2, kTanX0 = 3 };

struct RolloutConfig {
  int B = 0, M = 0, P = 0, n_mat = 0;
  int n_frames = 0, stride = 0;
  double dt = 0;
  int normal_model = kLinear;
  int tangential = 0;
  int walls = 0;  // 1: reflecting (elastic-contact) walls at box_lo / box_hi
  double box_lo[2] = {0, 0}, box_hi[2] = {0, 0};
  int use_cells = 0;
  double grid_lo[2] = {0, 0};
  double cell_size = 0;
  int grid_n[2] = {0, 0};
  int cell_cap = 0;
  const double* pair_k = nullptr;     // [n_mat * n_mat], stiffness at theta = 0
  const double* pair_zeta = nullptr;  // damping ratio from the pair restitution
  const double* pair_mu = nullptr;
  const double* pair_gt = nullptr;
  const double* radius = nullptr;
  const double* mass = nullptr;
  const int* material = nullptr;
  const double* theta = nullptr;
  const double* zeta = nullptr;
  const double* x0 = nullptr;
  const double* v0 = nullptr;
  const int* tan_kind = nullptr;   // [P]
  const int* tan_index = nullptr;  // [P]
  double* out_x = nullptr;
  double* out_v = nullptr;
  double* out_dx = nullptr;
  double* out_dv = nullptr;
  const double* obs = nullptr;
  int loss_mask = 1;  // bit 0: x component, bit 1: y component
  const double* loss_scale = nullptr;  // [b]
  double* loss = nullptr;
  double* grad = nullptr;
  int* status = nullptr;

  SALTATION_HD int n_cells() const { return use_cells ? grid_n[0] * grid_n[1] : 0; }
  SALTATION_HD long work_doubles() const { return 7L * M * (1 + P); }
  SALTATION_HD long work_ints() const { return 1L + M + (long)n_cells() * (1 + cell_cap); }
};

struct Work {
  double* d;
  long ds;
  int* i;
  long is;
};

// A "team" runs for_each over disks (with a barrier after it) and single (one member, then a
// barrier). SerialTeam is the plain loop; the CUDA block team and the OpenMP team live in
// their drivers.
struct SerialTeam {
  template <class F>
  SALTATION_HD void for_each(int n, F&& f) const {
    for (int i = 0; i < n; ++i) f(i);
  }
  template <class F>
  SALTATION_HD void single(F&& f) const {
    f();
  }
};

namespace detail {
SALTATION_HD inline bool finite(double v) { return v - v == 0.0; }
}  // namespace detail

template <class Team>
SALTATION_HD void rollout_system(const Team& team, const RolloutConfig& c, int b, const Work& w) {
  const int M = c.M, P = c.P, B = c.B;
  const int N2 = 2 * M;
  double* const wd = w.d;
  const long s = w.ds;
  // work offsets (in elements)
  const long oX = 0, oV = N2, oF = 2L * N2, oDX = 3L * N2, oDV = oDX + (long)P * N2, oDF = oDV + (long)P * N2;
  const long oAL = oDF + (long)P * N2, oAG = oAL + M;
  int* const wi = w.i;
  const long is = w.is;
  const long oCell = 1, oCount = 1 + M, oSlot = 1 + M + c.n_cells();
#define SD(off) wd[(off) * s]
#define SI(off) wi[(off) * is]

  const double kscale = std::exp(c.theta[b]);
  const double zeta_b = c.zeta ? c.zeta[b] : 0.0;
  const double dt = c.dt;

  auto status = [&]() -> int { return SI(0); };

  auto build_cells = [&]() {
    const int nc = c.n_cells();
    for (int q = 0; q < nc; ++q) SI(oCount + q) = 0;
    for (int d = 0; d < M; ++d) {
      const double gx = (SD(oX + 2 * d) - c.grid_lo[0]) / c.cell_size;
      const double gy = (SD(oX + 2 * d + 1) - c.grid_lo[1]) / c.cell_size;
      if (!(gx >= 0.0 && gy >= 0.0 && gx < (double)c.grid_n[0] && gy < (double)c.grid_n[1])) {
        SI(0) = kOutOfGrid;
        return;
      }
      const int cell = (int)gy * c.grid_n[0] + (int)gx;
      const int cnt = SI(oCount + cell);
      if (cnt >= c.cell_cap) {
        SI(0) = kCellOverflow;
        return;
      }
      SI(oSlot + (long)cell * c.cell_cap + cnt) = d;
      SI(oCount + cell) = cnt + 1;
      SI(oCell + d) = cell;
    }
  };

  // Force (and force tangents) on disk d from its contacts.
  auto force_on = [&](int d) {
    const double Rd = c.radius[(long)d * B + b];
    const double md = c.mass[(long)d * B + b];
    const int matd = c.material[(long)d * B + b];
    const double xd0 = SD(oX + 2 * d), xd1 = SD(oX + 2 * d + 1);
    const double vd0 = SD(oV + 2 * d), vd1 = SD(oV + 2 * d + 1);
    double F0 = 0.0, F1 = 0.0;
    for (int p = 0; p < P; ++p) {
      SD(oDF + (long)p * N2 + 2 * d) = 0.0;
      SD(oDF + (long)p * N2 + 2 * d + 1) = 0.0;
    }
    auto dtheta_of = [&](int p) { return c.tan_kind[p] == kTanLogStiffness ? 1.0 : 0.0; };
    auto dzeta_of = [&](int p) { return c.tan_kind[p] == kTanDamping ? 1.0 : 0.0; };

    auto pair = [&](int j) {
      if (j == d) return;
      const double e0 = xd0 - SD(oX + 2 * j), e1 = xd1 - SD(oX + 2 * j + 1);
      const double r2 = e0 * e0 + e1 * e1;
      const double Rj = c.radius[(long)j * B + b];
      const double sumR = Rd + Rj;
      if (r2 >= sumR * sumR) return;
      if (r2 == 0.0) {
        SI(0) = kCoincident;
        return;
      }
      const double r = std::sqrt(r2);
      const double delta = sumR - r;
      if (!(delta > 0.0)) return;
      const double n[2] = {e0 / r, e1 / r};
      const double vrel[2] = {vd0 - SD(oV + 2 * j), vd1 - SD(oV + 2 * j + 1)};
      const double mj = c.mass[(long)j * B + b];
      const int q = matd * c.n_mat + c.material[(long)j * B + b];
      ContactParams cp;
      cp.k = kscale * c.pair_k[q];
      cp.zeta = c.pair_zeta[q] + zeta_b;
      cp.meff = md * mj / (md + mj);
      cp.mu = c.pair_mu[q];
      cp.gt = c.pair_gt[q];
      const ContactEval ev = contact_eval(c.normal_model, c.tangential != 0, cp, delta, n, vrel);
      F0 += ev.F[0];
      F1 += ev.F[1];
      for (int p = 0; p < P; ++p) {
        const long op = (long)p * N2;
        const double dd0 = SD(oDX + op + 2 * d) - SD(oDX + op + 2 * j);
        const double dd1 = SD(oDX + op + 2 * d + 1) - SD(oDX + op + 2 * j + 1);
        const double dr = n[0] * dd0 + n[1] * dd1;
        const double dn[2] = {(dd0 - n[0] * dr) / r, (dd1 - n[1] * dr) / r};
        const double dvrel[2] = {SD(oDV + op + 2 * d) - SD(oDV + op + 2 * j),
                                 SD(oDV + op + 2 * d + 1) - SD(oDV + op + 2 * j + 1)};
        double dF[2];
        contact_tangent(ev, -dr, dn, dvrel, dtheta_of(p), dzeta_of(p), dF);
        SD(oDF + op + 2 * d) += dF[0];
        SD(oDF + op + 2 * d + 1) += dF[1];
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
          for (int t = 0; t < cnt; ++t) pair(SI(oSlot + (long)q * c.cell_cap + t));
        }
      }
    } else {
      for (int j = 0; j < M; ++j) pair(j);
    }

    if (c.walls) {
      const int q = matd * c.n_mat + matd;
      ContactParams cp;
      cp.k = kscale * c.pair_k[q];
      cp.zeta = c.pair_zeta[q] + zeta_b;
      cp.meff = md;
      cp.mu = c.pair_mu[q];
      cp.gt = c.pair_gt[q];
      const double vrel[2] = {vd0, vd1};
      const double xs[2] = {xd0, xd1};
      for (int wall = 0; wall < 4; ++wall) {
        const int axis = wall >> 1;
        const bool upper = (wall & 1) != 0;
        const double delta = upper ? Rd - (c.box_hi[axis] - xs[axis]) : Rd - (xs[axis] - c.box_lo[axis]);
        if (!(delta > 0.0)) continue;
        double n[2] = {0.0, 0.0};
        n[axis] = upper ? -1.0 : 1.0;
        const ContactEval ev = contact_eval(c.normal_model, c.tangential != 0, cp, delta, n, vrel);
        F0 += ev.F[0];
        F1 += ev.F[1];
        const double dn[2] = {0.0, 0.0};
        for (int p = 0; p < P; ++p) {
          const long op = (long)p * N2;
          const double ddelta = -n[axis] * SD(oDX + op + 2 * d + axis);
          const double dvrel[2] = {SD(oDV + op + 2 * d), SD(oDV + op + 2 * d + 1)};
          double dF[2];
          contact_tangent(ev, ddelta, dn, dvrel, dtheta_of(p), dzeta_of(p), dF);
          SD(oDF + op + 2 * d) += dF[0];
          SD(oDF + op + 2 * d + 1) += dF[1];
        }
      }
    }
    SD(oF + 2 * d) = F0;
    SD(oF + 2 * d + 1) = F1;
  };

  auto kick = [&](int d) {  // v += dt/2 F/m
    const double h = 0.5 * dt / c.mass[(long)d * B + b];
    for (int k = 2 * d; k < 2 * d + 2; ++k) {
      SD(oV + k) += h * SD(oF + k);
      for (int p = 0; p < P; ++p) SD(oDV + (long)p * N2 + k) += h * SD(oDF + (long)p * N2 + k);
    }
  };
  auto drift = [&](int d) {  // x += dt v
    for (int k = 2 * d; k < 2 * d + 2; ++k) {
      SD(oX + k) += dt * SD(oV + k);
      for (int p = 0; p < P; ++p) SD(oDX + (long)p * N2 + k) += dt * SD(oDV + (long)p * N2 + k);
    }
  };
  const int ncomp = ((c.loss_mask & 1) ? 1 : 0) + ((c.loss_mask & 2) ? 1 : 0);
  auto save = [&](int f, int d) {
    for (int k = 2 * d; k < 2 * d + 2; ++k) {
      const double xv = SD(oX + k), vv = SD(oV + k);
      if (!detail::finite(xv) || !detail::finite(vv)) SI(0) = kNonFinite;
      const long of = ((long)f * N2 + k) * B + b;
      if (c.out_x) c.out_x[of] = xv;
      if (c.out_v) c.out_v[of] = vv;
      for (int p = 0; p < P; ++p) {
        const long ot = (((long)f * P + p) * N2 + k) * B + b;
        if (c.out_dx) c.out_dx[ot] = SD(oDX + (long)p * N2 + k);
        if (c.out_dv) c.out_dv[ot] = SD(oDV + (long)p * N2 + k);
      }
      if (c.obs && ((c.loss_mask >> (k - 2 * d)) & 1)) {
        const double inv = 1.0 / c.loss_scale[b];
        const double res = (xv - c.obs[of]) * inv;
        SD(oAL + d) += res * res;
        for (int p = 0; p < P; ++p) SD(oAG + (long)p * M + d) += 2.0 * res * inv * SD(oDX + (long)p * N2 + k);
      }
    }
  };

  // ---- initial state, seeds, initial forces
  team.single([&]() { SI(0) = kOk; });
  team.for_each(M, [&](int d) {
    for (int k = 2 * d; k < 2 * d + 2; ++k) {
      SD(oX + k) = c.x0[(long)k * B + b];
      SD(oV + k) = c.v0[(long)k * B + b];
      for (int p = 0; p < P; ++p) {
        SD(oDX + (long)p * N2 + k) = (c.tan_kind[p] == kTanX0 && c.tan_index[p] == k) ? 1.0 : 0.0;
        SD(oDV + (long)p * N2 + k) = (c.tan_kind[p] == kTanV0 && c.tan_index[p] == k) ? 1.0 : 0.0;
      }
    }
    SD(oAL + d) = 0.0;
    for (int p = 0; p < P; ++p) SD(oAG + (long)p * M + d) = 0.0;
  });
  if (c.use_cells) team.single(build_cells);
  int done_frames = 0;
  if (status() == kOk) {
    team.for_each(M, force_on);
    for (int f = 0; f < c.n_frames && status() == kOk; ++f) {
      bool pending_kick = false;
      for (int st = 0; st < c.stride; ++st) {
        team.for_each(M, [&](int d) {
          if (pending_kick) kick(d);
          kick(d);
          drift(d);
        });
        pending_kick = true;
        if (c.use_cells) team.single(build_cells);
        if (status() != kOk) break;
        team.for_each(M, force_on);
        if (status() != kOk) break;
      }
      if (status() != kOk) break;
      team.for_each(M, [&](int d) {
        kick(d);
        save(f, d);
      });
      if (status() == kOk) done_frames = f + 1;
    }
  }
  // ---- frames not completed: NaN, never stale values
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (done_frames < c.n_frames) {
    team.for_each(M, [&](int d) {
      for (int f = done_frames; f < c.n_frames; ++f)
        for (int k = 2 * d; k < 2 * d + 2; ++k) {
          const long of = ((long)f * N2 + k) * B + b;
          if (c.out_x) c.out_x[of] = nan;
          if (c.out_v) c.out_v[of] = nan;
          for (int p = 0; p < P; ++p) {
            const long ot = (((long)f * P + p) * N2 + k) * B + b;
            if (c.out_dx) c.out_dx[ot] = nan;
            if (c.out_dv) c.out_dv[ot] = nan;
          }
        }
    });
  }
  team.single([&]() {
    const int st = status();
    if (c.status) c.status[b] = st;
    if (c.obs && c.loss) {
      const double norm = 1.0 / ((double)c.n_frames * M * ncomp);
      double L = 0.0;
      for (int d = 0; d < M; ++d) L += SD(oAL + d);
      c.loss[b] = st == kOk ? L * norm : nan;
      for (int p = 0; p < P; ++p) {
        double G = 0.0;
        for (int d = 0; d < M; ++d) G += SD(oAG + (long)p * M + d);
        if (c.grad) c.grad[(long)p * B + b] = st == kOk ? G * norm : nan;
      }
    }
  });
#undef SD
#undef SI
}

}  // namespace saltation::dem
