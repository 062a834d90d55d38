// A CPU model of 32-lane warps over the benchmark batch (bench/terrain_batch.hpp): how many warp
// cycles the CUDA kernel's lockstep loop spends with event localisation at once (today's
// schedule) and deferred (core::WarpDeferral, docs/warp_events.md). `bench_warp_model [n]`.
//
// Assumptions, stated here and in docs/warp_events.md:
//  1. The real CPU solver gives each trajectory's events and end; a lane's timeline follows from
//     them: ceil((t_e - t_prev) / dt) steps to the step that holds an event (steps restart from
//     each event time), then the event; after the last event, ceil((t_final - t_last) / dt) steps
//     or, for a terminal event (settled, Zeno, capacity), the end.
//  2. A warp is 32 consecutive trajectories. One lockstep iteration costs S when any lane steps,
//     plus L + J when the vote localises (all pending lanes together, converged: the location
//     iteration count is the same on every lane). Lanes that do not take part in a phase idle through it.
//  3. Costs in RK4 sub-steps (one RK4 step of the state plus one guard evaluation):
//     S = probes + 1 (a probed step: the warp pays for its slowest lane, and near the terrain
//     some lane probes), L = locate_iterations + 1 (the location iterations and the step to the event),
//     J = 3 forward (guard gradient twice, reset, flows), and with sensitivities
//     J = 5 + 2 N^2 P / (40 + 25 K) (R_q, the analytic event partials, and P columns of
//     N x N products over a sub-step of about 40 + 25 K flops). Operation counts, not
//     measurements. Tangent work in a step (affine flow: a cached N x N matrix)
//     is left out of S.
//  4. The device's time is proportional to the sum of warp cycles over the batch (the SMs'
//     issue slots are the bottleneck, latency hidden by other warps); block and tail effects,
//     memory traffic and the votes' own cost (four per iteration) are not modelled.
// Deferral changes no lane's work, so useful lane-slots are the same under every policy and the
// speed-up is the ratio of warp cycles.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "saltation/core/warp.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/solve.hpp"
#include "terrain_batch.hpp"

namespace {

constexpr int kWarp = 32;

// One trajectory's work: steps before each event (the last of them the step that holds it),
// then the steps after the last event (or the end at it).
struct LaneWork {
  std::vector<int> steps_to_event;
  int final_steps = 0;
  bool ends_at_event = false;
};

int steps_between(double from, double to, double dt) {
  return std::max(1, static_cast<int>(std::ceil((to - from) / dt)));
}

std::vector<LaneWork> lane_work(const saltation::Result& r, const saltation::Options& o) {
  using saltation::Status;
  std::vector<LaneWork> work(r.n);
  for (std::size_t i = 0; i < r.n; ++i) {
    LaneWork& w = work[i];
    double t_prev = 0.0;
    for (int c = 0; c < r.n_events[i]; ++c) {
      const double t_e = r.ev_t[c * r.n + i];
      w.steps_to_event.push_back(steps_between(t_prev, t_e, o.dt));
      t_prev = t_e;
    }
    const auto status = static_cast<Status>(r.status[i]);
    if (status == Status::EventCapacity) {  // the truncating crossing is localised but not recorded
      w.steps_to_event.push_back(steps_between(t_prev, r.t_end[i], o.dt));
      w.ends_at_event = true;
    } else if (status == Status::Settled || status == Status::Zeno) {
      w.ends_at_event = true;
    } else if (r.t_end[i] > t_prev) {
      w.final_steps = steps_between(t_prev, r.t_end[i], o.dt);
    } else {
      w.ends_at_event = true;  // an event exactly at t_final
    }
  }
  return work;
}

struct Costs {
  double S, L, J;
};

// Lane-slots in units of S, summed over warps.
struct Tally {
  double cycles = 0.0;        // warp cycles
  double useful = 0.0;        // lane-slots doing a step or a localisation
  double idle_ended = 0.0;    // lane-slots of lanes that have ended
  double idle_waiting = 0.0;  // pending lanes during step phases
  double idle_outside = 0.0;  // running lanes outside a localisation phase
  long passes = 0;            // localisation phases
  long events = 0;            // lanes localised
  long warps = 0;
};

// A lane of the model, following core::WarpLane's phases.
struct ModelLane {
  const LaneWork* work = nullptr;
  std::size_t next_event = 0;
  int steps_left = 0;
  bool ended = true, pending = false;
  int waited = 0;

