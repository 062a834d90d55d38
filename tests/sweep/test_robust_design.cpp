// Robust design against the bouncing ball's closed-form optimum: the start height h0 whose
// velocity just before the second impact, v = -e sqrt(2 g h0), best matches -V under an uncertain
// restitution e. Also: bounds respected, the sd term's gradient against finite differences under
// common random numbers, the failed and stalled exits, bad "optimize" blocks named by key, and
// saltation sweep --optimize.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "run_cli.hpp"
#include "saltation/errors.hpp"
#include "saltation/registry.hpp"
#include "saltation/sweep/robust_design.hpp"

using namespace saltation;
using nlohmann::json;

namespace {

const double g = 9.81;
const double e_low = 0.6, e_high = 0.8;  // e ~ U(e_low, e_high)
const double V = 5.0;                    // target speed before the second impact

// L = (v-_1 + V)^2 = (V - c e sqrt(h0))^2 with c = sqrt(2 g).
json ball_study(std::uint64_t samples) {
  json s = json::parse(R"({"model": "bouncing_ball", "config": {"g": 9.81},
    "options": {"t_final": 3.0, "dt": 0.001, "event_capacity": 16},
    "parameters": {"h0": {"design": 1.0}, "v0": 0.0, "e": {"dist": "uniform", "low": 0.6, "high": 0.8}},
    "objectives": [{"name": "miss", "landing": {"event": 1, "state": "v", "target": -5.0}},
                   {"name": "bounces", "event_count": true}],
    "optimize": {"objective": "miss", "bounds": {"h0": [0.5, 4.0]}, "max_iterations": 30},
    "seed": 11})");
  s["samples"] = samples;
  return s;
}

struct Problem {
  AnyModel model;
  sweep::Study study;
  sweep::RobustDesignSettings settings;
};

Problem problem(const json& s) {
  const io::ModelChoice choice = io::parse_model_choice(s);
  AnyModel model = configure_builtin_model(choice.name, choice.config);
  sweep::Study study = sweep::parse_study(s, model.info());
  sweep::RobustDesignSettings settings = sweep::parse_robust_design(s, study, model.info());
  return {std::move(model), std::move(study), settings};
}

sweep::RobustDesignResult optimize(const Problem& p) {
  sweep::StudyRun run;
  run.backend = Backend::Cpu;
  return sweep::optimize_design(p.model, p.study, p.settings, run);
}

// E[e^k] for e ~ U(e_low, e_high).
double e_moment(int k) { return (std::pow(e_high, k + 1) - std::pow(e_low, k + 1)) / ((k + 1) * (e_high - e_low)); }

}  // namespace

TEST(RobustDesign, BallConvergesToTheClosedFormOptimum) {
  // E[(V - c e s)^2] is minimised at s = sqrt(h0) = V E[e] / (c E[e^2]). Under common random
  // numbers the optimiser finds the optimum of the sample means, s_n = V mean(e) / (c mean(e^2)),
  // whose relative error is, by the delta method, sd(X) / sqrt(n) with X = e / E[e] - e^2 / E[e^2].
  const std::uint64_t n = 4000;
  const Problem p = problem(ball_study(n));
  const sweep::RobustDesignResult r = optimize(p);
  EXPECT_EQ(r.outcome, sweep::DesignOutcome::Converged) << r.message;
  ASSERT_EQ(r.design_names, std::vector<std::string>{"h0"});
  const double c = std::sqrt(2 * g), m1 = e_moment(1), m2 = e_moment(2), m3 = e_moment(3), m4 = e_moment(4);
  const double s_opt = V * m1 / (c * m2);
  const double sd_X = std::sqrt(m2 / (m1 * m1) - 2 * m3 / (m1 * m2) + m4 / (m2 * m2));
  const double s_found = std::sqrt(r.history.back().point.design[0]);
  EXPECT_NEAR(s_found, s_opt, 4 * s_opt * sd_X / std::sqrt(double(n)));
  EXPECT_GT(r.history.size(), 2u);
  // The start is iterate 0, at the study's design value; F decreases along the accepted iterates.
  EXPECT_EQ(r.history.front().point.design[0], 1.0);
  for (std::size_t k = 1; k < r.history.size(); ++k) {
    EXPECT_EQ(r.history[k].iteration, int(k));
    EXPECT_LE(r.history[k].point.value, r.history[k - 1].point.value);
  }
  const sweep::DesignPoint& last = r.history.back().point;
  EXPECT_LE(last.projected_gradient_norm, p.settings.gradient_tolerance + 1e-6 * std::abs(last.design[0]));
  EXPECT_EQ(last.n_defined, n);
  EXPECT_EQ(last.n_undefined, 0u);
  // The final sweep is the one at the final design, complete and summarised.
  const json summary = sweep::summary_json(r.final_study);
  EXPECT_EQ(summary.at("parameters").at("h0").at("design").get<double>(), last.design[0]);
  EXPECT_DOUBLE_EQ(summary.at("objectives").at("miss").at("mean").get<double>(), last.mean);
  const json history = sweep::optimization_json(r, p.settings, p.study);
  EXPECT_EQ(history.at("outcome"), "converged");
  EXPECT_EQ(history.at("history").size(), r.history.size());
  EXPECT_EQ(history.at("settings").at("bounds").at("h0"), json::array({0.5, 4.0}));
}

