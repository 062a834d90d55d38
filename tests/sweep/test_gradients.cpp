// Gradients of expectations across topology changes (docs/sweep.md, "Gradients across topology
// changes"): the bouncing ball dropped from h0 ~ U(a, b) with the restitution e as the design
// parameter, whose expectations and their e-derivatives have closed forms. Every estimator must be
// within 4 standard errors of the closed form where it claims to apply; the discontinuity
// diagnostic must be 0 where no boundary exists and positive where one does.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "saltation/errors.hpp"
#include "saltation/registry.hpp"
#include "saltation/sweep/boundary.hpp"
#include "saltation/sweep/score.hpp"
#include "saltation/sweep/study.hpp"

using namespace saltation;
using nlohmann::json;

namespace {

const double g = 9.81, T = 3.0, a = 1.0, b = 2.0, e0 = 0.8;

// The ball dropped from h0 at rest: first impact at t1 = sqrt(2 h0 / g) with speed g t1; after
// impact k it leaves at e^k g t1 and flies 2 e^k t1, so impact n (from 1) comes at t1 S_n(e),
// S_n = 1 + 2 (e + ... + e^(n-1)). Impact n comes before T when h0 < h_n = (g / 2) (T / S_n)^2.
double S(int n, double e) {
  double s = 1.0, p = 1.0;
  for (int k = 1; k < n; ++k) s += 2.0 * (p *= e);
  return s;
}
double critical_height(int n, double e) { return 0.5 * g * std::pow(T / S(n, e), 2); }
int impacts(double h0, double e) {
  int n = 0;
  while (n < 60 && h0 < critical_height(n + 1, e)) ++n;
  return n;
}
// v(T): after the last impact N the ball left upwards at e^N g t1 and has flown T - t1 S_N.
double velocity_at_T(double h0, double e) {
  const double t1 = std::sqrt(2.0 * h0 / g);
  const int n = impacts(h0, e);
  return g * (std::pow(e, n) * t1 - (T - t1 * S(n, e)));
}

// The integral of f over [low, high], f smooth between the critical heights at e and the `cuts`:
// Gauss-Legendre on 64 panels of each smooth piece, exact to rounding for these integrands.
double integral(const std::function<double(double)>& f, double e, double low, double high,
                std::vector<double> cuts = {}) {
  static const std::array<double, 5> x = {0.0, 0.5384693101056831, -0.5384693101056831, 0.9061798459386640,
                                          -0.9061798459386640};
  static const std::array<double, 5> w = {0.5688888888888889, 0.4786286704993665, 0.4786286704993665,
                                          0.2369268850561891, 0.2369268850561891};
  cuts.erase(std::remove_if(cuts.begin(), cuts.end(), [&](double x) { return !(x > low && x < high); }), cuts.end());
  cuts.push_back(low);
  for (int n = 1; n < 60; ++n)
    if (critical_height(n, e) > low && critical_height(n, e) < high) cuts.push_back(critical_height(n, e));
  cuts.push_back(high);
  std::sort(cuts.begin(), cuts.end());
  double sum = 0.0;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k)
    for (int piece = 0; piece < 64; ++piece) {
      const double lo = cuts[k] + (cuts[k + 1] - cuts[k]) * piece / 64,
                   hi = cuts[k] + (cuts[k + 1] - cuts[k]) * (piece + 1) / 64;
      for (int q = 0; q < 5; ++q) sum += w[q] * 0.5 * (hi - lo) * f(0.5 * (lo + hi) + 0.5 * (hi - lo) * x[q]);
    }
  return sum;
}

// E over h0 ~ U(a, b) of f(h0).
double expectation(const std::function<double(double)>& f, double e, std::vector<double> cuts = {}) {
  return integral(f, e, a, b, std::move(cuts)) / (b - a);
}

