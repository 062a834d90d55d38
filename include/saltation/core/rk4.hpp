#pragma once
// Classical RK4 for the state, and the same stages carried through the tangent
// Y = d q(t) / d [q(t_s), theta_flow] of the current smooth segment.
#include "saltation/config.hpp"
#include "saltation/core/params.hpp"
#include "saltation/dual.hpp"

namespace saltation::core {

// S is double here, and a lane vector in the CPU's SIMD lanes (src/cpu_lanes.cpp), where the same
// operations advance several trajectories at once; with S and H dual numbers,
// rk4_step_with_rate's derivative in h. rk4_step_from takes the first stage, the flow at q, as
// given (the previous step's end, when the trajectory has it): the same bits.
template <class Model, class Th, class S, class H = double>
SALTATION_HD void rk4_step_from(const Model& m, const S* q, const S* k1, int mode, const Th& th, H h, S* out) {
  constexpr int N = Model::N;
  S k2[N], k3[N], k4[N], s[N];
  for (int i = 0; i < N; ++i) s[i] = q[i] + 0.5 * h * k1[i];
  m.flow(s, mode, th, k2);
  for (int i = 0; i < N; ++i) s[i] = q[i] + 0.5 * h * k2[i];
  m.flow(s, mode, th, k3);
  for (int i = 0; i < N; ++i) s[i] = q[i] + h * k3[i];
  m.flow(s, mode, th, k4);
  for (int i = 0; i < N; ++i) out[i] = q[i] + (h / 6.0) * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
}
template <class Model, class Th, class S, class H = double>
SALTATION_HD void rk4_step(const Model& m, const S* q, int mode, const Th& th, H h, S* out) {
  S k1[Model::N];
  m.flow(q, mode, th, k1);
  rk4_step_from(m, q, k1, mode, th, h, out);
}

// The cubic Hermite interpolant of a step of h from (q0, f0) to (q1, f1) (states and their
// rates) at the fraction u of the step: the step's dense output, accurate to O(h^4) like RK4.
// S is double, or a lane vector as in rk4_step_from.
template <int N, class S>
SALTATION_HD void hermite_point(double u, double h, const S* q0, const S* f0, const S* q1, const S* f1, S* out) {
  const double v = 1.0 - u;
  const double w0 = v * v * (1.0 + 2.0 * u), w1 = u * u * (3.0 - 2.0 * u);  // of q0 and q1
  const double d0 = h * u * v * v, d1 = -h * u * u * v;                     // of f0 and f1
  for (int i = 0; i < N; ++i) out[i] = w0 * q0[i] + w1 * q1[i] + d0 * f0[i] + d1 * f1[i];
}

// One RK4 step of h from q and the derivative of its end state in h, d out / dh (the rate at
// which event location follows the discrete path): rk4_step's stages on Dual<1> with h the
// variable, so `out` is rk4_step's bit for bit.
template <class Model, class Th>
SALTATION_HD void rk4_step_with_rate(const Model& m, const double* q, int mode, const Th& th, double h, double* out,
                                     double* rate) {
  constexpr int N = Model::N;
  using D = Dual<1>;
  D qd[N], out_d[N];
  for (int i = 0; i < N; ++i) qd[i] = D(q[i]);
  rk4_step(m, qd, mode, ConstantParams<D, Th>{th}, D::variable(h, 0), out_d);
  for (int i = 0; i < N; ++i) {
    out[i] = out_d[i].v;
    rate[i] = out_d[i].d[0];
  }
}

// Width of the segment tangent: N columns for d/dq(t_s), F for the flow parameters.
template <class Model>
constexpr int tangent_width() {
  return Model::N + Model::F;
}

// One RK4 step of the state together with the tangent Y (N x W, row-major), using the same
// stages: Y' = f_q Y + [0 | f_theta_flow], from one evaluation of the flow on Dual<W - C0> per
// stage, so the work per step is independent of the total parameter count P. Only the columns
// C0..W-1 of Y are carried (C0 = N: the flow-parameter columns alone, which a tangent started at
// Y_F = 0 needs); each column's entries are the same bits whichever columns are carried, since a
// dual number's slots do not mix. The state values are bit-identical to rk4_step's (same
// operations in the same order).
// S is double, or a lane vector as in rk4_step_from (the duals then of lane vectors).
template <int C0 = 0, class Model, class Th, class S>
SALTATION_HD void rk4_tangent_step(const Model& m, const S* q, int mode, const Th& th, double h, S* out, S* Y) {
  constexpr int N = Model::N, W = tangent_width<Model>(), C = W - C0;
  static_assert(C0 >= 0 && C0 <= N, "the carried columns start at a q-column or at the first flow parameter's");
  using D = Dual<C, S>;
  const FlowSeededParams<Model, Th, N - C0> fth{th};
  S k[4][N], s[N], Ys[N * C];
  const double stage_scale[4] = {0.0, 0.5, 0.5, 1.0};
  const double stage_weight[4] = {1.0, 2.0, 2.0, 1.0};
  // Written at stage 0 before any read; zeroed so that GCC, which cannot see that, need not warn.
  S KY[N * C] = {}, sumKY[N * C] = {};
  for (int st = 0; st < 4; ++st) {
    if (st == 0) {
      for (int i = 0; i < N; ++i) s[i] = q[i];
      for (int i = 0; i < N; ++i)
        for (int c = 0; c < C; ++c) Ys[i * C + c] = Y[i * W + C0 + c];
    } else {
      const double a = stage_scale[st] * h;
      for (int i = 0; i < N; ++i) s[i] = q[i] + a * k[st - 1][i];
      for (int i = 0; i < N; ++i)
        for (int c = 0; c < C; ++c) Ys[i * C + c] = Y[i * W + C0 + c] + a * KY[i * C + c];
    }
    // Seeding the duals with the stage tangent gives KY = f_q Ys + [0 | f_theta] directly as the
    // flow's directional derivatives (the theta seeds sit in the flow parameters' slots).
    D sd[N], fd[N];
    for (int i = 0; i < N; ++i) {
      sd[i] = D(s[i]);
      for (int c = 0; c < C; ++c) sd[i].d[c] = Ys[i * C + c];
    }
    m.flow(sd, mode, fth, fd);
    for (int i = 0; i < N; ++i) {
      k[st][i] = fd[i].v;
      for (int c = 0; c < C; ++c) KY[i * C + c] = fd[i].d[c];
    }
    for (int e = 0; e < N * C; ++e) sumKY[e] = st == 0 ? KY[e] : sumKY[e] + stage_weight[st] * KY[e];
  }
  for (int i = 0; i < N; ++i) out[i] = q[i] + (h / 6.0) * (k[0][i] + 2.0 * k[1][i] + 2.0 * k[2][i] + k[3][i]);
  for (int i = 0; i < N; ++i)
    for (int c = 0; c < C; ++c) Y[i * W + C0 + c] += (h / 6.0) * sumKY[i * C + c];
}

// C = A B for N x N row-major matrices (C may not alias A or B). Each entry sums its products in
// the order of l, as a dot product would; the loop over the columns c is innermost so that a CPU
// build runs it in vectors (a row of C at once), which the compiler did not do with the dot
// products innermost.
template <int N>
SALTATION_HD void mat_mul(const double* A, const double* B, double* C) {
  for (int i = 0; i < N; ++i) {
    double row[N];  // in registers: C through the pointer would be stored and reloaded each time
    for (int c = 0; c < N; ++c) row[c] = 0.0;
    for (int l = 0; l < N; ++l)
      for (int c = 0; c < N; ++c) row[c] += A[i * N + l] * B[l * N + c];
    for (int c = 0; c < N; ++c) C[i * N + c] = row[c];
  }
}

}  // namespace saltation::core
