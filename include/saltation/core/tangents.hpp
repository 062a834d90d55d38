#pragma once
// The segment tangent Y = d q(t) / d [q(t_s), theta_flow] (N x (N+F), from [I | 0] at the segment
// start t_s) and its step: for affine flows the step matrices that advance Y without dual numbers.
// Empty for forward-only runs, so they carry and compute nothing. X at the segment start (Xs,
// N x P) is columns.hpp's.
#include "saltation/config.hpp"
#include "saltation/core/rk4.hpp"
#include "saltation/model.hpp"
#include "saltation/numeric.hpp"

namespace saltation::core {

// Parameter columns handled per dual-number pass at an event.
constexpr int kChunk = 8;
// The parameter columns an event's jump forms at once: eight in host vectors (one AVX-512 vector,
// two AVX2 ones), one on the device (bench/README.md, "What a sensitivity event costs").
using ColumnGroup = Group<double, 8>;

// The flow-parameter columns of Y (N x W, row-major) after a full step of an affine flow from state
// q: Y_F' = Phi Y_F + Psi_f q + psi_f (see Tangents). Generic over the scalar and over how the
// operands are read (`Array`, indexed by entry), so that the CPU's SIMD lanes (src/cpu_lanes.cpp)
// run these very operations in this order on W trajectories at once, loading each operand where it
// is used (bench/README.md, "A cheaper tangent step").
template <int N, int F, int W, class Array, class T>
SALTATION_HD void affine_flow_param_columns(Array Phi, Array Psi, Array psi, Array q, Array Y, T* Y_out) {
  for (int f = 0; f < F; ++f)
    for (int i = 0; i < N; ++i) {
      T acc = psi[f * N + i];
      for (int l = 0; l < N; ++l) acc += Psi[(f * N + i) * N + l] * q[l];
      for (int l = 0; l < N; ++l) acc += Phi[i * N + l] * Y[l * W + N + f];
      Y_out[i * W + N + f] = acc;
    }
}

template <class Model, bool Sens>
struct Tangents {};

template <class Model>
struct Tangents<Model, true> {
  static constexpr int N = Model::N, F = Model::F, W = tangent_width<Model>();
  double Y[N * W];  // segment tangent (for affine flows, see `pending`)

  // For an affine flow the RK4 step of dt is affine in q, q' = Phi q + c, with Phi (N x N) and c
  // functions of the mode and theta only; so is its flow-parameter tangent,
  //   Y_F' = Phi Y_F + Psi_f q + psi_f,   Psi_f = dPhi/dtheta_f, psi_f = dc/dtheta_f.
  // All three are formed once per mode from the generic tangent step (rk4_tangent_step with
  // Y = [I | 0] at q = 0, whose q-columns give Phi and F-columns psi_f, then its F-columns alone
  // from 0 at each unit vector, psi_f + Psi_f e_k). A full step then costs the forward rk4_step
  // (its state bit for bit) and a few independent products for Y_F, instead of the four chained
  // stages on dual numbers. Full steps advance only the F columns of Y; its q-columns lack the
  // factor Phi^pending, applied by up_to_date() when they are needed (at events, a shorter step
  // and the end): the power by squaring, O(log pending) N x N products instead of one N x N x N
  // product per step. Its squares Phi^(2^k) are the same at every event of the mode, so the first
  // kSquares are kept once formed: an event between a handful of steps then costs a product or
  // two instead of twice as many squarings besides (the same products in the same order, so the
  // same bits).
  static constexpr int kSquares = 4;
  double Phi[N * N];
  double Psi[F * N * N > 0 ? F* N* N : 1];  // [(f * N + i) * N + l]
  double psi[F * N > 0 ? F* N : 1];         // [f * N + i]
  double squares[kSquares][N * N];          // squares[k] = Phi^(2^(k+1)), the first squares_known
  int squares_known = 0;
  int affine_mode = -1;
  int pending = 0;

