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
#include <cmath>

#include "saltation/config.hpp"

namespace saltation::dem {

// The normal force law (see the table above).
enum class NormalModel : int { Linear, Hertz };

struct ContactParams {
  double k;      // stiffness (already scaled by exp(theta))
  double zeta;   // damping ratio (pair ratio from restitution + per-system added ratio)
  double meff;   // effective mass
  double mu;     // Coulomb friction coefficient
  double gt;     // tangential viscous coefficient (0: no tangential force)
};

struct ContactEval {
  double n[2];
  double vrel[2];
  double delta, deltadot;
  double k, s, sp;          // stiffness, s(delta), s'(delta)
  double g, gp;             // c = gamma0 g(delta)
  double gamma0, dgamma0_dzeta, c;
  double fn;
  // tangential
  int regime;               // 0: no tangential force, 1: viscous, 2: Coulomb-capped
  double vn, vt[2], vtn, u[2], mu, gt, cap;
  double F[2];
};

// Damping ratio that gives restitution e for the linear spring-dashpot (exact for that
// model when the contact ends at delta = 0): zeta = -ln e / sqrt(pi^2 + ln^2 e).
SALTATION_HD inline double damping_ratio_from_restitution(double e) {
  if (e >= 1.0) return 0.0;
  const double le = std::log(e);
  const double pi = 3.14159265358979323846;
  return -le / std::sqrt(pi * pi + le * le);
}

SALTATION_HD inline ContactEval contact_eval(NormalModel model, bool tangential, const ContactParams& p, double delta,
                                             const double n[2], const double vrel[2]) {
  ContactEval e;
  e.n[0] = n[0];
  e.n[1] = n[1];
  e.vrel[0] = vrel[0];
  e.vrel[1] = vrel[1];
  e.delta = delta;
  e.k = p.k;
  double kappa;
  if (model == NormalModel::Hertz) {
    const double sq = std::sqrt(delta);
    e.s = delta * sq;
    e.sp = 1.5 * sq;
    kappa = 1.5;
    e.g = std::sqrt(sq);
    e.gp = 0.25 * e.g / delta;
  } else {
    e.s = delta;
    e.sp = 1.0;
    kappa = 1.0;
    e.g = 1.0;
    e.gp = 0.0;
  }
  e.vn = vrel[0] * n[0] + vrel[1] * n[1];
  e.deltadot = -e.vn;
  e.dgamma0_dzeta = 2.0 * std::sqrt(kappa * p.meff * p.k);
  e.gamma0 = p.zeta * e.dgamma0_dzeta;
  e.c = e.gamma0 * e.g;
  e.fn = p.k * e.s + e.c * e.deltadot;
  e.F[0] = e.fn * n[0];
  e.F[1] = e.fn * n[1];
  e.regime = 0;
  e.mu = p.mu;
  e.gt = p.gt;
  if (tangential && p.gt > 0.0) {
    e.vt[0] = vrel[0] - e.vn * n[0];
    e.vt[1] = vrel[1] - e.vn * n[1];
    e.vtn = std::sqrt(e.vt[0] * e.vt[0] + e.vt[1] * e.vt[1]);
    e.cap = p.mu * std::fabs(e.fn);
    if (p.gt * e.vtn <= e.cap) {
      e.regime = 1;
      e.F[0] -= p.gt * e.vt[0];
      e.F[1] -= p.gt * e.vt[1];
    } else {
      e.regime = 2;
      e.u[0] = e.vt[0] / e.vtn;
      e.u[1] = e.vt[1] / e.vtn;
      e.F[0] -= e.cap * e.u[0];
      e.F[1] -= e.cap * e.u[1];
    }
  }
  return e;
}

// Directional derivative of the contact force. ddelta, dn[2], dvrel[2]: tangents of the
// geometry; dtheta, dzeta: tangents of the parameters. Writes dF[2].
SALTATION_HD inline void contact_tangent(const ContactEval& e, double ddelta, const double dn[2],
                                         const double dvrel[2], double dtheta, double dzeta, double dF[2]) {
  const double dk = e.k * dtheta;
  const double dvn = dvrel[0] * e.n[0] + dvrel[1] * e.n[1] + e.vrel[0] * dn[0] + e.vrel[1] * dn[1];
  const double ddeltadot = -dvn;
  const double dgamma0 = 0.5 * e.gamma0 * dtheta + e.dgamma0_dzeta * dzeta;
  const double dc = dgamma0 * e.g + e.gamma0 * e.gp * ddelta;
  const double dfn = dk * e.s + e.k * e.sp * ddelta + dc * e.deltadot + e.c * ddeltadot;
  dF[0] = dfn * e.n[0] + e.fn * dn[0];
  dF[1] = dfn * e.n[1] + e.fn * dn[1];
  if (e.regime != 0) {
    double dvt[2];
    dvt[0] = dvrel[0] - dvn * e.n[0] - e.vn * dn[0];
    dvt[1] = dvrel[1] - dvn * e.n[1] - e.vn * dn[1];
    if (e.regime == 1) {
      dF[0] -= e.gt * dvt[0];
      dF[1] -= e.gt * dvt[1];
    } else {
      const double sgn = e.fn > 0.0 ? 1.0 : (e.fn < 0.0 ? -1.0 : 0.0);
      const double dcap = e.mu * sgn * dfn;
      const double udv = e.u[0] * dvt[0] + e.u[1] * dvt[1];
      const double du0 = (dvt[0] - e.u[0] * udv) / e.vtn;
      const double du1 = (dvt[1] - e.u[1] * udv) / e.vtn;
      dF[0] -= dcap * e.u[0] + e.cap * du0;
      dF[1] -= dcap * e.u[1] + e.cap * du1;
    }
  }
}

}  // namespace saltation::dem
