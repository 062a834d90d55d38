#pragma once
// Checks a model's sensitivities against finite differences of the whole solver, for one
// parameter row: every derivative a sensitivity run reports (d qf / d theta, and per event
// d t_e / d theta and d q-_e / d theta) is compared with a Richardson-extrapolated central
// difference of forward-only runs,
//     D = (4 D(h/2) - D(h)) / 3,   D(h) = (y(theta_p + h) - y(theta_p - h)) / 2h,
//     h = rel_step max(1, |theta_p|),
// whose truncation error is O(h^4) while the jitter of event and step times (about 1e-14 in the
// states) stays near 1e-9 in the differences. The 4P perturbed rows run as one batch.
//
// The comparison holds only at a fixed event topology (the outputs jump where the event count
// changes): a parameter whose perturbed runs end with another status, event count or guard
// sequence is listed in topology_changed and not compared; one whose perturbed rows are invalid
// input (outside the parameter domain, or an initial state past a guard) in outside_domain.
// Either makes ok() false: pick another row or a smaller rel_step.
//
// Header-only and free of any test framework; it runs saltation::solve, so it needs the
// backend choice of saltation::core (link saltation::core or saltation::saltation).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "saltation/any_model.hpp"
#include "saltation/batch.hpp"
#include "saltation/errors.hpp"
#include "saltation/options.hpp"
#include "saltation/result.hpp"
#include "saltation/solve.hpp"
#include "saltation/status.hpp"

namespace saltation::testing {

struct SensitivityCheckSettings {
  double rel_step = 1e-5;  // h = rel_step max(1, |theta_p|)
  // Errors are |analytic - fd| / (|fd| + floor): relative for large derivatives, absolute
  // (scaled by 1 / floor) for derivatives near zero, whose finite differences are noise.
  double floor = 1e-2;
};

struct SensitivityCheck {
  Status status = Status::Finished;       // of the unperturbed run
  int events = 0;                         // events of the unperturbed run
  int compared = 0;                       // derivatives compared
  double worst_error = 0.0;               // largest error over the compared derivatives (inf where one is NaN)
  std::string worst_output, worst_param;  // where, e.g. "q_e[1][v]" and "e"
  double worst_analytic = 0.0, worst_finite_difference = 0.0;
  std::vector<std::string> topology_changed;  // parameters not compared: the topology changed
  std::vector<std::string> outside_domain;    // parameters not compared: perturbed rows invalid

