#pragma once
// Disk-contact forces and their exact forward tangents (per contact, host/device).
//
// A contact is described by its overlap delta > 0, its unit normal n (pointing from the
// partner to the disk the force acts on) and the relative velocity vrel = v_self - v_other.
// The force on the disk is
//   F = fn n + Ft,   fn = k s(delta) + c(delta) deltadot,   deltadot = -(vrel . n),
// linear:  s = delta,       c = gamma0,                gamma0 = 2 zeta sqrt(meff k)
// Hertz:   s = delta^(3/2), c = gamma0 delta^(1/4),    gamma0 = 2 zeta sqrt(1.5 meff k)
// Tangential (optional): Ft = -gt vt, capped at mu |fn| (Coulomb), vt = vrel - (vrel.n) n.
//
// Tangents: the directional derivative of F along (d delta, d n, d vrel, d theta, d zeta),
// where theta is the log-stiffness (dk = k dtheta) and zeta the added damping ratio. These
// are exact derivatives of the formulas above; the derivative of max(0, .) at 0 is 0 because
// a contact with delta <= 0 contributes nothing (the caller skips it).
//
// Generic over the scalar T: double (one contact), or the CPU's SIMD-lane vector (one contact in
// each of W systems, src/dem/engine_lanes.cpp). The tangential regime is chosen per lane with
// masks (numeric.hpp), and each lane gets exactly the double result.
#include <cmath>

#include "saltation/config.hpp"
#include "saltation/numeric.hpp"

