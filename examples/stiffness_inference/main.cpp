// Infer a contact stiffness from the positions of two colliding disks, then fit
// many independent noisy problems at once with one batched loss+gradient rollout per round.
//
//   stiffness_inference [--out DIR] [--batch N] [--noise SIGMA_OVER_R] [--backend cpu|cuda|auto]
//
// Writes DIR/stiffness_inference_traj.csv, DIR/stiffness_inference_iter.csv (plotted by
// plot.py into the three-panel figure) and DIR/stiffness_inference_batch.csv.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "saltation/dem/engine.hpp"
#include "saltation/dem/fit.hpp"

using namespace saltation;
using namespace saltation::dem;

namespace {

constexpr double kRadius = 0.5, kMass = 1.0, kRef = 1.0, kTrue = 40.0, kInit = 10.0;
constexpr double kDt = 0.002, kTrainSpeed = 0.5, kValSpeed = 0.35;
constexpr int kFrames = 80, kStride = 5;
const double kPi = std::acos(-1.0);

int failures = 0;
void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "CHECK FAILED: %s\n", what.c_str());
    ++failures;
  }
}

// One system per entry of theta of the seed's two disks: positions +-0.54, velocities +-speed_b.
DiskBatch two_disks(const std::vector<double>& theta, const std::vector<double>& speed) {
  const int n_systems = (int)theta.size();
  DiskBatch b = DiskBatch::make(n_systems, 2);
  for (int s = 0; s < n_systems; ++s) {
    for (int d = 0; d < 2; ++d) {
      b.r(s, d) = kRadius;
      b.m(s, d) = kMass;
    }
    b.x(s, 0, 0) = -0.54;
    b.x(s, 1, 0) = 0.54;
    b.v(s, 0, 0) = speed[s];
    b.v(s, 1, 0) = -speed[s];
    b.log_stiffness[s] = theta[s];
  }
  return b;
}

RolloutOptions seed_options() {
  RolloutOptions o;
  o.dt = kDt;
  o.n_frames = kFrames;
  o.stride = kStride;
  o.materials = {Material{kRef, 1.0, 0.0, 0.0}};
  o.neighbors = Neighbors::AllPairs;
  return o;
}

RolloutResult simulate(double theta, double speed, Backend be) {
  return rollout(two_disks({theta}, {speed}), seed_options(), be);
}

// Seed loss: mean over frames and disks of ((x - x_obs) / R)^2, x components only.
LossSpec seed_loss(const std::vector<double>& observed, int n_systems) {
  LossSpec l;
  l.observed = observed;
  l.components = 1;
  l.scale.assign(n_systems, kRadius);
  return l;
}

std::pair<double, double> loss_and_gradient(double theta, const LossSpec& l, Backend be) {
  RolloutOptions o = seed_options();
  o.tangents = {TangentParam{TangentKind::LogStiffness}};
  o.save_positions = o.save_velocities = o.save_tangents = false;
  const RolloutResult r = rollout(two_disks({theta}, {kTrainSpeed}), o, l, be);
  if (r.status_of(0) != Status::Finished) throw std::runtime_error(status_name(r.status_of(0)));
  return {r.loss[0], r.grad[0]};
}

// Counter-based normal variates: splitmix64 of (seed, index) and Box-Muller.
uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
double uniform(uint64_t seed, uint64_t i) { return ((splitmix(seed * 0x100000001b3ULL + i) >> 11) + 0.5) * 0x1.0p-53; }
double normal(uint64_t seed, uint64_t i) {
  const double u1 = uniform(seed, 2 * i), u2 = uniform(seed, 2 * i + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
}

void write_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp);
    f << text;
    if (!f.good()) throw std::runtime_error("write failed: " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp + " to " + path);
}

}  // namespace