// The mean of h0 ~ N(mu, 0.05) designed, e = 0.7 fixed: E[(V - c e sqrt(h0))^2] is least where
// dE[sqrt h0]/dmu = c e / (2 V), i.e. E[h0^-1/2] = c e / V; to second order in sigma,
// 1/sqrt(mu) + (3/8) sigma^2 mu^-5/2 = c e / V. The optimiser goes through the sample
// (dh0/dmu = 1); the bounce count there, discontinuous in mu, takes the likelihood ratio.
TEST(RobustDesign, DesignOfADistributionsMean) {
  json s = ball_study(2000);
  const double e = 0.7, sigma = 0.05, c = std::sqrt(2 * g);
  s["parameters"]["h0"] = json{{"dist", "normal"}, {"mean", {{"design", 2.0}}}, {"sigma", sigma}};
  s["parameters"]["e"] = e;
  s["optimize"]["bounds"] = json{{"h0.mean", json::array({1.0, 4.0})}};
  const sweep::RobustDesignResult r = optimize(problem(s));
  EXPECT_EQ(r.outcome, sweep::DesignOutcome::Converged) << r.message;
  ASSERT_EQ(r.design_names, std::vector<std::string>{"h0.mean"});
  double mu = 2.0;  // Newton on 1/sqrt(mu) + (3/8) sigma^2 mu^-5/2 - c e / V
  for (int k = 0; k < 50; ++k) {
    const double f = 1 / std::sqrt(mu) + 0.375 * sigma * sigma * std::pow(mu, -2.5) - c * e / V;
    const double df = -0.5 * std::pow(mu, -1.5) - 0.9375 * sigma * sigma * std::pow(mu, -3.5);
    mu -= f / df;
  }
  EXPECT_NEAR(r.history.back().point.design[0], mu, 5e-3);
  EXPECT_EQ(r.history.back().point.estimators, std::vector<std::string>{"corrected"});

  s["optimize"]["objective"] = "bounces";
  s["optimize"]["max_iterations"] = 1;
  s["parameters"]["h0"]["mean"]["design"] = 2.6;  // the fourth impact near t_final
  const Problem count = problem(s);
  const sweep::RobustDesignResult rc = optimize(count);
  EXPECT_GT(rc.history.front().point.discontinuity_fraction, 0.0);
  EXPECT_EQ(rc.history.front().point.estimators, std::vector<std::string>{"likelihood_ratio"});
  const json history = sweep::optimization_json(rc, count.settings, count.study);
  EXPECT_EQ(history.at("history").at(0).at("gradient_estimator").at("h0.mean"), "likelihood_ratio");
}

