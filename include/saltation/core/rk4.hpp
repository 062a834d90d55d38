#pragma once
// Classical RK4 for the state, and the same stages carried through the tangent
// Y = d q(t) / d [q(t_s), theta_flow] of the current smooth segment.
#include "saltation/config.hpp"
#include "saltation/core/dual.hpp"
#include "saltation/core/params.hpp"

namespace saltation::core {

template <class Model, class Th>
SALTATION_HD void rk4_step(const Model& m, const double* q, int mode, const Th& th, double h, double* out) {
  constexpr int N = Model::N;
  double k1[N], k2[N], k3[N], k4[N], s[N];
  m.flow(q, mode, th, k1);
  for (int i = 0; i < N; ++i) s[i] = q[i] + 0.5 * h * k1[i];
  m.flow(s, mode, th, k2);
  for (int i = 0; i < N; ++i) s[i] = q[i] + 0.5 * h * k2[i];
  m.flow(s, mode, th, k3);
  for (int i = 0; i < N; ++i) s[i] = q[i] + h * k3[i];
  m.flow(s, mode, th, k4);
  for (int i = 0; i < N; ++i) out[i] = q[i] + (h / 6.0) * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
}

// Width of the segment tangent: N columns for d/dq(t_s), F for the flow parameters.
template <class Model>
constexpr int tangent_width() {
  return Model::N + Model::F;
}

// One RK4 step of the state together with the tangent Y (N x W, row-major), using the same
// stages: Y' = f_q Y + [0 | f_theta_flow], from one evaluation of the flow on Dual<W> per stage,
// so the work per step is independent of the total parameter count P. The state
// values are bit-identical to rk4_step's (same operations in the same order).
template <class Model, class Th>
SALTATION_HD void rk4_tangent_step(const Model& m, const double* q, int mode, const Th& th, double h,
                                   double* out, double* Y) {
  constexpr int N = Model::N, W = tangent_width<Model>();
  using D = Dual<W>;
  const FlowSeededParams<Model, Th> fth{th};
  // Each stage's input (state and tangent) is seeded as one dual vector, so the flow's derivative
  // slots come out as KY = f_q Ys + [0 | f_theta] (the theta seeds sit in slots N..W-1).
  D sd[N], k1[N], k2[N], k3[N], k4[N];
  for (int i = 0; i < N; ++i) {
    sd[i].v = q[i];
    for (int c = 0; c < W; ++c) sd[i].d[c] = Y[i * W + c];
  }
  m.flow(sd, mode, fth, k1);
  for (int i = 0; i < N; ++i) {
    sd[i].v = q[i] + 0.5 * h * k1[i].v;
    for (int c = 0; c < W; ++c) sd[i].d[c] = Y[i * W + c] + 0.5 * h * k1[i].d[c];
  }
  m.flow(sd, mode, fth, k2);
  for (int i = 0; i < N; ++i) {
    sd[i].v = q[i] + 0.5 * h * k2[i].v;
    for (int c = 0; c < W; ++c) sd[i].d[c] = Y[i * W + c] + 0.5 * h * k2[i].d[c];
  }
  m.flow(sd, mode, fth, k3);
  for (int i = 0; i < N; ++i) {
    sd[i].v = q[i] + h * k3[i].v;
    for (int c = 0; c < W; ++c) sd[i].d[c] = Y[i * W + c] + h * k3[i].d[c];
  }
  m.flow(sd, mode, fth, k4);
  for (int i = 0; i < N; ++i) {
    out[i] = q[i] + (h / 6.0) * (k1[i].v + 2.0 * k2[i].v + 2.0 * k3[i].v + k4[i].v);
    for (int c = 0; c < W; ++c)
      Y[i * W + c] += (h / 6.0) * (k1[i].d[c] + 2.0 * k2[i].d[c] + 2.0 * k3[i].d[c] + k4[i].d[c]);
  }
}

}  // namespace saltation::core