// With v_stop the ball settles at its first impact n slower than v_stop, e^(n-1) g t1 < v_stop,
// and ends there with v = e^n g t1 (the post-event state), if that impact comes before T. The
// speed of impact n equals v_stop at h0 = v_stop^2 / (2 g e^(2(n-1))).
struct Ending {
  int impacts;
  bool settled;
  double v;
};
Ending ending(double h0, double e, double v_stop) {
  const double t1 = std::sqrt(2.0 * h0 / g);
  for (int n = 1; n < 60; ++n) {
    if (!(h0 < critical_height(n, e))) return {n - 1, false, velocity_at_T(h0, e)};
    if (std::pow(e, n - 1) * g * t1 < v_stop) return {n, true, std::pow(e, n) * g * t1};
  }
  return {60, false, 0.0};
}
double settling_expectation(const std::function<double(const Ending&)>& f, double e, double v_stop) {
  std::vector<double> cuts;
  for (int n = 1; n < 60; ++n) cuts.push_back(v_stop * v_stop / (2.0 * g * std::pow(e, 2.0 * (n - 1))));
  return expectation([&](double h0) { return f(ending(h0, e, v_stop)); }, e, cuts);
}
// d/de of it by a central difference (each piece smooth in e, its ends exact).
double settling_gradient(const std::function<double(const Ending&)>& f, double e, double v_stop) {
  const double step = 1e-5;
  return (settling_expectation(f, e + step, v_stop) - settling_expectation(f, e - step, v_stop)) / (2.0 * step);
}

// E over h0 ~ N(mu, sigma) of f(h0) (the mass beyond 7 sigma, 3e-12, left out; h0 stays > 0).
double normal_expectation(const std::function<double(double)>& f, double mu, double sigma) {
  auto weighted = [&](double h) {
    const double z = (h - mu) / sigma;
    return f(h) * std::exp(-0.5 * z * z) / (sigma * std::sqrt(2.0 * M_PI));
  };
  return integral(weighted, e0, mu - 7.0 * sigma, mu + 7.0 * sigma);
}

// dE[N]/de: the finite sum over the impacts whose critical height lies in (a, b) of
// P's density 1 / (b - a) times dh_n/de = -2 h_n S_n' / S_n.
double count_gradient(double e) {
  double sum = 0.0;
  for (int n = 1; n < 60; ++n) {
    const double h = critical_height(n, e);
    if (!(h > a && h < b)) continue;
    double dS = 0.0, p = 1.0;
    for (int k = 1; k < n; ++k) dS += 2.0 * k * p, p *= e;
    sum += -2.0 * h * dS / S(n, e) / (b - a);
  }
  return sum;
}

// dE[v(T)]/de by a central difference of the quadrature (smooth in e, so exact to ~1e-8).
double velocity_gradient(double e) {
  const double step = 1e-5;
  auto E = [&](double at) { return expectation([&](double h0) { return velocity_at_T(h0, at); }, at); };
  return (E(e + step) - E(e - step)) / (2.0 * step);
}

// The same ball with h0 ~ N(mu, sigma), mu the design parameter: dE[N]/dmu = -sum_n phi(z_n) / sigma,
// z_n = (h_n - mu) / sigma; E[t2] and E[v(T)] by quadrature over the normal, differentiated centrally.
const double mu0 = 1.5, sigma0 = 0.2;
double normal_count_gradient() {
  double sum = 0.0;
  for (int n = 1; n < 60; ++n) {
    const double z = (critical_height(n, e0) - mu0) / sigma0;
    sum -= std::exp(-0.5 * z * z) / (sigma0 * std::sqrt(2.0 * M_PI));
  }
  return sum;
}
double normal_gradient(const std::function<double(double)>& f) {
  const double step = 1e-5;
  return (normal_expectation(f, mu0 + step, sigma0) - normal_expectation(f, mu0 - step, sigma0)) / (2.0 * step);
}

json ball_study(std::uint64_t samples) {
  json s = json::parse(R"({"model": "bouncing_ball", "config": {"g": 9.81},
    "options": {"t_final": 3.0, "dt": 0.002, "event_capacity": 16},
    "parameters": {"h0": {"dist": "uniform", "low": 1.0, "high": 2.0}, "v0": 0.0, "e": {"design": 0.8}},
    "objectives": [{"name": "bounces", "event_count": true},
                   {"name": "v", "final_state": "v"},
                   {"name": "h", "final_state": "h"},
                   {"name": "t2", "event_time": 1}],
    "gradient_check": {"delta": 0.002},
    "seed": 11})");
  s["samples"] = samples;
  return s;
}

