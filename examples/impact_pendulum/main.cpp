// Impact pendulum: solves a batch of a user-defined model on one backend, prints a table,
// and checks it: first impacts against the energy closed form and quadrature, later impacts
// against omega_(n+1) = e omega_n, and every sensitivity of a damped row against finite
// differences (saltation/testing/check_sensitivities.hpp). Exits 0 when every check passes,
// 1 when one fails, 77 when the CUDA backend is asked for and no device is present.
//
//   impact_pendulum [cpu|cuda|auto]
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "closed_form.hpp"
#include "impact_pendulum.hpp"
#include "saltation/solve.hpp"
#include "saltation/testing/check_sensitivities.hpp"

namespace {

using pendulum::ImpactPendulum;
using Param = ImpactPendulum::Param;

int failures = 0;
void expect_near(double actual, double expected, double tolerance, const std::string& what, std::size_t row) {
  if (std::fabs(actual - expected) <= tolerance) return;
  ++failures;
  std::printf("FAIL row %zu: %s = %.15g, expected %.15g (tolerance %g)\n", row, what.c_str(), actual, expected,
              tolerance);
}

int run(saltation::Backend backend) {
  const ImpactPendulum model;  // gravity 9.81
  // Undamped rows: restitution e and initial speed swept, released at phi0 = -0.3 towards a wall at 0.4.
  const int n_e = 4, n_omega = 8;
  saltation::Batch batch(n_e * n_omega, ImpactPendulum::P);
  for (int a = 0; a < n_e; ++a)
    for (int b = 0; b < n_omega; ++b) {
      const std::size_t i = a * n_omega + b;
      const double row[ImpactPendulum::P] = {-0.3, 1.0 + 0.2 * b, 1.0, 0.0, 0.5 + 0.15 * a, 0.4};
      for (int p = 0; p < ImpactPendulum::P; ++p) batch.at(i, p) = row[p];
    }
  saltation::Options options;
  options.t_final = 8.0;
  options.dt = 1e-3;
  options.event_capacity = 8;
  options.sensitivities = true;
  const saltation::Result r = saltation::solve(model, batch, options, backend);

  std::printf("impact pendulum on %s: %zu rows, t_final %g, dt %g\n", saltation::backend_name(backend), batch.n,
              options.t_final, options.dt);
  std::printf("%5s %7s %6s %12s %12s %14s %14s\n", "e", "omega0", "events", "t_1", "omega_1", "dt_1/domega0",
              "quadrature");
  for (std::size_t i = 0; i < batch.n; ++i) {
    double theta[ImpactPendulum::P];
    for (int p = 0; p < ImpactPendulum::P; ++p) theta[p] = batch.at(i, p);
    const pendulum::FirstImpact cf = pendulum::first_impact(model.gravity, theta);
    if (i % n_omega == 0 || i % n_omega == n_omega - 1)
      std::printf("%5.2f %7.2f %6d %12.9f %12.9f %14.9f %14.9f\n", theta[Param::E], theta[Param::Omega0], r.n_events[i],
                  r.event_time(i, 0), r.event_q(i, 0, 1), r.event_dt(i, 0, Param::Omega0), cf.d_time[Param::Omega0]);
    if (r.n_events[i] < 3) {
      ++failures;
      std::printf("FAIL row %zu: %d impacts, expected at least 3\n", i, r.n_events[i]);
      continue;
    }
    // RK4 at dt = 1e-3 is accurate to about 1e-12 here; the event time is located to 1e-12.
    expect_near(r.event_time(i, 0), cf.time, 1e-10, "t_1", i);
    expect_near(r.event_q(i, 0, 1), cf.speed, 1e-10, "omega_1", i);
    expect_near(r.event_dq(i, 0, 1, Param::Omega0), cf.d_speed_d_omega0, 1e-10, "d omega_1 / d omega0", i);
    for (int p : {Param::Phi0, Param::Omega0, Param::Length, Param::E, Param::Wall})
      expect_near(r.event_dt(i, 0, p), cf.d_time[p], 1e-10 * (1.0 + std::fabs(cf.d_time[p])),
                  "d t_1 / d " + ImpactPendulum::param_name(p), i);
    for (int c = 1; c < r.n_events[i]; ++c)
      expect_near(r.event_q(i, c, 1), theta[Param::E] * r.event_q(i, c - 1, 1), 1e-10, "omega_(n+1) against e omega_n",
                  i);
  }

  // A damped row has no closed form: every derivative against finite differences of the solver.
  const std::vector<double> damped = {-0.3, 1.6, 0.8, 0.15, 0.7, 0.4};
  saltation::Options check_options = options;
  check_options.t_final = 4.0;
  const auto check = saltation::testing::check_sensitivities(model, damped, check_options, backend);
  std::printf("damped row against finite differences: %s\n", check.summary().c_str());
  if (!check.ok(1e-6)) {
    ++failures;
    std::printf("FAIL sensitivities of the damped row\n");
  }
  std::printf(failures ? "%d checks failed\n" : "all checks passed\n", failures);
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const saltation::Backend backend = saltation::parse_backend(argc > 1 ? argv[1] : "cpu");
    if (backend == saltation::Backend::Cuda && !saltation::cuda_device_available()) {
      std::printf("no CUDA device: skipped\n");
      return 77;
    }
    return run(backend);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "impact_pendulum: %s\n", e.what());
    return 1;
  }
}