namespace saltation::dem {

// The normal force law (see the table above).
enum class NormalModel : int { Linear, Hertz };

template <class T>
struct ContactParams {
  T k;             // stiffness (already scaled by exp(theta))
  T zeta;          // damping ratio (pair ratio from restitution + per-system added ratio)
  T damping_unit;  // d gamma0 / d zeta = 2 sqrt(kappa m_eff k) (damping_unit below)
  T mu;            // Coulomb friction coefficient
  T gt;            // tangential viscous coefficient (0: no tangential force)
};

template <class T>
struct ContactEval {
  using Mask = decltype(T() < T());
  T n[2];
  T vrel[2];
  T delta, deltadot;
  T k, s, sp;  // stiffness, s(delta), s'(delta)
  T g, gp;     // c = gamma0 g(delta)
  T gamma0, dgamma0_dzeta, c;
  T fn;
  // tangential: no force, viscous (gt vt below the cap), or Coulomb-capped
  Mask viscous, capped;
  T vn, vt[2], vtn, u[2], mu, gt, cap;
  T F[2];
};

// Damping ratio that gives restitution e for the linear spring-dashpot (exact for that
// model when the contact ends at delta = 0): zeta = -ln e / sqrt(pi^2 + ln^2 e).
SALTATION_HD inline double damping_ratio_from_restitution(double e) {
  if (e >= 1.0) return 0.0;
  const double le = std::log(e);
  const double pi = 3.14159265358979323846;
  return -le / std::sqrt(pi * pi + le * le);
}

// The damping per unit ratio of a pair of effective mass meff and stiffness k, 2 sqrt(kappa meff k)
// (kappa 1 for the linear law, 3/2 for Hertz): a constant of the pair along a rollout, so a caller
// that knows its pairs forms it once (a square root per contact and step holds the divider as
// long as two divisions).
template <class T>
SALTATION_HD inline T damping_unit(NormalModel model, const T& meff, const T& k) {
  using std::sqrt;
  const double kappa = model == NormalModel::Hertz ? 1.5 : 1.0;
  return 2.0 * sqrt(kappa * meff * k);
}

template <class T>
SALTATION_HD inline ContactEval<T> contact_eval(NormalModel model, bool tangential, const ContactParams<T>& p, T delta,
                                                const T n[2], const T vrel[2]) {
  using std::fabs;
  using std::sqrt;
  ContactEval<T> e;
  e.n[0] = n[0];
  e.n[1] = n[1];
  e.vrel[0] = vrel[0];
  e.vrel[1] = vrel[1];
  e.delta = delta;
  e.k = p.k;
  if (model == NormalModel::Hertz) {
    const T sq = sqrt(delta);
    e.s = delta * sq;
    e.sp = 1.5 * sq;
    e.g = sqrt(sq);
    e.gp = 0.25 * e.g / delta;
  } else {
    e.s = delta;
    e.sp = 1.0;
    e.g = 1.0;
    e.gp = 0.0;
  }
  e.vn = vrel[0] * n[0] + vrel[1] * n[1];
  e.deltadot = -e.vn;
  e.dgamma0_dzeta = p.damping_unit;
  e.gamma0 = p.zeta * e.dgamma0_dzeta;
  e.c = e.gamma0 * e.g;
  e.fn = p.k * e.s + e.c * e.deltadot;
  e.F[0] = e.fn * n[0];
  e.F[1] = e.fn * n[1];
  e.mu = p.mu;
  e.gt = p.gt;
  const auto has_gt = p.gt > T(0.0);
  e.viscous = e.capped = has_gt && !has_gt;
  if (tangential && any_lane(has_gt)) {
    e.vt[0] = vrel[0] - e.vn * n[0];
    e.vt[1] = vrel[1] - e.vn * n[1];
    e.vtn = sqrt(e.vt[0] * e.vt[0] + e.vt[1] * e.vt[1]);
    e.cap = p.mu * fabs(e.fn);
    const auto below_cap = p.gt * e.vtn <= e.cap;
    e.viscous = has_gt && below_cap;
    e.capped = has_gt && !below_cap;
    if (any_lane(e.viscous)) {
      e.F[0] = select(e.viscous, e.F[0] - p.gt * e.vt[0], e.F[0]);
      e.F[1] = select(e.viscous, e.F[1] - p.gt * e.vt[1], e.F[1]);
    }
    if (any_lane(e.capped)) {
      e.u[0] = e.vt[0] / e.vtn;
      e.u[1] = e.vt[1] / e.vtn;
      e.F[0] = select(e.capped, e.F[0] - e.cap * e.u[0], e.F[0]);
      e.F[1] = select(e.capped, e.F[1] - e.cap * e.u[1], e.F[1]);
    }
  }
  return e;
}

// Directional derivative of the contact force. ddelta, dn[2], dvrel[2]: tangents of the
// geometry; dtheta, dzeta: tangents of the parameters. Writes dF[2].
template <class T>
SALTATION_HD inline void contact_tangent(const ContactEval<T>& e, T ddelta, const T dn[2], const T dvrel[2],
                                         double dtheta, double dzeta, T dF[2]) {
  const T dk = e.k * dtheta;
  const T dvn = dvrel[0] * e.n[0] + dvrel[1] * e.n[1] + e.vrel[0] * dn[0] + e.vrel[1] * dn[1];
  const T ddeltadot = -dvn;
  const T dgamma0 = 0.5 * e.gamma0 * dtheta + e.dgamma0_dzeta * dzeta;
  const T dc = dgamma0 * e.g + e.gamma0 * e.gp * ddelta;
  const T dfn = dk * e.s + e.k * e.sp * ddelta + dc * e.deltadot + e.c * ddeltadot;
  dF[0] = dfn * e.n[0] + e.fn * dn[0];
  dF[1] = dfn * e.n[1] + e.fn * dn[1];
  if (any_lane(e.viscous || e.capped)) {
    T dvt[2];
    dvt[0] = dvrel[0] - dvn * e.n[0] - e.vn * dn[0];
    dvt[1] = dvrel[1] - dvn * e.n[1] - e.vn * dn[1];
    if (any_lane(e.viscous)) {
      dF[0] = select(e.viscous, dF[0] - e.gt * dvt[0], dF[0]);
      dF[1] = select(e.viscous, dF[1] - e.gt * dvt[1], dF[1]);
    }
    if (any_lane(e.capped)) {
      const T sgn = select(e.fn > T(0.0), T(1.0), select(e.fn < T(0.0), T(-1.0), T(0.0)));
      const T dcap = e.mu * sgn * dfn;
      const T udv = e.u[0] * dvt[0] + e.u[1] * dvt[1];
      const T du0 = (dvt[0] - e.u[0] * udv) / e.vtn;
      const T du1 = (dvt[1] - e.u[1] * udv) / e.vtn;
      dF[0] = select(e.capped, dF[0] - (dcap * e.u[0] + e.cap * du0), dF[0]);
      dF[1] = select(e.capped, dF[1] - (dcap * e.u[1] + e.cap * du1), dF[1]);
    }
  }
}

}  // namespace saltation::dem
