// The model files of examples/models/, loaded as a user loads them (a request's "model": {"file":
// ...}): each against the hand-written or built-in model it restates, closed forms and finite
// differences; constants from "config" without recompiling; a study and `model check` through the CLI.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../../examples/impact_pendulum/impact_pendulum.hpp"
#include "../expect_bitwise.hpp"
#include "../simd_choice.hpp"
#include "saltation/cpu_lanes.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/thermostat.hpp"
#include "saltation/registry.hpp"
#include "saltation/solve.hpp"
#include "saltation/testing/check_sensitivities.hpp"
#include "saltation/user_model/user_model.hpp"

using namespace saltation;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr double kPi = 3.141592653589793;

// One scratch folder per test process, removed at the end. The model cache (SALTATION_CACHE_DIR,
// which the CLI runs inherit) is the build tree's, shared by the test processes so that each model
// is compiled once per build (and concurrent builds of one model are exercised); never $HOME.
fs::path g_scratch;

class ScratchFolder : public ::testing::Environment {
 public:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "saltation-user-models-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << "cannot create a scratch folder";
    g_scratch = pattern;
    ASSERT_EQ(setenv("SALTATION_CACHE_DIR", SALTATION_TEST_MODEL_CACHE, 1), 0);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(g_scratch, ec);
  }
};
[[maybe_unused]] ::testing::Environment* const scratch_folder = ::testing::AddGlobalTestEnvironment(new ScratchFolder);

std::string source_path(const std::string& relative) { return std::string(SALTATION_TEST_SOURCE_DIR) + "/" + relative; }
std::string model_file(const std::string& name) { return source_path("examples/models/" + name + ".json"); }

io::ModelChoice choice_of(const std::string& name, const json& config = nullptr) {
  json request = {{"model", {{"file", model_file(name)}}}};
  if (!config.is_null()) request["config"] = config;
  return io::parse_model_choice(request, "");
}
AnyModel load(const std::string& name, const json& config = nullptr) {
  return configure_model(choice_of(name, config));
}

// |got - want| <= tol max(1, |want|): relative for large values, absolute near zero.
::testing::AssertionResult close(double got, double want, double tol) {
  if (std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want))) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want << " (difference " << got - want
                                       << ", tolerance " << tol << " relative)";
}

// Every record two runs of the same batch share: statuses, event counts and guards, event times,
// final and pre-event states and (with sensitivities) all their derivatives.
void expect_same_results(const Result& a, const Result& b, double time_tol, double sens_tol) {
  ASSERT_EQ(a.n, b.n);
  ASSERT_EQ(a.P, b.P);
  for (std::size_t i = 0; i < a.n; ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    ASSERT_EQ(a.status_of(i), b.status_of(i));
    ASSERT_EQ(a.n_events[i], b.n_events[i]);
    for (int k = 0; k < a.N; ++k) EXPECT_TRUE(close(a.qf_of(i, k), b.qf_of(i, k), time_tol)) << "qf " << k;
    for (int c = 0; c < a.n_events[i]; ++c) {
      EXPECT_EQ(a.ev_guard[c * a.n + i], b.ev_guard[c * b.n + i]) << "event " << c;
      EXPECT_TRUE(close(a.event_time(i, c), b.event_time(i, c), time_tol)) << "event " << c;
      for (int k = 0; k < a.N; ++k)
        EXPECT_TRUE(close(a.event_q(i, c, k), b.event_q(i, c, k), time_tol)) << "event " << c << " q " << k;
    }
    if (!a.sensitivities || !b.sensitivities) continue;
    for (int p = 0; p < a.P; ++p) {
      for (int k = 0; k < a.N; ++k)
        EXPECT_TRUE(close(a.dqf_of(i, k, p), b.dqf_of(i, k, p), sens_tol)) << "dqf " << k << " / d " << p;
      for (int c = 0; c < a.n_events[i]; ++c) {
        EXPECT_TRUE(close(a.event_dt(i, c, p), b.event_dt(i, c, p), sens_tol)) << "event " << c << " dt / d " << p;
        for (int k = 0; k < a.N; ++k)
          EXPECT_TRUE(close(a.event_dq(i, c, k, p), b.event_dq(i, c, k, p), sens_tol))
              << "event " << c << " dq " << k << " / d " << p;
      }
    }
  }
}