TEST(RobustDesign, BoundsAreRespected) {
  // The optimum h0 = 2.57 lies past the upper bound 1.5: the answer is the bound.
  json s = ball_study(1000);
  s["optimize"]["bounds"]["h0"] = json::array({0.5, 1.5});
  const Problem p = problem(s);
  const sweep::RobustDesignResult r = optimize(p);
  EXPECT_EQ(r.outcome, sweep::DesignOutcome::Converged) << r.message;
  for (const sweep::DesignIterate& it : r.history) {
    EXPECT_GE(it.point.design[0], 0.5);
    EXPECT_LE(it.point.design[0], 1.5);
  }
  EXPECT_EQ(r.history.back().point.design[0], 1.5);
  EXPECT_LT(r.history.back().point.gradient[0], 0.0) << "F still decreases past the bound";
  EXPECT_EQ(r.history.back().point.projected_gradient_norm, 0.0);
}

TEST(RobustDesign, GradientOfTheSpreadMatchesFiniteDifferences) {
  // F = E[L] + lambda sd[L]; dF/dh0 = E[dL/dh0] + lambda Cov(L, dL/dh0) / sd[L]. Under common random
  // numbers F is a smooth function of h0 here (the second impact exists for every sample), so a
  // central difference of F from two sweeps checks the covariance term.
  json s = ball_study(2000);
  s["optimize"]["lambda"] = 2.0;
  s["optimize"]["max_iterations"] = 1;
  const Problem p = problem(s);
  const sweep::RobustDesignResult r = optimize(p);
  const sweep::DesignPoint& start = r.history.front().point;
  ASSERT_EQ(start.design[0], 1.0);
  auto F = [&](double h0, double lambda) {
    sweep::Study at = p.study;
    at.parameters[0] = sweep::Distribution::design(h0);
    sweep::StudyRun run;
    run.backend = Backend::Cpu;
    const sweep::StudyResult result = sweep::run_study(p.model, at, run);
    const sweep::OutputSummary& o = result.partial.total().objectives()[0];
    return o.moments().mean(0) + lambda * std::sqrt(o.moments().variance(0));
  };
  const double h = 1e-4;
  const double fd = (F(1.0 + h, 2.0) - F(1.0 - h, 2.0)) / (2 * h);
  EXPECT_NEAR(start.gradient[0], fd, 1e-5 * std::abs(fd));
  EXPECT_NEAR(start.value, F(1.0, 2.0), 1e-12 * std::abs(start.value));
  // The sd term matters here (about 9 % of the gradient): the gradient of E[L] alone is far outside
  // that tolerance.
  const double fd_mean = (F(1.0 + h, 0.0) - F(1.0 - h, 0.0)) / (2 * h);
  EXPECT_GT(std::abs(fd - fd_mean), 1000 * 1e-5 * std::abs(fd));
  EXPECT_EQ(r.outcome, sweep::DesignOutcome::MaxIterations);
  EXPECT_EQ(r.history.size(), 2u);
}

TEST(RobustDesign, ObjectiveUndefinedAtATrialDesignFails) {
  // With t_final = 2 s the second impact (t2 = sqrt(2 h0 / g)(1 + 2e)) happens before the end only for
  // h0 below about 2.9 to 4: an optimum at h0 = 10.5 (V = 10) drives the search where L is
  // undefined for every sample. The result is the last accepted design, not an exception.
  json s = ball_study(500);
  s["options"]["t_final"] = 2.0;
  s["objectives"][0]["landing"]["target"] = -10.0;
  s["optimize"]["bounds"]["h0"] = json::array({0.5, 20.0});
  const Problem p = problem(s);
  const sweep::RobustDesignResult r = optimize(p);
  EXPECT_EQ(r.outcome, sweep::DesignOutcome::Failed);
  EXPECT_NE(r.message.find("fewer than two samples"), std::string::npos) << r.message;
  EXPECT_GE(r.history.back().point.n_defined, 2u);
  EXPECT_GT(r.evaluations, int(r.history.size()));
  EXPECT_EQ(sweep::summary_json(r.final_study).at("parameters").at("h0").at("design").get<double>(),
            r.history.back().point.design[0]);
}