  void start_segment() {
    if (next_event < work->steps_to_event.size()) {
      steps_left = work->steps_to_event[next_event];
    } else if (work->ends_at_event || work->final_steps == 0) {
      ended = true;
    } else {
      steps_left = work->final_steps;
    }
  }
  bool stepping() const { return !ended && !pending; }
};

void simulate_warp(const LaneWork* first, int count, const saltation::core::WarpDeferral& d, const Costs& c, Tally& t) {
  ModelLane lanes[kWarp];
  for (int l = 0; l < count; ++l) {
    lanes[l].work = first + l;
    lanes[l].ended = false;
    lanes[l].start_segment();
  }
  auto running = [&] {
    for (const ModelLane& lane : lanes)
      if (!lane.ended) return true;
    return false;
  };
  ++t.warps;
  while (running()) {
    int stepped = 0, waiting = 0, ended = 0;
    for (ModelLane& lane : lanes) {
      waiting += lane.pending;
      if (!lane.stepping()) continue;
      ++stepped;
      if (--lane.steps_left > 0) continue;
      if (lane.next_event < lane.work->steps_to_event.size()) {
        lane.pending = true;
        lane.waited = 0;
      } else {
        lane.ended = true;
      }
    }
    int pending = 0, stepping = 0;
    bool expired = false;
    for (const ModelLane& lane : lanes) {
      pending += lane.pending;
      stepping += lane.stepping();
      ended += lane.ended;
      expired = expired || (lane.pending && lane.waited >= d.max_wait);
    }
    if (stepped > 0) {
      t.cycles += c.S;
      t.useful += stepped * c.S;
      t.idle_waiting += waiting * c.S;
      t.idle_ended += (kWarp - stepped - waiting) * c.S;
    }
    if (!d.localise_now(pending, stepping, expired)) {
      for (ModelLane& lane : lanes) lane.waited += lane.pending;
      continue;
    }
    const double LJ = c.L + c.J;
    t.cycles += LJ;
    t.useful += pending * LJ;
    t.idle_ended += ended * LJ;
    t.idle_outside += (kWarp - pending - ended) * LJ;
    ++t.passes;
    t.events += pending;
    for (ModelLane& lane : lanes) {
      if (!lane.pending) continue;
      lane.pending = false;
      const bool terminal = ++lane.next_event == lane.work->steps_to_event.size() && lane.work->ends_at_event;
      if (terminal) lane.ended = true;
      else lane.start_segment();
    }
  }
}

Tally simulate(const std::vector<LaneWork>& work, const saltation::core::WarpDeferral& d, const Costs& c) {
  Tally t;
  for (std::size_t first = 0; first < work.size(); first += kWarp)
    simulate_warp(&work[first], static_cast<int>(std::min<std::size_t>(kWarp, work.size() - first)), d, c, t);
  return t;
}

void print_row(const char* name, const Tally& t, double baseline_cycles) {
  const double slots = kWarp * t.cycles;
  std::printf("  %-22s %9.0f %8.1f %6.2f %8.1f%% %7.1f%% %7.1f%% %7.1f%% %8.3f\n", name, t.cycles / t.warps,
              static_cast<double>(t.passes) / t.warps, static_cast<double>(t.events) / std::max(1L, t.passes),
              100.0 * t.useful / slots, 100.0 * t.idle_ended / slots, 100.0 * t.idle_waiting / slots,
              100.0 * t.idle_outside / slots, baseline_cycles / t.cycles);
}

template <int K>
void model(std::size_t n, bool sens) {
  constexpr int N = saltation::TerrainBall<K>::N, P = saltation::TerrainBall<K>::P;
  const saltation::Batch batch = saltation_bench::terrain_batch(n, K);
  const saltation::Options o = saltation::normalize_options(saltation_bench::seed_options(sens, 0));
  const saltation::Result r = saltation::solve(saltation::TerrainBall<K>{}, batch, o, saltation::Backend::Cpu);
  const std::vector<LaneWork> work = lane_work(r, o);
  // In RK4 sub-steps (assumption 3), then in units of S.
  const double S = o.probes + 1, L = o.locate_iterations + 1,
               J = sens ? 5.0 + 2.0 * N * N * P / (40.0 + 25.0 * K) : 3.0;
  const Costs c{1.0, L / S, J / S};
  long events = 0;
  for (const LaneWork& w : work) events += static_cast<long>(w.steps_to_event.size());
  std::printf(
      "\nK=%d P=%d sensitivities=%d: n=%zu, %.2f events per trajectory; S=%.0f L=%.0f J=%.1f RK4 sub-steps"
      " (L+J = %.2f S)\n",
      K, P, int(sens), n, static_cast<double>(events) / n, S, L, J, c.L + c.J);
  std::printf("  %-22s %9s %8s %6s %9s %8s %8s %8s %8s\n", "policy", "cycles/S", "passes", "lanes", "lane eff", "ended",
              "waiting", "outside", "speed-up");
  std::printf("  %-22s %9s %8s %6s %9s %8s %8s %8s %8s\n", "", "per warp", "per warp", "/pass", "", "idle", "idle",
              "idle", "");
  const Tally off = simulate(work, saltation::core::WarpDeferral::off(), c);
  print_row("off (today)", off, off.cycles);
  const saltation::core::WarpDeferral standard = saltation::core::WarpDeferral::standard();
  for (int min_pending : {4, 8, 16, 32}) {
    for (int max_wait : {16, 32, 64, 128}) {
      const saltation::core::WarpDeferral d{min_pending, max_wait};
      char name[64];
      std::snprintf(name, sizeof name, "%s{%d, %d}",
                    min_pending == standard.min_pending && max_wait == standard.max_wait ? "standard " : "",
                    min_pending, max_wait);
      print_row(name, simulate(work, d, c), off.cycles);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 4096;
  std::printf(
      "Warp model (bench/warp_model.cpp; assumptions at its top and in docs/warp_events.md): warps of %d\n"
      "consecutive trajectories of terrain_batch(n, K) with seed_options, each lockstep iteration costing\n"
      "S when any lane steps plus L + J when the vote localises. Policy {min_pending, max_wait}.\n"
      "cycles/S: warp cycles in units of S; passes: localisation phases; lanes/pass: lanes localised\n"
      "per phase; lane eff: useful lane-slots / all lane-slots; idle: lane-slots of ended lanes, of\n"
      "pending lanes waiting through step phases, of running lanes outside a localisation phase;\n"
      "speed-up: today's cycles / the policy's.\n",
      kWarp);
  for (bool sens : {false, true}) {
    model<3>(n, sens);
    model<24>(n, sens);
  }
  return 0;
}