// A uniform draw from [low, high) whose bits the standard fixes (mt19937_64's output is specified;
// uniform_real_distribution's is not).
double uniform(std::mt19937_64& rng, double low, double high) {
  return low + (high - low) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

Options run_options(double t_final, bool sensitivities) {
  Options o;
  o.t_final = t_final;
  o.dt = 1e-3;
  o.event_capacity = 32;
  o.sensitivities = sensitivities;
  return o;
}

// The CLI (SALTATION_CLI, which ctest sets) run with `args`: its exit code and its output.
struct CliRun {
  int exit_code = -1;
  std::string output;
};
CliRun run_cli(const std::string& args) {
  CliRun run;
  const char* cli = std::getenv("SALTATION_CLI");
  if (!cli) return run;
  FILE* pipe = popen(("'" + std::string(cli) + "' " + args + " 2>&1").c_str(), "r");
  if (!pipe) return run;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) run.output += buffer;
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace

// The core is the same; the file's model has analytic event partials where the hand-written one
// differentiates with dual numbers, so the two agree to rounding, not bitwise.
TEST(UserModelFile, ImpactPendulumMatchesTheHandWrittenModel) {
  std::mt19937_64 rng(2024);
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 20; ++i) {
    const double wall = uniform(rng, 0.2, 0.6);
    rows.push_back({uniform(rng, -0.5, wall - 0.1), uniform(rng, 1.5, 3.0), uniform(rng, 0.5, 2.0),
                    i % 4 == 0 ? 0.0 : uniform(rng, 0.0, 0.3), uniform(rng, 0.3, 0.95), wall});
  }
  const Batch batch = Batch::from_rows(rows, pendulum::ImpactPendulum::P);
  const Options options = run_options(4.0, true);
  const Result want = saltation::solve(pendulum::ImpactPendulum{}, batch, options, Backend::Cpu);
  const Result got = load("impact_pendulum").solve(batch, options, Backend::Cpu);
  for (std::size_t i = 0; i < batch.n; ++i) ASSERT_GE(want.n_events[i], 1) << "row " << i << " never hits the wall";
  expect_same_results(got, want, 1e-12, 1e-12);
}

TEST(UserModelFile, BouncingBallEventTimesFollowTheClosedForm) {
  const double g = 9.81, t_final = 2.0;
  const std::vector<std::vector<double>> rows = {{1.0, 0.0, 0.7}, {0.5, 2.0, 0.85}, {1.5, -1.0, 0.7}, {0.8, 1.0, 0.75}};
  const Batch batch = Batch::from_rows(rows, 3);
  const Result r = load("bouncing_ball").solve(batch, run_options(t_final, true), Backend::Cpu);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    const double h0 = rows[i][0], v0 = rows[i][1], e = rows[i][2];
    const double v1 = std::sqrt(v0 * v0 + 2.0 * g * h0);  // the speed at the first impact
    std::vector<double> times = {(v0 + v1) / g};
    while (times.back() + 2.0 * std::pow(e, times.size()) * v1 / g < t_final)
      times.push_back(times.back() + 2.0 * std::pow(e, times.size()) * v1 / g);
    ASSERT_GE(times.size(), 3u);
    ASSERT_EQ(r.n_events[i], static_cast<int>(times.size()));
    for (std::size_t c = 0; c < times.size(); ++c)
      EXPECT_NEAR(r.event_time(i, static_cast<int>(c)), times[c], 1e-9) << "impact " << c;
    // t1 = (v0 + v1) / g with v1 = sqrt(v0^2 + 2 g h0); t2 = t1 + 2 e v1 / g.
    EXPECT_NEAR(r.event_dt(i, 0, 0), 1.0 / v1, 1e-6) << "d t1 / d h0";
    EXPECT_NEAR(r.event_dt(i, 0, 1), (1.0 + v0 / v1) / g, 1e-6) << "d t1 / d v0";
    EXPECT_NEAR(r.event_dt(i, 1, 2), 2.0 * v1 / g, 1e-6) << "d t2 / d e";
  }
}