int main(int argc, char** argv) {
  std::string out = ".";
  int batch = 10000;
  double noise = 1e-3;  // observation noise sigma / R for the batched study
  Backend be = Backend::Cpu;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--out") out = next();
    else if (a == "--batch") batch = std::stoi(next());
    else if (a == "--noise") noise = std::stod(next());
    else if (a == "--backend") be = parse_backend(next());
    else {
      std::fprintf(stderr, "usage: %s [--out DIR] [--batch N] [--noise SIGMA_OVER_R] [--backend cpu|cuda|auto]\n",
                   argv[0]);
      return 2;
    }
  }
  try {
    const double theta_true = std::log(kTrue / kRef), theta_init = std::log(kInit / kRef);
    const RolloutResult obs = simulate(theta_true, kTrainSpeed, be);
    const LossSpec l = seed_loss(obs.x, 1);

    // ---- derivative check at k = 18
    const double theta_chk = std::log(18.0 / kRef), h = 1e-4;
    const double g_ad = loss_and_gradient(theta_chk, l, be).second;
    const double g_fd =
        (loss_and_gradient(theta_chk + h, l, be).first - loss_and_gradient(theta_chk - h, l, be).first) / (2 * h);
    check(std::fabs(g_ad - g_fd) <= 1e-8 + 2e-4 * std::fabs(g_fd), "gradient vs finite difference (rtol 2e-4)");
    check(std::fabs(g_ad) > 1e-5, "|gradient| > 1e-5");
    std::printf("Gradient at k=18: AD=%.8f, finite difference=%.8f\n", g_ad, g_fd);

    // ---- fit with L-BFGS-n_systems on [log 5, log 100]
    DiskBatch fb = two_disks({theta_init}, {kTrainSpeed});
    FitOptions fo;
    fo.lower = std::log(5.0 / kRef);
    fo.upper = std::log(100.0 / kRef);
    fo.max_iterations = 30;
    fo.epsilon = 1e-10;
    fo.delta = 1e-14;
    fo.record_history = true;
    const FitResult fit = fit_log_stiffness(fb, seed_options(), l, fo, be);
    if (fit.outcome[0] != FitConverged) throw std::runtime_error("Stiffness fit failed: " + fit.message[0]);
    const double k_fit = kRef * std::exp(fit.theta[0]);
    const double loss0 = fit.history_loss[0].front();
    check(std::fabs(k_fit - kTrue) <= 1e-3 * kTrue, "recovered k within rtol 1e-3");
    check(fit.loss[0] < loss0 * 1e-6, "final loss < 1e-6 * initial");
    std::printf("Recovered k=%.6f, target=%.1f; %d iterations, loss=%.3e\n", k_fit, kTrue, fit.iterations[0],
                fit.loss[0]);

    // ---- closed-form overlap and momentum
    const double meff = kMass / 2.0, omega = std::sqrt(kTrue / meff);
    const double t0 = (1.08 - 2.0 * kRadius) / (2.0 * kTrainSpeed);
    double max_overlap_err = 0.0, max_momentum = 0.0;
    for (int f = 0; f < kFrames; ++f) {
      const double t = kDt * kStride * (f + 1), age = t - t0;
      const double analytic =
          (age >= 0.0 && age <= kPi / omega) ? 2.0 * kTrainSpeed / omega * std::sin(omega * age) : 0.0;
      const double numeric = std::max(0.0, 2.0 * kRadius - (obs.pos(f, 0, 1, 0) - obs.pos(f, 0, 0, 0)));
      max_overlap_err = std::max(max_overlap_err, std::fabs(numeric - analytic));
      for (int c = 0; c < 2; ++c)
        max_momentum = std::max(max_momentum, std::fabs(kMass * (obs.vel(f, 0, 0, c) + obs.vel(f, 0, 1, c))));
    }
    check(max_overlap_err <= 2e-5, "overlap vs closed-form sin solution (atol 2e-5)");
    check(max_momentum <= 1e-12, "total momentum zero (atol 1e-12)");
    std::printf("Overlap vs closed form: max error=%.3e (atol 2e-5); max |total momentum|=%.3e (atol 1e-12)\n",
                max_overlap_err, max_momentum);

    // ---- held-out speed
    const RolloutResult ini = simulate(theta_init, kTrainSpeed, be);
    const RolloutResult fitted = simulate(fit.theta[0], kTrainSpeed, be);
    const RolloutResult vtar = simulate(theta_true, kValSpeed, be);
    const RolloutResult vpred = simulate(fit.theta[0], kValSpeed, be);
    double se = 0.0;
    for (size_t i = 0; i < vtar.x.size(); ++i) se += (vpred.x[i] - vtar.x[i]) * (vpred.x[i] - vtar.x[i]);
    const double rmse = std::sqrt(se / vtar.x.size());
    check(rmse < 1e-5 * kRadius, "held-out RMSE < 1e-5 R");
    std::printf("Held-out speed %.2f: position RMSE=%.3e\n", kValSpeed, rmse);

    // ---- CSV for the figure
    std::string traj =
        "time,initial_right_x,fitted_right_x,observed_right_x,validation_prediction_right_x,validation_target_right_"
        "x\n";
    char line[512];
    for (int f = 0; f < kFrames; ++f) {
      std::snprintf(line, sizeof line, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", kDt * kStride * (f + 1),
                    ini.pos(f, 0, 1, 0), fitted.pos(f, 0, 1, 0), obs.pos(f, 0, 1, 0), vpred.pos(f, 0, 1, 0),
                    vtar.pos(f, 0, 1, 0));
      traj += line;
    }
    write_atomic(out + "/stiffness_inference_traj.csv", traj);
    std::string iters = "iteration,stiffness,loss\n";
    for (size_t i = 0; i < fit.history_loss[0].size(); ++i) {
      std::snprintf(line, sizeof line, "%zu,%.17g,%.17g\n", i, kRef * std::exp(fit.history_theta[0][i]),
                    fit.history_loss[0][i]);
      iters += line;
    }
    write_atomic(out + "/stiffness_inference_iter.csv", iters);

    // ---- at scale: many independent noisy inference problems in one call
    if (batch > 0) {
      const int n_systems = batch;
      std::vector<double> k_true(n_systems), speed(n_systems), th_true(n_systems), th0(n_systems, theta_init);
      for (int s = 0; s < n_systems; ++s) {
        k_true[s] = 15.0 * std::pow(80.0 / 15.0, uniform(11, s));  // log-uniform in [15, 80]
        speed[s] = 0.3 + 0.4 * uniform(12, s);                     // uniform in [0.3, 0.7]
        th_true[s] = std::log(k_true[s] / kRef);
      }
      RolloutOptions so = seed_options();
      so.save_velocities = false;
      RolloutResult truth = rollout(two_disks(th_true, speed), so, be);
      LossSpec bl = seed_loss(truth.x, n_systems);
      for (size_t i = 0; i < bl.observed.size(); ++i) bl.observed[i] += noise * kRadius * normal(13, i);
      FitOptions bo = fo;
      bo.record_history = false;
      bo.delta = 1e-12;  // with noise the loss floor is ~sigma^2: stop when it changes by < 1e-12
      const FitResult bf = fit_log_stiffness(two_disks(th0, speed), so, bl, bo, be);
      std::vector<double> rel(n_systems);
      int n_ok = 0, it_sum = 0, it_max = 0, ev_sum = 0;
      double mean = 0.0;
      for (int s = 0; s < n_systems; ++s) {
        rel[s] = kRef * std::exp(bf.theta[s]) / k_true[s] - 1.0;
        n_ok += bf.outcome[s] != FitError;
        it_sum += bf.iterations[s];
        it_max = std::max(it_max, bf.iterations[s]);
        ev_sum += bf.evaluations[s];
        mean += rel[s];
      }
      mean /= n_systems;
      double var = 0.0;
      for (double r : rel) var += (r - mean) * (r - mean);
      const double sd = std::sqrt(var / std::max(1, n_systems - 1));
      std::vector<double> srt = rel;
      std::sort(srt.begin(), srt.end());
      auto q = [&](double p) {
        return srt[(size_t)std::min<double>(n_systems - 1, std::floor(p * (n_systems - 1) + 0.5))];
      };
      std::printf("Batched fit: %d systems (k_true log-uniform in [15, 80], speed in [0.3, 0.7], noise sigma=%.1e R)\n",
                  n_systems, noise);
      int n_by[4] = {0, 0, 0, 0};
      long sys_evals = 0;
      for (int s = 0; s < n_systems; ++s) ++n_by[bf.outcome[s] & 3];
      for (int r : bf.round_sizes) sys_evals += r;
      std::printf("  outcomes: converged %d, max_iterations %d, line_search_stalled %d, error %d\n", n_by[1], n_by[2],
                  n_by[3], n_by[0]);
      std::printf("  finished without error: %d/%d; iterations mean %.2f max %d; evaluations mean %.2f\n", n_ok,
                  n_systems, (double)it_sum / n_systems, it_max, (double)ev_sum / n_systems);
      std::printf("  relative error k_fit/k_true - 1: mean %.3e, sd %.3e, 5%% %.3e, median %.3e, 95%% %.3e\n", mean, sd,
                  q(0.05), q(0.5), q(0.95));
      std::printf(
          "  %d batched loss+gradient rounds (first round %d systems); wall %.3f s (engine %.3f s): %.3f ms per round, "
          "%.3f ms per system (whole fit), %.2f us engine time per system-evaluation (%ld evaluations)\n",
          bf.rounds, bf.round_sizes.empty() ? 0 : bf.round_sizes[0], bf.seconds, bf.engine_seconds,
          1e3 * bf.seconds / std::max(1, bf.rounds), 1e3 * bf.seconds / n_systems,
          1e6 * bf.engine_seconds / std::max(1L, sys_evals), sys_evals);
      {
        std::vector<std::pair<std::string, int>> msgs;
        for (int s = 0; s < n_systems; ++s) {
          if (bf.message[s].empty()) continue;
          auto it = std::find_if(msgs.begin(), msgs.end(), [&](auto& m) { return m.first == bf.message[s]; });
          if (it == msgs.end()) msgs.push_back({bf.message[s], 1});
          else ++it->second;
        }
        for (auto& m : msgs) std::printf("  %d system(s): %s\n", m.second, m.first.c_str());
      }
      check(n_ok == n_systems, "every batched fit finished");
      std::string bc = "k_true,speed,k_fit,loss,iterations,evaluations,outcome\n";
      for (int s = 0; s < n_systems; ++s) {
        std::snprintf(line, sizeof line, "%.17g,%.17g,%.17g,%.17g,%d,%d,%d\n", k_true[s], speed[s],
                      kRef * std::exp(bf.theta[s]), bf.loss[s], bf.iterations[s], bf.evaluations[s], bf.outcome[s]);
        bc += line;
      }
      write_atomic(out + "/stiffness_inference_batch.csv", bc);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stiffness_inference: error: %s\n", e.what());
    return 2;
  }
  if (failures) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("All checks passed.\n");
  return 0;
}
