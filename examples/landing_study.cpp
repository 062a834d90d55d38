// Landing design study (the demo): a terrain ball is thrown over three bumps; which launch
// velocities put its second impact at x_target? A batch of launch designs is solved with
// exact event-aware gradients, then the best designs are refined by batched Gauss-Newton
// steps that use dx_2/dtheta (the pre-impact total derivative) from the same solver.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <numeric>
#include <vector>

#include "saltation/models/terrain_ball.hpp"
#include "saltation/products.hpp"
#include "saltation/solve.hpp"

using namespace saltation;

namespace {

using Model = TerrainBall<3>;
const double kTerrain[9] = {0.15, 0.8, 0.25, 0.10, 1.6, 0.20, 0.20, 2.6, 0.30};  // (a, b, w) per bump

Batch designs(const std::vector<double>& vx0, const std::vector<double>& vy0) {
  Batch b(vx0.size(), Model::P);
  for (std::size_t i = 0; i < b.n; ++i) {
    const double head[5] = {vx0[i], vy0[i], 0.1, 0.85, 0.2};
    for (int p = 0; p < 5; ++p) b.at(i, p) = head[p];
    for (int p = 0; p < 9; ++p) b.at(i, 5 + p) = kTerrain[p];
  }
  return b;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"saltation demo: landing design study on the terrain ball"};
  int side = 64;
  double target = 2.0;
  std::string backend_name = "auto";
  app.add_option("--side", side, "designs per axis (the batch is side^2)")->check(CLI::Range(2, 4096));
  app.add_option("--target", target, "x where the second impact should land");
  app.add_option("--backend", backend_name, "cpu | cuda | auto")->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  CLI11_PARSE(app, argc, argv);

  Model model;
  model.x0 = 0.0;
  model.y0 = 1.0;
  Options o;
  o.t_final = 3.0;
  o.dt = 1e-3;
  o.event_capacity = 8;
  o.sensitivities = true;
  const Backend backend = resolve_backend(parse_backend(backend_name));

  std::vector<double> vx0, vy0;
  for (int a = 0; a < side; ++a)
    for (int b = 0; b < side; ++b) {
      vx0.push_back(0.5 + 1.5 * a / (side - 1));
      vy0.push_back(-0.5 + 2.0 * b / (side - 1));
    }
  LandingObjective L;
  L.impact = 1;  // the second impact
  L.coordinate = 0;
  L.target = target;

  const auto t0 = std::chrono::steady_clock::now();
  const Result r = solve(model, designs(vx0, vy0), o, backend);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const ObjectiveValues ov = evaluate(L, r);

  std::map<std::string, int> statuses;
  std::size_t events = 0, landed = 0;
  for (std::size_t i = 0; i < r.n; ++i) {
    ++statuses[status_name(r.status_of(i))];
    events += r.n_events[i];
    landed += std::isfinite(ov.value[i]);
  }
  std::printf("saltation landing study: %zu launch designs over 3 bumps, backend %s\n", r.n,
              saltation::backend_name(backend));
  std::printf("  solve with sensitivities (P = %d): %.3f s, %.2f us per trajectory, %zu events\n", Model::P, seconds,
              1e6 * seconds / r.n, events);
  std::printf("  statuses:");
  for (const auto& [name, count] : statuses) std::printf(" %s=%d", name.c_str(), count);
  std::printf("\n  designs with a second impact: %zu\n", landed);

  // The 8 designs closest to the target, then batched Gauss-Newton on (vx0, vy0).
  std::vector<std::size_t> order(r.n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const double la = std::isfinite(ov.value[a]) ? ov.value[a] : 1e300,
                 lb = std::isfinite(ov.value[b]) ? ov.value[b] : 1e300;
    return la < lb;
  });
  const std::size_t k = std::min<std::size_t>(8, landed);
  std::vector<double> bx, by;
  for (std::size_t j = 0; j < k; ++j) {
    bx.push_back(vx0[order[j]]);
    by.push_back(vy0[order[j]]);
  }
  std::printf("  refining the %zu best designs towards x_2 = %g (Gauss-Newton with exact dx_2/d(vx0, vy0)):\n", k,
              target);
  for (int it = 0; it <= 5; ++it) {
    const Result rr = solve(model, designs(bx, by), o, backend);
    double worst = 0.0;
    for (std::size_t j = 0; j < k; ++j) {
      if (rr.n_events[j] < 2) continue;
      const double miss = rr.event_q(j, 1, 0) - target;
      worst = std::max(worst, std::fabs(miss));
      const double gx = rr.event_dq(j, 1, 0, Model::Vx0), gy = rr.event_dq(j, 1, 0, Model::Vy0);
      const double g2 = gx * gx + gy * gy;
      if (g2 > 0.0) {
        bx[j] -= miss * gx / g2;
        by[j] -= miss * gy / g2;
      }
    }
    std::printf("    iteration %d: largest |x_2 - target| = %.3e\n", it, worst);
  }
  if (k > 0) std::printf("  e.g. launch (vx0, vy0) = (%.6f, %.6f)\n", bx[0], by[0]);
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "landing_study: error: %s\n", e.what());
    return 2;
  }
}
