#include "saltation/products.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "saltation/errors.hpp"

namespace saltation {
namespace {

void require_sensitivities(const Result& r) {
  if (!r.sensitivities) throw InvalidInput("options.sensitivities", -1, "the result was solved without sensitivities");
}

// Calls f(row, value_ptr, derivative(p) accessor) for each output row of trajectory i.
// The event rows beyond the trajectory's event count are reported as absent (nullptr).
template <class F>
void for_each_output_row(const Result& r, std::size_t i, F&& f) {
  for (int k = 0; k < r.N; ++k) f(k, true, r.qf_of(i, k), [&](int p) { return r.dqf_of(i, k, p); });
  for (int c = 0; c < r.C; ++c) {
    const bool present = c < r.n_events[i];
    const int base = r.N + c * (1 + r.N);
    f(base, present, present ? r.event_time(i, c) : 0.0, [&, c](int p) { return r.event_dt(i, c, p); });
    for (int k = 0; k < r.N; ++k)
      f(base + 1 + k, present, present ? r.event_q(i, c, k) : 0.0, [&, c, k](int p) { return r.event_dq(i, c, k, p); });
  }
}

}  // namespace

int output_size(const Result& r) { return r.N + r.C * (1 + r.N); }

std::vector<double> outputs(const Result& r) {
  const std::size_t n = r.n;
  std::vector<double> y(static_cast<std::size_t>(output_size(r)) * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for_each_output_row(r, i, [&](int row, bool present, double value, auto) {
      if (present) y[row * n + i] = value;
    });
  return y;
}

std::vector<double> jacobian(const Result& r) {
  require_sensitivities(r);
  const std::size_t n = r.n, P = r.P;
  std::vector<double> J(output_size(r) * P * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for_each_output_row(r, i, [&](int row, bool present, double, auto d) {
      if (present)
        for (std::size_t p = 0; p < P; ++p) J[(row * P + p) * n + i] = d(static_cast<int>(p));
    });
  return J;
}

std::vector<double> jvp(const Result& r, const std::vector<double>& v) {
  require_sensitivities(r);
  const std::size_t n = r.n, P = r.P;
  if (v.size() != P * n) throw InvalidInput("v", -1, "must have P * n = " + std::to_string(P * n) + " entries");
  std::vector<double> out(output_size(r) * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for_each_output_row(r, i, [&](int row, bool present, double, auto d) {
      if (!present) return;
      double acc = 0.0;
      for (std::size_t p = 0; p < P; ++p) acc += d(static_cast<int>(p)) * v[p * n + i];
      out[row * n + i] = acc;
    });
  return out;
}

std::vector<double> vjp(const Result& r, const std::vector<double>& w) {
  require_sensitivities(r);
  const std::size_t n = r.n, P = r.P;
  if (w.size() != output_size(r) * n)
    throw InvalidInput("w", -1, "must have R * n = " + std::to_string(output_size(r) * n) + " entries");
  std::vector<double> out(P * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for_each_output_row(r, i, [&](int row, bool present, double, auto d) {
      if (!present) return;
      const double wr = w[row * n + i];
      for (std::size_t p = 0; p < P; ++p) out[p * n + i] += wr * d(static_cast<int>(p));
    });
  return out;
}

ObjectiveValues evaluate(const LandingObjective& L, const Result& r) {
  require_sensitivities(r);
  if (L.impact < 0 || L.impact >= r.C)
    throw InvalidInput("objective.impact", -1, "must be in [0, event_capacity) = [0, " + std::to_string(r.C) + ")");
  if (L.coordinate < 0 || L.coordinate >= r.N)
    throw InvalidInput("objective.coordinate", -1, "must be in [0, N) = [0, " + std::to_string(r.N) + ")");
  if (L.qf_weights.size() != L.qf_target.size() ||
      (!L.qf_weights.empty() && static_cast<int>(L.qf_weights.size()) != r.N))
    throw InvalidInput("objective.qf_weights", -1, "qf_weights and qf_target must both be empty or have N entries");
  const std::size_t n = r.n, P = r.P;
  ObjectiveValues out;
  out.value.assign(n, 0.0);
  out.gradient.assign(P * n, 0.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = 0; i < n; ++i) {
    if (r.n_events[i] <= L.impact) {
      out.value[i] = nan;
      for (std::size_t p = 0; p < P; ++p) out.gradient[p * n + i] = nan;
      continue;
    }
    const double miss = r.event_q(i, L.impact, L.coordinate) - L.target;
    double value = miss * miss;
    for (std::size_t p = 0; p < P; ++p)
      out.gradient[p * n + i] = 2.0 * miss * r.event_dq(i, L.impact, L.coordinate, static_cast<int>(p));
    for (std::size_t k = 0; k < L.qf_weights.size(); ++k) {
      const double d = r.qf_of(i, static_cast<int>(k)) - L.qf_target[k];
      value += L.qf_weights[k] * d * d;
      for (std::size_t p = 0; p < P; ++p)
        out.gradient[p * n + i] += 2.0 * L.qf_weights[k] * d * r.dqf_of(i, static_cast<int>(k), static_cast<int>(p));
    }
    out.value[i] = value;
  }
  return out;
}

}  // namespace saltation