json run_summary(const json& study_json) {
  sweep::StudyRun run;
  run.backend = Backend::Cpu;
  const io::ModelChoice choice = io::parse_model_choice(study_json);
  const AnyModel model = configure_builtin_model(choice.name, choice.config);
  return sweep::summary_json(sweep::run_study(model, sweep::parse_study(study_json, model.info()), run));
}

// Prints an estimate against the closed form (docs/sweep.md's table).
void print_estimate(const json& estimate, double exact, const std::string& what) {
  const double mean = estimate.at("mean").get<double>(), se = estimate.at("std_error").get<double>();
  std::printf("%-36s %12.5g +- %-10.3g closed form %12.5g  (%+.2f s.e.)\n", what.c_str(), mean, se, exact,
              (mean - exact) / se);
}

// |estimate - exact| <= 4 standard errors.
void expect_within(const json& estimate, double exact, const std::string& what) {
  print_estimate(estimate, exact, what);
  const double mean = estimate.at("mean").get<double>(), se = estimate.at("std_error").get<double>();
  EXPECT_GT(se, 0.0) << what;
  EXPECT_LE(std::abs(mean - exact), 4.0 * se) << what << ": " << mean << " +- " << se << ", closed form " << exact;
}

}  // namespace

TEST(Gradients, BoundaryKernelIntegratesToOneWithNoFirstMoment) {
  const double h = 0.3;
  double zeroth = 0.0, first = 0.0;
  const int n = 100000;
  for (int k = 0; k < n; ++k) {
    const double m = (k + 0.5) * h / n;
    zeroth += sweep::boundary_kernel(m, h) * h / n;
    first += m * sweep::boundary_kernel(m, h) * h / n;
  }
  EXPECT_NEAR(zeroth, 1.0, 1e-9);
  EXPECT_NEAR(first, 0.0, 1e-9);
  EXPECT_EQ(sweep::boundary_kernel(-1e-12, h), 0.0);
  EXPECT_EQ(sweep::boundary_kernel(h, h), 0.0);
}

// The scores and sample slopes of score.hpp against central differences of log p(x; theta) and of
// x = F^-1(u; theta) at fixed u, for every distribution and field they cover.
TEST(Gradients, ScoresAndSampleSlopesAgainstFiniteDifferences) {
  using sweep::Distribution;
  auto log_pdf = [](const Distribution& d, double x) {
    auto log_phi = [](double z) { return -0.5 * z * z - 0.5 * std::log(2.0 * M_PI); };
    switch (d.kind) {
      case sweep::DistributionKind::Normal: return log_phi((x - d.a) / d.b) - std::log(d.b);
      case sweep::DistributionKind::Lognormal: return log_phi((std::log(x) - d.a) / d.b) - std::log(d.b * x);
      default:
        return log_phi((x - d.a) / d.b) - std::log(d.b) -
               std::log(sweep::normal_cdf((d.d - d.a) / d.b) - sweep::normal_cdf((d.c - d.a) / d.b));
    }
  };
  const Distribution distributions[] = {Distribution::normal(1.5, 0.2), Distribution::lognormal(0.3, 0.4),
                                        Distribution::truncnormal(1.0, 0.5, 0.6, 2.0), Distribution::uniform(1.0, 2.0)};
  const double step = 1e-6;
  for (const Distribution& d : distributions)
    for (double u : {0.03, 0.4, 0.77}) {
      const double x = d.from_uniform(u);
      const int fields = d.kind == sweep::DistributionKind::Truncnormal ? 4 : 2;
      for (int f = 0; f < fields; ++f) {
        const double v = sweep::field_value(d, f);
        const Distribution up = sweep::with_field(d, f, v + step), down = sweep::with_field(d, f, v - step);
        const double slope = (up.from_uniform(u) - down.from_uniform(u)) / (2.0 * step);
        EXPECT_NEAR(sweep::sample_slope(d, f, x), slope, 1e-6 * (1.0 + std::abs(slope)))
            << int(d.kind) << " field " << f;
        if (!sweep::has_score(d, f)) continue;
        const double score = (log_pdf(up, x) - log_pdf(down, x)) / (2.0 * step);
        EXPECT_NEAR(sweep::score(d, f, x), score, 1e-6 * (1.0 + std::abs(score))) << int(d.kind) << " field " << f;
      }
    }
  EXPECT_FALSE(sweep::has_score(Distribution::uniform(1.0, 2.0), 1));
  EXPECT_FALSE(sweep::has_score(Distribution::truncnormal(1.0, 0.5, 0.6, 2.0), 2));
}