TEST(RobustDesign, LineSearchFailureIsStalledNotAnError) {
  // Zero tolerances: L-BFGS-B runs until the line search cannot decrease F any more (rounding), and
  // reports that as stalled with the last accepted iterate.
  json s = ball_study(500);
  s["optimize"]["gradient_tolerance"] = 0.0;
  s["optimize"]["relative_gradient_tolerance"] = 0.0;
  s["optimize"]["max_iterations"] = 200;
  const Problem p = problem(s);
  const sweep::RobustDesignResult r = optimize(p);
  EXPECT_EQ(r.outcome, sweep::DesignOutcome::Stalled);
  EXPECT_NE(r.message.find("line search"), std::string::npos) << r.message;
  EXPECT_LT(r.history.back().point.projected_gradient_norm, 1e-6);
}

TEST(RobustDesign, BadOptimizeBlocksNameTheKey) {
  auto expect_bad = [](const json& study, const std::string& key) {
    try {
      problem(study);
      ADD_FAILURE() << "accepted a study with a bad " << key;
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  json s = ball_study(100);
  s.erase("optimize");
  expect_bad(s, "optimize");
  s = ball_study(100);
  s["optimize"]["lamda"] = 1.0;
  expect_bad(s, "optimize.lamda");
  s = ball_study(100);
  s["optimize"]["objective"] = "mis";
  expect_bad(s, "optimize.objective");
  s = ball_study(100);
  s["optimize"]["objective"] = "bounces";  // a count with its pathwise gradient (0): nothing to descend
  for (auto& o : s["objectives"])
    if (o["name"] == "bounces") o["gradient"] = "pathwise";
  expect_bad(s, "optimize.objective");
  s = ball_study(100);
  s["optimize"]["lambda"] = -1.0;
  expect_bad(s, "optimize.lambda");
  s = ball_study(100);
  s["optimize"]["bounds"]["e"] = json::array({0.5, 0.9});
  expect_bad(s, "optimize.bounds.e");
  s = ball_study(100);
  s["optimize"]["bounds"]["h0"] = json::array({2.0, 1.0});
  expect_bad(s, "optimize.bounds.h0");
  s = ball_study(100);
  s["optimize"]["bounds"]["h0"] = json::array({2.0, 3.0});
  expect_bad(s, "optimize.bounds.h0");  // the design value 1 lies outside
  s = ball_study(100);
  s["optimize"]["bounds"]["h0"] = json::array({0.5});
  expect_bad(s, "optimize.bounds.h0");
  s = ball_study(100);
  s["optimize"]["max_iterations"] = 0;
  expect_bad(s, "optimize.max_iterations");
  s = ball_study(100);
  s["parameters"]["h0"] = 1.0;
  expect_bad(s, "parameters");  // nothing to design
}

using saltation::testing::run_cli;

TEST(RobustDesignCli, OptimizeWritesTheHistoryAndTheFinalSummary) {
  ASSERT_NE(std::getenv("SALTATION_CLI"), nullptr) << "ctest sets SALTATION_CLI";
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("saltation_optimize_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "study.json") << ball_study(1000).dump();
  const std::string study = "'" + (dir / "study.json").string() + "'";
  ASSERT_EQ(run_cli("sweep " + study + " --backend cpu --optimize --out '" + (dir / "out").string() + "'"), 0);
  std::ifstream o(dir / "out" / "optimization.json");
  const json opt = json::parse(o);
  EXPECT_EQ(opt.at("outcome"), "converged");
  EXPECT_EQ(opt.at("settings").at("objective"), "miss");
  const json& final_design = opt.at("final");
  for (const char* key :
       {"design", "mean", "sd", "gradient", "projected_gradient_norm", "gradient_estimator", "discontinuity_fraction"})
    EXPECT_TRUE(final_design.contains(key)) << key;
  std::ifstream f(dir / "out" / "summary.json");
  const json summary = json::parse(f);
  EXPECT_EQ(summary.at("parameters").at("h0").at("design"), final_design.at("design").at("h0"));
  EXPECT_TRUE(summary.contains("provenance"));
  EXPECT_EQ(run_cli("sweep " + study + " --backend cpu --optimize --shard 0/2"), 2);
  json without = ball_study(100);
  without.erase("optimize");
  std::ofstream(dir / "plain.json") << without.dump();
  EXPECT_EQ(run_cli("sweep '" + (dir / "plain.json").string() + "' --backend cpu --optimize --out '" +
                    (dir / "plain").string() + "'"),
            2);
  fs::remove_all(dir);
}
