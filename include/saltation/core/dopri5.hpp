#pragma once
// The Dormand-Prince 5(4) pair (options.method "dopri5"): one step with its embedded error
// estimate, the step size control, and the step's continuous extension, Shampine's fourth-order
// dense output (the coefficients of Hairer, Norsett and Wanner's DOPRI5), on which events are
// found and located. Generic over the scalar S: double, or dual numbers whose slots carry the
// segment tangent, so that the tangent is the derivative of the computed solution with the step
// sizes held fixed (docs/models.md, "Adaptive steps").
#include <cmath>
#include <type_traits>

#include "saltation/config.hpp"
#include "saltation/core/options.hpp"
#include "saltation/core/params.hpp"
#include "saltation/dual.hpp"
#include "saltation/elementary.hpp"
#include "saltation/numeric.hpp"

namespace saltation::core {

namespace dopri5 {
// The tableau: nodes c, stage weights a, fifth-order weights b (the seventh stage is the flow at
// the end, first stage of the next step), e = b - b_hat for the error estimate, d for the dense output.
constexpr double c2 = 1.0 / 5.0, c3 = 3.0 / 10.0, c4 = 4.0 / 5.0, c5 = 8.0 / 9.0;
constexpr double a21 = 1.0 / 5.0;
constexpr double a31 = 3.0 / 40.0, a32 = 9.0 / 40.0;
constexpr double a41 = 44.0 / 45.0, a42 = -56.0 / 15.0, a43 = 32.0 / 9.0;
constexpr double a51 = 19372.0 / 6561.0, a52 = -25360.0 / 2187.0, a53 = 64448.0 / 6561.0, a54 = -212.0 / 729.0;
constexpr double a61 = 9017.0 / 3168.0, a62 = -355.0 / 33.0, a63 = 46732.0 / 5247.0, a64 = 49.0 / 176.0,
                 a65 = -5103.0 / 18656.0;
constexpr double b1 = 35.0 / 384.0, b3 = 500.0 / 1113.0, b4 = 125.0 / 192.0, b5 = -2187.0 / 6784.0, b6 = 11.0 / 84.0;
constexpr double e1 = 71.0 / 57600.0, e3 = -71.0 / 16695.0, e4 = 71.0 / 1920.0, e5 = -17253.0 / 339200.0,
                 e6 = 22.0 / 525.0, e7 = -1.0 / 40.0;
constexpr double d1 = -12715105075.0 / 11282082432.0, d3 = 87487479700.0 / 32700410799.0,
                 d4 = -10690763975.0 / 1880347072.0, d5 = 701980252875.0 / 199316789632.0,
                 d6 = -1453857185.0 / 822651844.0, d7 = 69997945.0 / 29380423.0;
// The step size control (Hairer's PI controller): the next step h * clamp(safety / err^(1/5 - 0.75
// beta) * err_prev^beta), at most kGrow and at least kShrink times the last. The powers are taken
// as exp and log of the project's own (elementary.hpp), which are cheaper than the C library's
// pow and the same in the CPU's lanes.
constexpr double kSafety = 0.9, kBeta = 0.04, kShrink = 0.2, kGrow = 10.0;
constexpr double kErrExponent = -(0.2 - 0.75 * kBeta);
// err_prev is at least kErrFloor (its log at least kLogErrFloor): a near-exact step does not inflate the next.
constexpr double kErrFloor = 1e-4, kLogErrFloor = -9.210340371976182;
}  // namespace dopri5

// One step's stages and end state: k[0] the flow at the start (given), k[6] at the end.
template <int N, class S>
struct Dopri5Step {
  S k[7][N];
  S q1[N];
};

// The step of h from q: st.k[0] must hold the flow at q; fills the other stages and q1.
// H is double, or Dual<1> for the derivative in h (dopri5_step_with_rate).
template <class Model, class Th, class S, class H = double>
SALTATION_HD void dopri5_step(const Model& m, const S* q, int mode, const Th& th, H h, Dopri5Step<Model::N, S>& st) {
  using namespace dopri5;
  constexpr int N = Model::N;
  S(&k)[7][N] = st.k;
  S s[N];
  for (int i = 0; i < N; ++i) s[i] = q[i] + h * (a21 * k[0][i]);
  m.flow(s, mode, th, k[1]);
  for (int i = 0; i < N; ++i) s[i] = q[i] + h * (a31 * k[0][i] + a32 * k[1][i]);
  m.flow(s, mode, th, k[2]);
  for (int i = 0; i < N; ++i) s[i] = q[i] + h * (a41 * k[0][i] + a42 * k[1][i] + a43 * k[2][i]);
  m.flow(s, mode, th, k[3]);
  for (int i = 0; i < N; ++i) s[i] = q[i] + h * (a51 * k[0][i] + a52 * k[1][i] + a53 * k[2][i] + a54 * k[3][i]);
  m.flow(s, mode, th, k[4]);
  for (int i = 0; i < N; ++i)
    s[i] = q[i] + h * (a61 * k[0][i] + a62 * k[1][i] + a63 * k[2][i] + a64 * k[3][i] + a65 * k[4][i]);
  m.flow(s, mode, th, k[5]);
  for (int i = 0; i < N; ++i)
    st.q1[i] = q[i] + h * (b1 * k[0][i] + b3 * k[2][i] + b4 * k[3][i] + b5 * k[4][i] + b6 * k[5][i]);
  m.flow(st.q1, mode, th, k[6]);
}

// The step of h from q and the derivative of its end state in h, d out / dh (the rate at which
// event location follows the step): the stages on Dual<1> with h the variable, so `out` is
// dopri5_step's bit for bit.
template <class Model, class Th>
SALTATION_HD void dopri5_step_with_rate(const Model& m, const double* q, int mode, const Th& th, double h, double* out,
                                        double* rate) {
  constexpr int N = Model::N;
  using D = Dual<1>;
  D qd[N];
  Dopri5Step<N, D> st;
  for (int i = 0; i < N; ++i) qd[i] = D(q[i]);
  const ConstantParams<D, Th> thd{th};
  m.flow(qd, mode, thd, st.k[0]);
  dopri5_step(m, qd, mode, thd, D::variable(h, 0), st);
  for (int i = 0; i < N; ++i) {
    out[i] = st.q1[i].v;
    rate[i] = st.q1[i].d[0];
  }
}

// The step's error relative to the tolerances: the sum over the state of the squares of
// err_i / (atol_i + rtol max(|q0_i|, |q1_i|)), with `part` picking what of each entry is weighed
// (value_of: the state; a dual slot: one tangent column). Generic over the value: a double, or a
// lane vector (each lane's sum the double one's bits) for the CPU's lanes.
template <int N, class S, class H, class Part>
SALTATION_HD auto dopri5_error_sum(const S* q0, const Dopri5Step<N, S>& st, const H& h, double rtol,
                                   const AbsoluteTolerance& atol, Part part) {
  using namespace dopri5;
  using V = decltype(part(q0[0]));
  V sum(0.0);
  for (int i = 0; i < N; ++i) {
    const auto k = [&](int stage) { return part(st.k[stage][i]); };
    const V err = h * (e1 * k(0) + e3 * k(2) + e4 * k(3) + e5 * k(4) + e6 * k(5) + e7 * k(6));
    const V scale = V(atol.of(i)) + rtol * fmax(abs(part(q0[i])), abs(part(st.q1[i])));
    sum += (err / scale) * (err / scale);
  }
  return sum;
}

// What judges a trial step: its error against the tolerances, the root mean square over the
// state (and with on_slots over every slot of a dual state too) of dopri5_error_sum's terms, at
// most 1 for the step to be accepted (not finite when the step is not); that error's log, which
// the control keeps for the step after; and the growth the control gives the next step if this
// one is accepted (safety err^(-(1/5 - 0.75 beta)) err_prev^beta, log_err_prev the last accepted
// step's, before dopri5_next_step's clamp). E is double, or a lane vector as dopri5_error_sum's.
template <class E>
struct Dopri5Error {
  E err, log_err, growth;
};
template <int N, class S, class H, class E>
SALTATION_HD auto dopri5_step_error(const S* q0, const Dopri5Step<N, S>& st, const H& h, double rtol,
                                    const AbsoluteTolerance& atol, bool on_slots, const E& log_err_prev) {
  auto sum = dopri5_error_sum(q0, st, h, rtol, atol, [](const S& x) { return value_of(x); });
  using V = decltype(sum);
  int entries = N;
  if constexpr (!std::is_same<S, V>::value) {  // dual numbers
    if (on_slots) {
      for (int c = 0; c < S::kSlots; ++c)
        sum += dopri5_error_sum(q0, st, h, rtol, atol, [c](const S& x) { return x.d[c]; });
      entries *= S::kSlots + 1;
    }
  }
  const V err = sqrt(sum / V(static_cast<double>(entries)));
  const V log_err = elementary::log(fmax(err, V(1e-300)));
  using namespace dopri5;
  return Dopri5Error<V>{err, log_err, kSafety * elementary::exp(kErrExponent * log_err + kBeta * log_err_prev)};
}

// The next step after an accepted one of h, with the control's growth (Dopri5Error's).
SALTATION_HD inline double dopri5_next_step(double h, double growth) {
  using namespace dopri5;
  return h * ::fmin(kGrow, ::fmax(kShrink, growth));
}
// The retry after a rejected step of h with error err (> 1, or not finite).
SALTATION_HD inline double dopri5_retry_step(double h, double err) {
  using namespace dopri5;
  const double shrink = is_finite(err) ? kSafety * elementary::exp(kErrExponent * elementary::log(err)) : kShrink;
  return h * ::fmax(kShrink, ::fmin(1.0, shrink));
}

// Entry i of the continuous extension at the fraction u of the step of h from q0_i (u a double,
// or a dual number for its rate): q0 + u (r1 + (1 - u) (r2 + u (r3 + (1 - u) r4))), exact at both
// ends. `part` maps each entry of the step to what is interpolated: value_of for the state alone
// (of a step on dual numbers too), the identity for the dual numbers themselves (the tangent).
template <int N, class S, class Q, class U, class H, class Part>
SALTATION_HD auto dopri5_dense_entry(int i, U u, const H& h, const Q& q0_i, const Dopri5Step<N, S>& st, Part part) {
  using namespace dopri5;
  const auto k = [&](int stage) { return part(st.k[stage][i]); };
  const auto r1 = part(st.q1[i]) - q0_i;
  const auto r2 = h * k(0) - r1;
  const auto r3 = r1 - h * k(6) - r2;
  const auto r4 = h * (d1 * k(0) + d3 * k(2) + d4 * k(3) + d5 * k(4) + d6 * k(5) + d7 * k(6));
  const U v = 1.0 - u;
  return q0_i + u * (r1 + v * (r2 + u * (r3 + v * r4)));
}

// The initial step for a trajectory at q0 with flow f0 (Hairer's: a first guess from |q0| / |f0|,
// then one explicit Euler step to estimate the second derivative), at most dt_max.
template <class Model, class Th>
SALTATION_HD double dopri5_initial_step(const Model& m, const double* q0, const double* f0, int mode, const Th& th,
                                        double rtol, const AbsoluteTolerance& atol, double dt_max) {
  constexpr int N = Model::N;
  double dq = 0.0, df = 0.0;
  for (int i = 0; i < N; ++i) {
    const double scale = atol.of(i) + rtol * ::fabs(q0[i]);
    dq += (q0[i] / scale) * (q0[i] / scale);
    df += (f0[i] / scale) * (f0[i] / scale);
  }
  dq = ::sqrt(dq / N);
  df = ::sqrt(df / N);
  double h0 = (dq < 1e-5 || df < 1e-5) ? 1e-6 : 0.01 * dq / df;
  h0 = ::fmin(h0, dt_max);
  double q1[N], f1[N];
  for (int i = 0; i < N; ++i) q1[i] = q0[i] + h0 * f0[i];
  m.flow(q1, mode, th, f1);
  double d2 = 0.0;
  for (int i = 0; i < N; ++i) {
    const double scale = atol.of(i) + rtol * ::fabs(q0[i]);
    d2 += ((f1[i] - f0[i]) / scale) * ((f1[i] - f0[i]) / scale);
  }
  d2 = ::sqrt(d2 / N) / h0;
  const double larger = ::fmax(df, d2);
  const double h1 = larger <= 1e-15 ? ::fmax(1e-6, h0 * 1e-3) : ::pow(0.01 / larger, 0.2);
  const double h = ::fmin(100.0 * h0, h1);
  return is_finite(h) && h > 0.0 ? ::fmin(h, dt_max) : ::fmin(1e-6, dt_max);
}

}  // namespace saltation::core