TEST(UserModelFile, BouncingBallMatchesTheBuiltInModel) {
  std::mt19937_64 rng(7);
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 16; ++i)
    rows.push_back({uniform(rng, 0.3, 2.0), uniform(rng, -2.0, 3.0), uniform(rng, 0.6, 0.9)});
  const Batch batch = Batch::from_rows(rows, BouncingBall::P);
  const Options options = run_options(2.5, true);
  const Result want = saltation::solve(BouncingBall{}, batch, options, Backend::Cpu);
  const Result got = load("bouncing_ball").solve(batch, options, Backend::Cpu);
  expect_same_results(got, want, 1e-12, 1e-12);
}

// Rows start inside the band [T_low, T_high]: the built-in thermostat switches at t = 0 from a
// start past a guard (jump_at_start), a model file does not.
std::vector<std::vector<double>> thermostat_rows() {
  std::mt19937_64 rng(3);
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 12; ++i) {
    const double low = uniform(rng, 17.0, 19.0), high = low + uniform(rng, 1.0, 4.0);
    const double env = uniform(rng, 5.0, 15.0), heat = uniform(rng, 15.0, 30.0);  // T_env + Q above T_high
    rows.push_back({uniform(rng, low + 0.1, high - 0.1), env, uniform(rng, 1.0, 4.0), heat + high - env, low, high});
  }
  return rows;
}

TEST(UserModelFile, ThermostatMatchesTheBuiltInModel) {
  const Batch batch = Batch::from_rows(thermostat_rows(), Thermostat::P);
  const Options options = run_options(10.0, true);
  const Result want = saltation::solve(Thermostat{}, batch, options, Backend::Cpu);
  const Result got = load("thermostat").solve(batch, options, Backend::Cpu);
  for (std::size_t i = 0; i < batch.n; ++i) ASSERT_GE(want.n_events[i], 3) << "row " << i;
  expect_same_results(got, want, 1e-12, 1e-10);
}

// Each mode relaxes to its target as T(t) = T_target + (T0 - T_target) exp(-t / tau): on towards
// T_env + Q, off towards T_env.
TEST(UserModelFile, ThermostatSwitchesWhereTheLinearOdeSays) {
  const std::vector<std::vector<double>> rows = thermostat_rows();
  Options adaptive = run_options(10.0, false);
  adaptive.method = Method::Dopri5;
  adaptive.rtol = 1e-12;
  adaptive.atol = 1e-12;
  for (const Options& o : {run_options(10.0, false), adaptive}) {
    const Result r = load("thermostat").solve(Batch::from_rows(rows, 6), o, Backend::Cpu);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      SCOPED_TRACE("row " + std::to_string(i) + ", method " + method_name(o.method));
      const double T0 = rows[i][0], env = rows[i][1], tau = rows[i][2], on = env + rows[i][3];
      const double low = rows[i][4], high = rows[i][5];
      const double heating = tau * std::log((on - low) / (on - high)),
                   cooling = tau * std::log((high - env) / (low - env));
      ASSERT_GE(r.n_events[i], 3);
      double t = tau * std::log((on - T0) / (on - high));  // from T0 up to T_high
      for (int c = 0; c < r.n_events[i]; ++c) {
        EXPECT_NEAR(r.event_time(i, c), t, 1e-9) << "switch " << c;
        EXPECT_EQ(r.ev_guard[c * r.n + i], c % 2) << "too_hot and too_cold alternate";
        t += c % 2 == 0 ? cooling : heating;
      }
    }
  }
}