  bool ok(double tolerance) const {
    return topology_changed.empty() && outside_domain.empty() && compared > 0 && worst_error <= tolerance;
  }
  std::string summary() const {
    std::ostringstream s;
    s << compared << " derivatives compared (" << events << " events, status " << status_name(status)
      << "), worst error " << worst_error;
    if (!worst_output.empty())
      s << " at d " << worst_output << " / d " << worst_param << ": " << worst_analytic << " vs finite difference "
        << worst_finite_difference;
    auto list = [&s](const char* what, const std::vector<std::string>& names) {
      if (names.empty()) return;
      s << "; " << what << ":";
      for (const std::string& name : names) s << " " << name;
    };
    list("event topology changed under perturbation of (not compared)", topology_changed);
    list("perturbed rows invalid for (not compared)", outside_domain);
    return s.str();
  }
};

namespace detail {

// What the check names: the model's states and parameters.
struct ModelNames {
  std::vector<std::string> states, params;
};

// One trajectory's outputs in a fixed order: qf, then per event t_e and q-_e.
inline std::vector<std::string> output_names(const ModelNames& model, const Result& r, std::size_t i) {
  std::vector<std::string> names;
  for (int k = 0; k < r.N; ++k) names.push_back("qf[" + model.states[k] + "]");
  for (int c = 0; c < r.n_events[i]; ++c) {
    names.push_back("t_e[" + std::to_string(c) + "]");
    for (int k = 0; k < r.N; ++k) names.push_back("q_e[" + std::to_string(c) + "][" + model.states[k] + "]");
  }
  return names;
}
inline std::vector<double> outputs(const Result& r, std::size_t i) {
  std::vector<double> y;
  for (int k = 0; k < r.N; ++k) y.push_back(r.qf_of(i, k));
  for (int c = 0; c < r.n_events[i]; ++c) {
    y.push_back(r.event_time(i, c));
    for (int k = 0; k < r.N; ++k) y.push_back(r.event_q(i, c, k));
  }
  return y;
}
// The derivatives of outputs(r, i) with respect to parameter p, in the same order.
inline std::vector<double> derivatives(const Result& r, std::size_t i, int p) {
  std::vector<double> d;
  for (int k = 0; k < r.N; ++k) d.push_back(r.dqf_of(i, k, p));
  for (int c = 0; c < r.n_events[i]; ++c) {
    d.push_back(r.event_dt(i, c, p));
    for (int k = 0; k < r.N; ++k) d.push_back(r.event_dq(i, c, k, p));
  }
  return d;
}
inline bool same_topology(const Result& a, std::size_t i, const Result& b, std::size_t j) {
  if (a.status[i] != b.status[j] || a.n_events[i] != b.n_events[j]) return false;
  for (int c = 0; c < a.n_events[i]; ++c)
    if (a.ev_guard[c * a.n + i] != b.ev_guard[c * b.n + j]) return false;
  return true;
}

// The check of a model known by its names and `solve(batch, options)`.
template <class Solve>
SensitivityCheck check_sensitivities(const ModelNames& model, Solve&& solve, const std::vector<double>& theta,
                                     const Options& options, const SensitivityCheckSettings& settings) {
  const int P = static_cast<int>(model.params.size());
  if (static_cast<int>(theta.size()) != P)
    throw InvalidInput("theta", -1,
                       "has " + std::to_string(theta.size()) + " entries, the model needs " + std::to_string(P));
  Options with_sens = options;
  with_sens.sensitivities = true;
  const Result base = solve(Batch::from_rows({theta}, P), with_sens);

  // Row 4p + s perturbs theta_p by steps[s] h_p; the others keep theta.
  const double steps[4] = {1.0, -1.0, 0.5, -0.5};
  Batch perturbed(4 * static_cast<std::size_t>(P), P);
  for (int p = 0; p < P; ++p) {
    const double h = settings.rel_step * std::max(1.0, std::fabs(theta[p]));
    for (int s = 0; s < 4; ++s)
      for (int k = 0; k < P; ++k) perturbed.at(4 * p + s, k) = theta[k] + (k == p ? steps[s] * h : 0.0);
  }
  Options forward = options;
  forward.sensitivities = false;
  forward.mark_invalid_rows = true;  // a row outside the domain is reported, not thrown
  const Result runs = solve(perturbed, forward);

  SensitivityCheck check;
  check.status = base.status_of(0);
  check.events = base.n_events[0];
  const std::vector<std::string> names = output_names(model, base, 0);
  for (int p = 0; p < P; ++p) {
    const std::size_t row = 4 * static_cast<std::size_t>(p);
    bool invalid = false, changed = false;
    for (std::size_t s = 0; s < 4; ++s) {
      invalid |= runs.status_of(row + s) == Status::InvalidInput;
      changed |= !detail::same_topology(base, 0, runs, row + s);
    }
    if (invalid) {
      check.outside_domain.push_back(model.params[p]);
      continue;
    }
    if (changed) {
      check.topology_changed.push_back(model.params[p]);
      continue;
    }
    std::vector<double> y[4];
    for (std::size_t s = 0; s < 4; ++s) y[s] = detail::outputs(runs, row + s);
    // The steps actually taken (theta_p + h is rounded).
    const double wide = perturbed.at(row, p) - perturbed.at(row + 1, p);
    const double narrow = perturbed.at(row + 2, p) - perturbed.at(row + 3, p);
    const std::vector<double> analytic = detail::derivatives(base, 0, p);
    for (std::size_t e = 0; e < analytic.size(); ++e) {
      const double d_wide = (y[0][e] - y[1][e]) / wide, d_narrow = (y[2][e] - y[3][e]) / narrow;
      const double fd = (4.0 * d_narrow - d_wide) / 3.0;
      double error = std::fabs(analytic[e] - fd) / (std::fabs(fd) + settings.floor);
      if (std::isnan(error)) error = std::numeric_limits<double>::infinity();
      ++check.compared;
      if (check.worst_output.empty() || error > check.worst_error) {
        check.worst_error = error;
        check.worst_output = names[e];
        check.worst_param = model.params[p];
        check.worst_analytic = analytic[e];
        check.worst_finite_difference = fd;
      }
    }
  }
  return check;
}

}  // namespace detail

// `theta` is one row of Model::P parameters; `options` as for saltation::solve (its
// sensitivities flag is ignored: the check runs with and without). Throws what solve throws.
template <class Model>
SensitivityCheck check_sensitivities(const Model& model, const std::vector<double>& theta, const Options& options,
                                     Backend backend = Backend::Cpu, const SensitivityCheckSettings& settings = {}) {
  detail::ModelNames names;
  for (int k = 0; k < Model::N; ++k) names.states.push_back(Model::state_name(k));
  for (int p = 0; p < Model::P; ++p) names.params.push_back(Model::param_name(p));
  return detail::check_sensitivities(
      names, [&](const Batch& b, const Options& o) { return solve(model, b, o, backend); }, theta, options, settings);
}

// The same for a model chosen at run time (a model file's, or a built-in one by name).
inline SensitivityCheck check_sensitivities(const AnyModel& model, const std::vector<double>& theta,
                                            const Options& options, Backend backend = Backend::Cpu,
                                            const SensitivityCheckSettings& settings = {}) {
  const detail::ModelNames names{model.info().state_names, model.info().param_names};
  return detail::check_sensitivities(
      names, [&](const Batch& b, const Options& o) { return model.solve(b, o, backend); }, theta, options, settings);
}

}  // namespace saltation::testing