  // Phi, Psi and psi for `mode` (h is always dt).
  template <class Model_, class Th>
  SALTATION_HD void ready_affine(const Model_& m, int mode, const Th& th, double h) {
    if (affine_mode == mode) return;
    up_to_date();
    form_affine_step(m, mode, th, h);
    squares_known = 0;
    affine_mode = mode;
  }
  template <class Model_, class Th>
  SALTATION_HD void form_affine_step(const Model_& m, int mode, const Th& th, double h) {
    double I[N * W], at[N], unused[N];
    for (int k = -1; k < N; ++k) {  // k = -1: at q = 0, else at e_k
      for (int i = 0; i < N; ++i) {
        at[i] = i == k ? 1.0 : 0.0;
        for (int c = 0; c < W; ++c) I[i * W + c] = (c == i) ? 1.0 : 0.0;
      }
      if (k < 0) rk4_tangent_step(m, at, mode, th, h, unused, I);
      else if constexpr (F > 0) rk4_tangent_step<N>(m, at, mode, th, h, unused, I);
      for (int f = 0; f < F; ++f)
        for (int i = 0; i < N; ++i) {
          if (k < 0) psi[f * N + i] = I[i * W + N + f];
          else Psi[(f * N + i) * N + k] = I[i * W + N + f] - psi[f * N + i];
        }
      if (k < 0)
        for (int i = 0; i < N; ++i)
          for (int l = 0; l < N; ++l) Phi[i * N + l] = I[i * W + l];
    }
  }
  // The tangent of a full step (dt) of an affine flow from q, taken once the step is (the state
  // itself is rk4_step's): Y_F as above, the q-columns pending.
  SALTATION_HD void take_affine_step(const double* q) {
    double Y_out[N * W];
    affine_flow_param_columns<N, F, W, const double*>(Phi, Psi, psi, q, Y, Y_out);
    for (int i = 0; i < N; ++i)
      for (int f = 0; f < F; ++f) Y[i * W + N + f] = Y_out[i * W + N + f];
    ++pending;
  }

  // Applies the pending full steps to the q-columns of Y: Y_q = Phi^pending Y_q, the power by
  // squaring; Y_q is mostly the identity (a segment with no step other than full ones), and then
  // it is the power. The power starts at I, not at its first factor: that kept the device's
  // sensitivity kernel from spilling (bench/README.md, "A cheaper tangent step").
  SALTATION_HD void up_to_date() {
    if (pending == 0) return;
    double power[N * N], base[N * N], tmp[N * N];
    for (int e = 0; e < N * N; ++e) {
      power[e] = (e % (N + 1) == 0) ? 1.0 : 0.0;
      base[e] = Phi[e];
    }
    for (int n = pending, k = 0; n > 0; n >>= 1, ++k) {
      if (k > 0) {  // base = Phi^(2^k): kept, formed now and kept, or past the kept ones formed
        if (k > kSquares) {
          mat_mul<N>(base, base, tmp);
        } else if (k > squares_known) {
          mat_mul<N>(base, base, squares[k - 1]);
          squares_known = k;
        }
        const double* next = k > kSquares ? tmp : squares[k - 1];
        for (int e = 0; e < N * N; ++e) base[e] = next[e];
      }
      if (n & 1) {
        mat_mul<N>(power, base, tmp);
        for (int e = 0; e < N * N; ++e) power[e] = tmp[e];
      }
    }
    bool identity = true;
    for (int i = 0; i < N; ++i)
      for (int c = 0; c < N; ++c) identity = identity && Y[i * W + c] == (i == c ? 1.0 : 0.0);
    if (!identity) {
      for (int i = 0; i < N; ++i)
        for (int c = 0; c < N; ++c) {
          double acc = 0.0;
          for (int l = 0; l < N; ++l) acc += power[i * N + l] * Y[l * W + c];
          tmp[i * N + c] = acc;
        }
      for (int e = 0; e < N * N; ++e) power[e] = tmp[e];
    }
    for (int i = 0; i < N; ++i)
      for (int c = 0; c < N; ++c) Y[i * W + c] = power[i * N + c];
    pending = 0;
  }

  SALTATION_HD void restart_segment() {
    for (int i = 0; i < N; ++i)
      for (int c = 0; c < W; ++c) Y[i * W + c] = (c == i) ? 1.0 : 0.0;
    pending = 0;
  }
  // The column of Y for parameter p: N + f for flow parameter f, else -1 (p's column of Y_theta is 0).
  SALTATION_HD static int flow_column(int p) {
    int f_col = -1;
    for (int f = 0; f < F; ++f)
      if (Model::flow_param(f) == p) f_col = N + f;
    return f_col;
  }
};

}  // namespace saltation::core