// The closed forms themselves, against a direct count at a few heights.
TEST(Gradients, ClosedFormsAreConsistent) {
  EXPECT_EQ(impacts(1.5, e0), 4);  // the nominal ball
  const double t1 = std::sqrt(2.0 * 1.5 / g);
  EXPECT_LT(t1 * S(4, e0), T);
  EXPECT_GT(t1 * S(5, e0), T);
  // E[N] by quadrature against the sum of the clamped probabilities P(h0 < h_n).
  double sum = 0.0;
  for (int n = 1; n < 60; ++n) sum += std::clamp((critical_height(n, e0) - a) / (b - a), 0.0, 1.0);
  EXPECT_NEAR(expectation([](double h0) { return impacts(h0, e0); }, e0), sum, 1e-12);
  // dE[N]/de against a central difference of that sum.
  auto EN = [](double e) {
    double s = 0.0;
    for (int n = 1; n < 60; ++n) s += std::clamp((critical_height(n, e) - a) / (b - a), 0.0, 1.0);
    return s;
  };
  EXPECT_NEAR(count_gradient(e0), (EN(e0 + 1e-6) - EN(e0 - 1e-6)) / 2e-6, 1e-6);
}

TEST(Gradients, BallEstimatorsAgainstClosedForms) {
  const json s = run_summary(ball_study(16384));
  const json& objectives = s.at("objectives");

  // E[N]: piecewise constant, pathwise 0; the boundary-corrected gradient and the referee find the
  // closed form, a sum over the impacts whose critical height lies in (a, b).
  const json& bounces = objectives.at("bounces").at("gradient").at("e");
  const double dN = count_gradient(e0);
  EXPECT_EQ(bounces.at("estimator"), "corrected");
  EXPECT_EQ(bounces.at("pathwise").at("mean").get<double>(), 0.0);
  print_estimate(bounces.at("pathwise"), dN, "dE[N]/de pathwise (biased)");
  expect_within(bounces.at("corrected"), dN, "dE[N]/de corrected");
  expect_within(bounces.at("referee"), dN, "dE[N]/de referee");
  EXPECT_GT(std::abs(dN), 8.0 * bounces.at("corrected").at("std_error").get<double>()) << "the pathwise 0 is biased";
  EXPECT_GT(bounces.at("discontinuity").at("fraction").get<double>(), 0.0);
  EXPECT_TRUE(bounces.at("referee").at("agrees").get<bool>());

  // E[v(T)]: jumps by -(1 + e) v- at each impact crossing T; the pathwise gradient misses that.
  const json& v = objectives.at("v").at("gradient").at("e");
  const double dv = velocity_gradient(e0);
  print_estimate(v.at("pathwise"), dv, "dE[v(T)]/de pathwise (biased)");
  expect_within(v.at("corrected"), dv, "dE[v(T)]/de corrected");
  expect_within(v.at("referee"), dv, "dE[v(T)]/de referee");
  EXPECT_GT(v.at("discontinuity").at("fraction").get<double>(), 0.0);
  EXPECT_GT(std::abs(v.at("pathwise").at("mean").get<double>() - dv),
            4.0 * v.at("pathwise").at("std_error").get<double>())
      << "the pathwise gradient of E[v(T)] is biased";

  // h(T) is continuous across an impact (h+ = h- = 0): no discontinuity, corrected = pathwise.
  const json& h = objectives.at("h").at("gradient").at("e");
  EXPECT_EQ(h.at("discontinuity").at("fraction").get<double>(), 0.0);
  EXPECT_EQ(h.at("corrected").at("mean"), h.at("pathwise").at("mean"));
  expect_within(h.at("referee"), h.at("mean").get<double>(), "dE[h(T)]/de referee against pathwise");

  // t2 = t1 (1 + 2e): the second impact exists in every sample, 1.66 s or more before T; nothing
  // about later bounces moves it. Diagnostic 0, corrected == pathwise == 2 sqrt(2 / g) E[sqrt h0].
  const json& t2 = objectives.at("t2").at("gradient").at("e");
  const double dt2 = 2.0 * std::sqrt(2.0 / g) * 2.0 / 3.0 * (std::pow(2.0, 1.5) - 1.0);
  EXPECT_EQ(t2.at("discontinuity").at("fraction").get<double>(), 0.0);
  EXPECT_EQ(t2.at("discontinuity").at("boundary_term").get<double>(), 0.0);
  EXPECT_EQ(t2.at("corrected").at("mean"), t2.at("pathwise").at("mean"));
  expect_within(t2.at("pathwise"), dt2, "dE[t2]/de pathwise = corrected");
  expect_within(t2.at("referee"), dt2, "dE[t2]/de referee");
}