// Flight y = y0 + v0 t - g t^2 / 2 down to the leg length L0; in stance z = y - L0 + g / w^2
// (w = sqrt(k)) is a harmonic oscillator from z(0) = g / w^2, z'(0) = v_td < 0, which lifts off
// where z is back at g / w^2 rising, at the speed it landed with.
TEST(UserModelFile, HopperTouchdownStanceAndLiftoffFollowTheClosedForm) {
  const double g = 9.81;
  const std::vector<std::vector<double>> rows = {// y0, v0, k, L0, e
                                                 {1.5, 0.5, 100.0, 1.0, 0.5},
                                                 {1.2, -0.3, 150.0, 1.0, 0.8},
                                                 {2.0, 1.0, 80.0, 1.2, 0.0},
                                                 {1.1, 0.0, 200.0, 0.9, 1.0}};
  const Result r = load("hopper").solve(Batch::from_rows(rows, 5), run_options(2.0, true), Backend::Cpu);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    const double y0 = rows[i][0], v0 = rows[i][1], w = std::sqrt(rows[i][2]), L0 = rows[i][3];
    const double s = std::sqrt(v0 * v0 + 2.0 * g * (y0 - L0));
    const double touchdown = (v0 + s) / g, v_td = -s;
    const double stance = (2.0 * kPi + 2.0 * std::atan2(v_td / w, g / (w * w))) / w;
    ASSERT_GE(r.n_events[i], 3);
    EXPECT_EQ(r.ev_guard[0 * r.n + i], 0) << "touchdown";
    EXPECT_EQ(r.ev_guard[1 * r.n + i], 1) << "liftoff";
    EXPECT_EQ(r.ev_guard[2 * r.n + i], 0) << "touchdown again";
    EXPECT_NEAR(r.event_time(i, 0), touchdown, 1e-9);
    EXPECT_NEAR(r.event_q(i, 0, 1), v_td, 1e-9);
    EXPECT_NEAR(r.event_time(i, 1) - r.event_time(i, 0), stance, 1e-9);
    EXPECT_NEAR(r.event_q(i, 1, 1), -v_td, 1e-9) << "the liftoff velocity";
    EXPECT_NEAR(r.event_time(i, 2) - r.event_time(i, 1), 2.0 * s / g, 1e-9) << "the flight after liftoff";
    EXPECT_NEAR(r.event_dt(i, 0, 0), 1.0 / s, 1e-6) << "d t_td / d y0";
    EXPECT_NEAR(r.event_dt(i, 0, 1), (1.0 + v0 / s) / g, 1e-6) << "d t_td / d v0";
  }
}

TEST(UserModelFile, HopperSensitivitiesAgreeWithFiniteDifferences) {
  const AnyModel model = load("hopper");
  // Two events (touchdown near 0.37, liftoff near 0.75) well inside the horizon; the bottom never fires.
  const saltation::testing::SensitivityCheck check =
      saltation::testing::check_sensitivities(model, {1.5, 0.5, 100.0, 1.0, 0.5}, run_options(1.0, true));
  EXPECT_EQ(check.events, 2);
  EXPECT_TRUE(check.ok(1e-6)) << check.summary();
}