// Settling at v_stop = 2 with e = 0.75: samples below h0 = 1.145 settle at their fourth impact,
// the rest at their fifth if it comes before T (h0 < 1.696), else finish with four. dE[N]/de has
// two boundary terms: the fifth impact crossing T (-7.8) and the fourth impact's speed crossing
// v_stop (+9.2). P(settled) has the first only (settling at the fourth or the fifth is the same
// status); v(T) jumps at both.
TEST(Gradients, SettlingAtVStopAgainstClosedForms) {
  const double v_stop = 2.0, e = 0.75;
  json study = ball_study(16384);
  study["options"]["v_stop"] = v_stop;
  study["parameters"]["e"] = {{"design", e}};
  study["objectives"] = json::parse(R"([{"name": "bounces", "event_count": true},
                                        {"name": "settled", "status": "settled"},
                                        {"name": "v", "final_state": "v"},
                                        {"name": "t2", "event_time": 1}])");
  const json s = run_summary(study);
  const json& objectives = s.at("objectives");
  EXPECT_NEAR(objectives.at("bounces").at("mean").get<double>(),
              settling_expectation([](const Ending& x) { return x.impacts; }, e, v_stop), 0.05);

  const struct {
    const char* name;
    std::function<double(const Ending&)> f;
  } cases[] = {{"bounces", [](const Ending& x) { return double(x.impacts); }},
               {"settled", [](const Ending& x) { return x.settled ? 1.0 : 0.0; }},
               {"v", [](const Ending& x) { return x.v; }}};
  for (const auto& c : cases) {
    const json& grad = objectives.at(c.name).at("gradient").at("e");
    const double exact = settling_gradient(c.f, e, v_stop);
    expect_within(grad.at("corrected"), exact, std::string("v_stop: dE[") + c.name + "]/de corrected");
    expect_within(grad.at("referee"), exact, std::string("v_stop: dE[") + c.name + "]/de referee");
    EXPECT_TRUE(grad.at("referee").at("agrees").get<bool>()) << c.name;
    EXPECT_GT(grad.at("discontinuity").at("fraction").get<double>(), 0.0) << c.name;
    EXPECT_GT(grad.at("discontinuity").at("speed_bandwidth").get<double>(), 0.0) << c.name;
  }
  // The settling term alone: dE[N]/de without it would be the horizon's -7.8.
  const json& bounces = objectives.at("bounces").at("gradient").at("e").at("corrected");
  EXPECT_GT(bounces.at("mean").get<double>() + 7.8, 4.0 * bounces.at("std_error").get<double>());

  // The second impact exists in every sample and no settling comes before it: no boundary.
  const json& t2 = objectives.at("t2").at("gradient").at("e");
  EXPECT_EQ(t2.at("discontinuity").at("fraction").get<double>(), 0.0);
  EXPECT_EQ(t2.at("corrected").at("mean"), t2.at("pathwise").at("mean"));
}