// A model file runs its free flight in the CPU's SIMD lanes (compiled into its plugin for this CPU's vector target):
// records and observations bitwise those of the scalar driver (SALTATION_SIMD=0), by RK4 and by dopri5, forward and
// with sensitivities, with probes 0 and 3, over rows that bounce, settle, chatter, overflow and fall outside the
// domain. The ball and the hopper are affine (their tangents from step matrices); the Duffing oscillator (x^3, cos),
// the pendulum with drag (sin, abs) and the ball in air (exp, log, sin, atan2) are not (their tangents on dual numbers
// of lane vectors).
TEST(UserModelFile, SimdLanesMatchTheScalarDriverBitwise) {
  {
    saltation::testing::SimdChoice best("best");
    if (cpu::lane_target().width == 0) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512";
  }
  std::mt19937_64 rng(11);
  std::vector<std::vector<double>> ball_rows, hopper_rows, duffing_rows, pendulum_rows, air_rows;
  for (int i = 0; i < 37; ++i) {
    std::vector<double> ball = {uniform(rng, 0.3, 2.0), uniform(rng, -3.0, 3.0), uniform(rng, 0.4, 0.95)};
    std::vector<double> hopper = {uniform(rng, 1.05, 2.0), uniform(rng, -1.0, 1.0), uniform(rng, 60.0, 200.0),
                                  uniform(rng, 0.8, 1.0), uniform(rng, 0.0, 1.0)};
    // x0, v0, delta, alpha, beta, gamma, omega, e; phi0, omega0, L, k, e
    std::vector<double> duffing = {uniform(rng, 0.0, 0.9), uniform(rng, -0.5, 0.5), uniform(rng, 0.05, 0.2),
                                   uniform(rng, 0.5, 1.5), uniform(rng, 0.5, 1.5),  uniform(rng, 0.8, 2.5),
                                   uniform(rng, 1.0, 1.4), uniform(rng, 0.6, 0.9)};
    std::vector<double> pendulum = {uniform(rng, 0.3, 1.2), uniform(rng, -1.0, 1.0), uniform(rng, 0.5, 2.0),
                                    uniform(rng, 0.05, 0.5), uniform(rng, 0.5, 0.9)};
    switch (i % 6) {
      case 0: ball[2] = 0.0, hopper[4] = 0.0, duffing[7] = 0.0, pendulum[4] = 0.0; break;  // stop dead
      case 1:                                                                              // overflows
        ball[0] = ball[1] = 1e308, hopper[1] = 1e308, duffing[3] = 1e308, pendulum[1] = 1e300;
        break;
      case 2: ball[2] = 1.5, hopper[2] = -1.0, duffing[6] = -1.0, pendulum[2] = 0.0; break;  // outside the domain
      case 3: ball[0] = 1e-6, ball[1] = 1e-3, hopper[2] = 5000.0, duffing[5] = 40.0; break;  // short hops, hard hits
      default: break;
    }
    ball_rows.push_back(ball);
    hopper_rows.push_back(hopper);
    duffing_rows.push_back(duffing);
    pendulum_rows.push_back(pendulum);
    // h0, v0, c, e (e out of its domain in the rows that leave it)
    air_rows.push_back({i % 6 == 1 ? 1e300 : uniform(rng, 0.5, 3.0), uniform(rng, -2.0, 2.0), uniform(rng, 0.01, 0.3),
                        i % 6 == 2   ? -1.0
                        : i % 6 == 0 ? 0.0
                                     : uniform(rng, 0.5, 0.9)});
  }
  // A ball through air thinning as exp(-h), with a log term, a ripple whose argument goes past
  // sin's reduction range (the library's value, lane by lane) and an atan2 term (the library's,
  // lane by lane): exp, log and sin in vectors and the C library per lane.
  const fs::path air = g_scratch / "air_ball.json";
  std::ofstream(air) << R"json({"name": "air_ball", "states": ["h", "v"],
    "parameters": [{"name": "h0"}, {"name": "v0"}, {"name": "c", "domain": ">= 0"}, {"name": "e", "domain": "[0, 1]"}],
    "constants": {"g": 9.81},
    "initial_state": {"h": "h0", "v": "v0"},
    "flow": {"h": "v", "v": "-g - c * exp(-h) * v * abs(v) + 0.1 * log(1 + h^2) + 1e-3 * sin(1e6 * h) + 0.01 * atan2(v, 1 + h^2)"},
    "guards": [{"name": "ground", "expression": "h", "direction": "falling", "reset": {"v": "-e * v"}}]})json";
  const std::vector<ObjectiveSpec> objectives = {
      {ObjectiveKind::EventTime, 1}, {ObjectiveKind::FinalState, 0, 0}, {ObjectiveKind::EventCount}};
  for (const auto& [file, rows, P] :
       {std::tuple{"examples/models/bouncing_ball.json", ball_rows, 3},
        std::tuple{"examples/models/hopper.json", hopper_rows, 5},
        std::tuple{"bench/models/duffing_stop.json", duffing_rows, 8},
        std::tuple{"bench/models/pendulum_drag.json", pendulum_rows, 5}, std::tuple{"", air_rows, 4}}) {
    const std::string name = *file ? file : "air_ball";
    const std::string path = *file ? source_path(file) : air.string();
    const AnyModel model = configure_model(io::parse_model_choice({{"model", {{"file", path}}}}, ""));
    const Batch batch = Batch::from_rows(rows, P);
    // Probes and settling in two pairs, not four: each setting of each still runs on every model,
    // method and run, in half the test's time.
    for (const Method method : {Method::Rk4, Method::Dopri5})
      for (const auto& [probes, v_stop] : {std::pair{0, 0.3}, std::pair{3, 0.0}})
        for (const bool sens : {false, true}) {
          SCOPED_TRACE(std::string(name) + ", " + method_name(method) + ", probes " + std::to_string(probes) +
                       ", v_stop " + std::to_string(v_stop) + ", sensitivities " + std::to_string(sens));
          Options o = run_options(2.5, sens);
          o.method = method;
          o.rtol = 1e-8;
          o.atol = 1e-8;
          o.probes = probes;
          o.v_stop = v_stop;
          o.threads = 3;
          o.event_capacity = v_stop > 0.0 ? 32 : 6;
          o.mark_invalid_rows = true;
          const std::vector<int> design = sens ? std::vector<int>{0, P - 1} : std::vector<int>{};
          auto solve_both = [&](const char* simd) {
            saltation::testing::SimdChoice choice(simd);
            return std::pair{model.solve(batch, o, Backend::Cpu),
                             model.observe(batch, o, objectives, design, Backend::Cpu)};
          };
          auto [lanes, lanes_observed] = solve_both("best");
          auto [scalar, scalar_observed] = solve_both("0");
          saltation::testing::expect_bitwise(lanes, scalar);
          saltation::testing::expect_bitwise(lanes_observed, scalar_observed);
          std::vector<int> ends(status_count, 0);
          for (std::size_t i = 0; i < scalar.n; ++i) ++ends[scalar.status[i]];
          EXPECT_GT(ends[static_cast<int>(Status::NonFinite)], 0);
          EXPECT_GT(ends[static_cast<int>(Status::InvalidInput)], 0);
          EXPECT_GT(ends[static_cast<int>(Status::Finished)], 0);
          for (std::size_t i = 0; i < scalar.n; ++i)  // every row that blows up says so
            if (scalar.status_of(i) == Status::Finished) {
              for (int k = 0; k < scalar.N; ++k) {
                EXPECT_TRUE(std::isfinite(scalar.qf_of(i, k))) << "row " << i;
              }
            }
        }
  }
}