// The settling terms of boundary_terms on a hand-made record: a two-state system that settled at
// its third event, far from t_final.
TEST(Gradients, SettlingTermsOfOneRecord) {
  Result r(1, 2, 1, 4, true);
  r.status[0] = static_cast<int>(Status::Settled);
  r.n_events[0] = 3;
  r.t_end[0] = 0.6;
  r.qf[1] = 0.25;  // state 1 ends at 0.25, the third event's post-event state
  const double q_plus[] = {0.5, 0.75, 0.25};
  for (int c = 0; c < 3; ++c) {
    r.ev_t[c] = 0.2 * (c + 1);
    r.ev_guard[c] = 0;
    r.ev_dt[c] = 1.0;
    r.ev_q_plus[c * 2 + 1] = q_plus[c];
  }
  const double speed[] = {3.0, 2.05, 1.97}, speed_slope[] = {1.0, -4.0, 2.0};
  const sweep::Settling settling{2.0, 0.1, speed, speed_slope};
  const std::vector<int> parameters = {0};
  const double slope = 0.5, t_final = 10.0, h = 0.05;
  double z = 0.0, near = 0.0;
  auto terms = [&](const sweep::Objective& o) {
    sweep::boundary_terms(r, 0, o, parameters, &slope, t_final, h, settling, &z, &near);
  };
  const double kernel = sweep::boundary_kernel(0.05, 0.1);  // event 1's margin 2.05 - 2

  sweep::Objective count;
  count.kind = ObjectiveKind::EventCount;
  terms(count);  // event 1 settling: 2 events instead of 3, J = 1; ds/dtheta = 0.5 * -4
  EXPECT_NEAR(z, kernel * -2.0 * 1.0, 1e-12);
  EXPECT_EQ(near, 1.0);

  sweep::Objective v;
  v.kind = ObjectiveKind::FinalState;
  v.state = 1;
  terms(v);  // settling at event 1 would end at its q+ = 0.75 instead of 0.25
  EXPECT_NEAR(z, kernel * -2.0 * (0.25 - 0.75), 1e-12);

  sweep::Objective settled;
  settled.kind = ObjectiveKind::StatusIs;
  settled.status = static_cast<int>(Status::Settled);
  terms(settled);  // settled either way: no term; but event 2 (1.97) might go on
  EXPECT_EQ(z, 0.0);
  EXPECT_EQ(near, 1.0);

  sweep::Objective third;
  third.kind = ObjectiveKind::EventTime;
  third.event = 2;
  terms(third);  // event 2 exists only while events 0 and 1 go on: J = 1 for event 1
  EXPECT_NEAR(z, kernel * -2.0, 1e-12);
  third.event = 1;
  terms(third);  // event 1 exists whatever its own speed: only event 0 (margin 1, far) matters
  EXPECT_EQ(z, 0.0);
  EXPECT_EQ(near, 0.0);

  r.status[0] = static_cast<int>(Status::Finished);  // the same events, having finished at t_final
  terms(settled);                                    // settling at event 1 would make it settled: J = 0 - 1
  EXPECT_NEAR(z, kernel * -2.0 * -1.0, 1e-12);
}

// Choosing the pathwise estimator reports it; the corrected one stays beside it.
TEST(Gradients, EstimatorIsSelectablePerObjective) {
  json study = ball_study(4096);
  study["objectives"][0]["gradient"] = "pathwise";
  study["objectives"][0]["bandwidth"] = 0.01;
  study.erase("gradient_check");
  const json s = run_summary(study);
  const json& bounces = s.at("objectives").at("bounces").at("gradient").at("e");
  EXPECT_EQ(bounces.at("estimator"), "pathwise");
  EXPECT_EQ(bounces.at("mean").get<double>(), 0.0);
  EXPECT_NE(bounces.at("corrected").at("mean").get<double>(), 0.0);
  EXPECT_EQ(bounces.at("discontinuity").at("bandwidth").get<double>(), 0.01);
  EXPECT_FALSE(bounces.contains("referee"));
}