// Dips through a guard shorter than a step, in the SIMD lanes: a pendulum (phi'' = -sin phi) whose
// swing passes the wall at phi = 1 by 1e-6 to 1e-4 rad, for a fraction of dt = 0.1. The end of a
// step sees few of these excursions; the probes on the step's dense output, screened in vectors,
// see more, and hand those steps to step(), which finds the same events as the scalar driver.
TEST(UserModelFile, SimdLanesProbesCatchDipsShorterThanAStep) {
  {
    saltation::testing::SimdChoice best("best");
    if (cpu::lane_target().width == 0) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512";
  }
  const fs::path file = g_scratch / "grazing_pendulum.json";
  std::ofstream(file) << R"json({"name": "grazing_pendulum", "states": ["phi", "omega"],
    "parameters": [{"name": "omega0"}, {"name": "e", "domain": "[0, 1]"}],
    "initial_state": {"phi": "0", "omega": "omega0"},
    "flow": {"phi": "omega", "omega": "-sin(phi)"},
    "guards": [{"name": "wall", "expression": "phi - 1", "direction": "rising", "reset": {"omega": "-e * omega"}}]})json";
  const AnyModel model = configure_model(io::parse_model_choice({{"model", {{"file", file.string()}}}}, ""));
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 64; ++i) {
    const double amplitude = 1.0 + std::pow(10.0, -6.0 + 2.0 * i / 63.0);  // past the wall by 1e-6 .. 1e-4
    rows.push_back({std::sqrt(2.0 * (1.0 - std::cos(amplitude))), 0.5});
  }
  const Batch batch = Batch::from_rows(rows, 2);
  int events[2] = {};
  for (const int probes : {0, 3}) {
    SCOPED_TRACE("probes " + std::to_string(probes));
    Options o = run_options(3.0, false);
    o.dt = 0.1;
    o.probes = probes;
    o.threads = 2;
    auto solve_with = [&](const char* simd) {
      saltation::testing::SimdChoice choice(simd);
      return model.solve(batch, o, Backend::Cpu);
    };
    Result lanes = solve_with("best"), scalar = solve_with("0");
    saltation::testing::expect_bitwise(lanes, scalar);
    for (std::size_t i = 0; i < batch.n; ++i) events[probes > 0] += scalar.n_events[i];
  }
  // One impact per row (the reset sends it back at half the speed), which the step's end sees in
  // few rows and the probes in every one.
  EXPECT_EQ(events[1], static_cast<int>(batch.n));
  EXPECT_LT(events[0], static_cast<int>(batch.n) / 2);
}

// Constants are run-time data: g = 3.7 moves the first impact to (v0 + sqrt(v0^2 + 2 g h0)) / g
// with the library compiled for the file's g, and no second one.
TEST(UserModelFile, ConfigOverridesAConstantWithoutRecompiling) {
  const std::vector<double> row = {1.2, 0.5, 0.8};
  const Batch batch = Batch::from_rows({row}, 3);
  const Options options = run_options(2.0, false);
  std::string first_library;
  for (const double g : {9.81, 3.7}) {
    const io::ModelChoice choice = choice_of("bouncing_ball", {{"g", g}});
    // Before the second run: its library is the one the first run built.
    const user_model::BuildReport build = user_model::build_model(*choice.definition, Backend::Cpu);
    if (g == 3.7) {
      EXPECT_TRUE(build.cached) << "a config recompiled the model";
      EXPECT_EQ(build.library, first_library) << "a config made another library";
    }
    first_library = build.library;
    const Result r = configure_model(choice).solve(batch, options, Backend::Cpu);
    ASSERT_GE(r.n_events[0], 1) << "g = " << g;
    EXPECT_NEAR(r.event_time(0, 0), (row[1] + std::sqrt(row[1] * row[1] + 2.0 * g * row[0])) / g, 1e-9) << "g = " << g;
  }
}

TEST(UserModelFile, StudyOverTheHopperRunsThroughTheCli) {
  const fs::path out = g_scratch / "hopper_landing";
  const CliRun run = run_cli("sweep '" + source_path("examples/studies/hopper_landing.json") + "' --out '" +
                             out.string() + "' --samples 2000");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::ifstream in(out / "summary.json");
  ASSERT_TRUE(in) << "no summary.json";
  const json summary = json::parse(in);
  ASSERT_FALSE(summary.at("objectives").empty());
  for (const auto& objective : summary.at("objectives").items()) {
    EXPECT_EQ(objective.value().at("n").get<long>(), 2000) << objective.key() << ": every sample defines it";
    EXPECT_TRUE(std::isfinite(objective.value().at("mean").get<double>())) << objective.key();
  }

  // Its objectives name their guards; the hopper's events alternate touchdown (event 0) and liftoff
  // (event 1) before t_final, so the same study by event index gives the same bits.
  std::ifstream study_in(source_path("examples/studies/hopper_landing.json"));
  json by_index = json::parse(study_in);
  by_index["model"]["file"] = model_file("hopper");
  by_index["objectives"][0]["event_time"] = 0;
  by_index["objectives"][1]["event_time"] = 1;
  by_index["objectives"][2]["event_state"] = {{"event", 1}, {"state", "v"}};
  const fs::path study = g_scratch / "hopper_by_index.json", out_by_index = g_scratch / "hopper_by_index";
  std::ofstream(study) << by_index.dump();
  ASSERT_EQ(run_cli("sweep '" + study.string() + "' --out '" + out_by_index.string() + "' --samples 2000").exit_code,
            0);
  std::ifstream in_by_index(out_by_index / "summary.json");
  const json summary_by_index = json::parse(in_by_index);
  for (const char* name : {"touchdown_time", "liftoff_time", "liftoff_velocity"})
    for (const char* key : {"n", "mean", "std_error"})
      EXPECT_EQ(summary.at("objectives").at(name).at(key), summary_by_index.at("objectives").at(name).at(key))
          << name << "." << key;
}

TEST(UserModelFile, ModelCheckOfTheHopperAgrees) {
  const CliRun run =
      run_cli("model check '" + model_file("hopper") + "' --theta '1.5,0.5,100,1,0.5;1.2,-0.3,150,1,0.8' --t-final 1");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("finite differences: agree"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("NOT CHECKED"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("guards polynomial in the state"), std::string::npos) << run.output;
}