// h0 ~ N(mu, 0.2) with mu designed: the likelihood ratio (with the mean as baseline) beside the
// pathwise and the corrected estimates, each within 4 standard errors of the closed form.
TEST(Gradients, LikelihoodRatioOfADistributionsDesignAgainstClosedForms) {
  json study = ball_study(16384);
  study["parameters"]["h0"] = json::parse(R"({"dist": "normal", "mean": {"design": 1.5}, "sigma": 0.2})");
  study["parameters"]["e"] = e0;
  study["gradient_check"]["delta"] = 0.01;
  const json s = run_summary(study);
  const json& objectives = s.at("objectives");

  const json& bounces = objectives.at("bounces").at("gradient").at("h0.mean");
  const double dN = normal_count_gradient();
  EXPECT_EQ(bounces.at("pathwise").at("mean").get<double>(), 0.0);
  expect_within(bounces.at("likelihood_ratio"), dN, "dE[N]/dmu likelihood ratio");
  expect_within(bounces.at("corrected"), dN, "dE[N]/dmu corrected");
  expect_within(bounces.at("referee"), dN, "dE[N]/dmu referee");

  const json& v = objectives.at("v").at("gradient").at("h0.mean");
  const double dv = normal_gradient([](double h0) { return velocity_at_T(h0, e0); });
  print_estimate(v.at("pathwise"), dv, "dE[v(T)]/dmu pathwise (biased)");
  expect_within(v.at("likelihood_ratio"), dv, "dE[v(T)]/dmu likelihood ratio");
  expect_within(v.at("corrected"), dv, "dE[v(T)]/dmu corrected");
  expect_within(v.at("referee"), dv, "dE[v(T)]/dmu referee");
  EXPECT_GT(std::abs(v.at("pathwise").at("mean").get<double>() - dv),
            4.0 * v.at("pathwise").at("std_error").get<double>());

  // t2 = sqrt(2 h0 / g) (1 + 2e): smooth in h0; every estimator applies.
  const json& t2 = objectives.at("t2").at("gradient").at("h0.mean");
  const double dt2 = normal_gradient([](double h0) { return std::sqrt(2.0 * h0 / g) * (1.0 + 2.0 * e0); });
  EXPECT_EQ(t2.at("discontinuity").at("fraction").get<double>(), 0.0);
  expect_within(t2.at("pathwise"), dt2, "dE[t2]/dmu pathwise");
  expect_within(t2.at("likelihood_ratio"), dt2, "dE[t2]/dmu likelihood ratio");
  expect_within(t2.at("referee"), dt2, "dE[t2]/dmu referee");
}

// h0 ~ U(1, b) with the upper bound designed: the support moves, so there is no likelihood ratio;
// the pathwise gradient goes through the sample (dh0/db = u) and the corrected one adds the
// boundary term: dE[N]/db = -sum over h_n in (a, b) of (h_n - a) / (b - a)^2.
TEST(Gradients, UniformBoundHasThePathwiseAndCorrectedGradientsOnly) {
  json study = ball_study(16384);
  study["parameters"]["h0"] = json::parse(R"({"dist": "uniform", "low": 1.0, "high": {"design": 2.0}})");
  study["parameters"]["e"] = e0;
  const json s = run_summary(study);
  double dN = 0.0;
  for (int n = 1; n < 60; ++n) {
    const double h = critical_height(n, e0);
    if (h > a && h < b) dN -= (h - a) / ((b - a) * (b - a));
  }
  const json& bounces = s.at("objectives").at("bounces").at("gradient").at("h0.high");
  print_estimate(bounces.at("pathwise"), dN, "dE[N]/db pathwise (biased)");
  EXPECT_FALSE(bounces.contains("likelihood_ratio"));
  expect_within(bounces.at("corrected"), dN, "dE[N]/db corrected");
  expect_within(bounces.at("referee"), dN, "dE[N]/db referee");
  // E[t2] = c (1 + 2e) E[sqrt h0]: d/db of (2/3)(b^1.5 - a^1.5) / (b - a).
  const double c = std::sqrt(2.0 / g) * (1.0 + 2.0 * e0);
  const double dt2 =
      c * (std::sqrt(b) / (b - a) - 2.0 / 3.0 * (std::pow(b, 1.5) - std::pow(a, 1.5)) / ((b - a) * (b - a)));
  expect_within(s.at("objectives").at("t2").at("gradient").at("h0.high").at("pathwise"), dt2, "dE[t2]/db pathwise");
}

TEST(Gradients, BadGradientKeysNameTheKey) {
  const AnyModel model = configure_builtin_model("bouncing_ball", json::object());
  auto expect_bad = [&](const json& study, const std::string& key) {
    try {
      sweep::parse_study(study, model.info());
      ADD_FAILURE() << "accepted a study with a bad " << key;
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  json s = ball_study(100);
  s["objectives"][0]["gradient"] = "exact";
  expect_bad(s, "objectives[0].gradient");
  s = ball_study(100);
  s["objectives"][1]["bandwidth"] = -0.1;
  expect_bad(s, "objectives[1].bandwidth");
  s = ball_study(100);
  s["gradient_check"]["delta"] = 0.0;
  expect_bad(s, "gradient_check.delta");
  s = ball_study(100);
  s["gradient_check"]["step"] = 0.1;
  expect_bad(s, "gradient_check");
  s = ball_study(100);
  s["parameters"]["e"] = 0.8;  // nothing left to differentiate by
  expect_bad(s, "gradient_check");
  s = ball_study(100);
  s["parameters"]["h0"] = json::parse(R"({"dist": "normal", "mean": {"desing": 1.5}, "sigma": 0.2})");
  expect_bad(s, "parameters.h0.mean");
  s = ball_study(100);
  s["parameters"]["h0"] = json::parse(R"({"dist": "normal", "mean": 1.5, "sigma": {"design": 0.001}})");
  expect_bad(s, "gradient_check.delta");  // sigma - delta < 0
}

// boundary_terms on one hand-made record: three events of a two-state system, t_final = 1.
TEST(Gradients, BoundaryTermsOfOneRecord) {
  Result r(1, 2, 1, 4, true);
  r.status[0] = 0;
  r.n_events[0] = 3;
  r.t_end[0] = 1.0;
  const double times[] = {0.30, 0.31, 0.99}, dts[] = {0.5, -0.2, 2.0};
  for (int c = 0; c < 3; ++c) {
    r.ev_t[c] = times[c];
    r.ev_guard[c] = c == 1 ? 1 : 0;
    r.ev_dt[c] = dts[c];
    r.ev_q[(c * 2 + 1)] = -1.0;  // state 1 jumps from -1 to 0.5; state 0 is continuous
    r.ev_q_plus[(c * 2 + 1)] = 0.5;
  }
  const std::vector<int> parameters = {0};
  const double slope = 3.0, h = 0.05;
  double z = 0.0, near = 0.0;
  auto terms = [&](const sweep::Objective& o) {
    sweep::boundary_terms(r, 0, o, parameters, &slope, 1.0, h, sweep::Settling{}, &z, &near);
  };

  sweep::Objective count;
  count.kind = ObjectiveKind::EventCount;
  terms(count);  // only event 2 lies within h of t_final: K_h(0.01) (-3 * 2.0) * 1
  EXPECT_NEAR(z, sweep::boundary_kernel(0.01, h) * -6.0, 1e-12);
  EXPECT_EQ(near, 1.0);

  sweep::Objective v;
  v.kind = ObjectiveKind::FinalState;
  v.state = 1;
  terms(v);  // jump q+ - q- = 1.5
  EXPECT_NEAR(z, sweep::boundary_kernel(0.01, h) * -6.0 * 1.5, 1e-12);
  v.state = 0;
  terms(v);  // continuous: no discontinuity
  EXPECT_EQ(z, 0.0);
  EXPECT_EQ(near, 0.0);

  sweep::Objective first;
  first.kind = ObjectiveKind::EventTime;
  first.event = 0;
  terms(first);  // far from t_final, but event 1 (another guard) is 0.01 later: they may swap
  EXPECT_EQ(z, 0.0);
  EXPECT_EQ(near, 1.0);
  first.event = 2;
  terms(first);  // event 2 ceases to exist past t_final: J = 1
  EXPECT_NEAR(z, sweep::boundary_kernel(0.01, h) * -6.0, 1e-12);
  first.guard = 0;
  first.event = 0;
  terms(first);  // guard 0's first event: guard 1's events cannot change which one it is
  EXPECT_EQ(z, 0.0);
  EXPECT_EQ(near, 0.0);
  first.event = 1;
  terms(first);  // guard 0's second event is event 2, at the horizon
  EXPECT_NEAR(z, sweep::boundary_kernel(0.01, h) * -6.0, 1e-12);
  first.event = 2;
  terms(first);  // guard 0 has no third event
  EXPECT_EQ(z, 0.0);
  first.guard = -1;

  r.ev_flags[2] = EventGrazing;  // grazing at the horizon: its time has no derivative, no term
  terms(count);
  EXPECT_EQ(z, 0.0);
  EXPECT_EQ(near, 1.0);
  r.ev_flags[2] = 0;
  r.ev_flags[0] = EventGrazing;  // a grazing event anywhere before the horizon moves a count
  r.ev_t[2] = 0.5;
  terms(count);
  EXPECT_EQ(z, 0.0);
  EXPECT_EQ(near, 1.0);
}
