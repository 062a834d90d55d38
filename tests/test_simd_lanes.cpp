// The CPU's SIMD lanes (cpu_lanes.hpp, docs/simd_lanes.md) against the scalar CPU driver
// (cpu::solve, one trajectory per thread): every output array bitwise equal, for each built-in
// model (the terrain balls the lanes are compiled for, the bouncing ball, the thermostat), each
// output policy, on each vector target this CPU has (AVX-512 and
// AVX2 through SALTATION_SIMD), with 1 and 3 threads, over batches that mix bounces, settling,
// Zeno chatter, event-capacity overflow, a blow-up to non-finite values, invalid rows, near-grazing
// starts, free flight that never lands and a last step shorter than dt.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "expect_bitwise.hpp"
#include "saltation/cpu.hpp"
#include "saltation/cpu_lanes.hpp"
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/models/thermostat.hpp"
#include "saltation/solve.hpp"
#include "simd_choice.hpp"
#include "terrain_samples.hpp"

using namespace saltation;

namespace {

using saltation::testing::expect_bitwise;
using saltation::testing::SimdChoice;

// The vector targets this CPU can run: "avx3" and/or "avx2" (SALTATION_SIMD values; "" is the best).
std::vector<std::string> lane_targets() {
  std::vector<std::string> targets;
  {
    SimdChoice best("best");
    if (cpu::lane_target().width == 8) targets.push_back("best");
  }
  SimdChoice avx2("avx2");
  if (cpu::lane_target().width == 4) targets.push_back("avx2");
  return targets;
}

// The terrain ball's mixed batch: sample rows (bounces over K bumps, most settle) with special
// rows spliced in at several positions so that they land in different lanes.
template <int K>
Batch mixed_batch(std::size_t n) {
  Batch b = sample_terrain_batch<K>(n, 97 + K);
  for (std::size_t i = 0; i < n; i += 9) {
    switch ((i / 9) % 5) {
      case 0:  // e = 0, mu = 0: chatters into Zeno (v_stop = 0) or settles
        b.at(i, TerrainBall<K>::E) = 0.0;
        b.at(i, TerrainBall<K>::Mu) = 0.0;
        break;
      case 1:  // drag times speed overflows: non-finite state
        b.at(i, TerrainBall<K>::C) = 1e300;
        b.at(i, TerrainBall<K>::Vx0) = 1e10;
        break;
      case 2:  // invalid width (mark_invalid_rows)
        if (K > 0) b.at(i, TerrainBall<K>::Bump0 + 2) = -1.0;
        break;
      case 3:  // launched upward and fast: long free flight, few events
        b.at(i, TerrainBall<K>::Vy0) = 6.0;
        break;
      case 4:  // starts level, just above a bump's top at x = 0: a near-grazing first contact
        if (K > 0) {
          b.at(i, TerrainBall<K>::Vy0) = 0.0;
          b.at(i, TerrainBall<K>::Bump0) = 1.0 - 1e-7;
          b.at(i, TerrainBall<K>::Bump0 + 1) = 0.0;
        }
        break;
    }
  }
  return b;
}

std::vector<Options> option_sets() {
  Options settle;
  settle.t_final = 2.0005;  // the last step is dt / 2
  settle.v_stop = 0.25;
  settle.mark_invalid_rows = true;
  Options zeno = settle;
  zeno.v_stop = 0.0;
  zeno.t_final = 3.0;
  Options capacity = zeno;
  capacity.event_capacity = 3;
  return {settle, zeno, capacity};
}

// The same option sets with no interior probes and with three: a model without a guard bound
// screens its free steps in vectors on the dense output, or at the end alone.
std::vector<Options> probe_option_sets() {
  std::vector<Options> sets;
  for (int probes : {0, 3})
    for (Options o : option_sets()) {
      o.probes = probes;
      sets.push_back(o);
    }
  return sets;
}

// Every output policy, lanes against the scalar driver, on each target and thread count, forward
// and (unless `forward_only`) with sensitivities (the tangent in lanes; the observer's
// derivatives along three parameters); `exercised(full record, options)` checks what the batch
// went through.
template <class Model, class Exercised>
void check_lanes(const Model& model, const Batch& batch, const std::vector<Options>& option_list, Exercised&& exercised,
                 bool forward_only = false) {
  const std::vector<std::string> targets = lane_targets();
  if (targets.empty()) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512";
  const std::vector<ObjectiveSpec> objectives = {
      {ObjectiveKind::EventTime, 1}, {ObjectiveKind::FinalState, 0, 0}, {ObjectiveKind::EventCount}};
  SCOPED_TRACE(Model::name);
  for (const Options& options : option_list) {
    for (const bool sens : {false, true}) {
      if (sens && forward_only) continue;
      for (int threads : {1, 3}) {
        Options o = normalize_options(options);
        o.threads = threads;
        o.sensitivities = sens;
        const std::vector<int> design = sens ? std::vector<int>{0, 2, Model::P - 1} : std::vector<int>{};
        Result full(batch.n, Model::N, Model::P, o.event_capacity, sens);
        Result final_state(batch.n, Model::N, Model::P, 0, sens);
        Observation observed(batch.n, objectives, design);
        cpu::solve<core::FullRecord>(model, batch.theta.data(), batch.n, o, full.view());
        cpu::solve<core::FinalState>(model, batch.theta.data(), batch.n, o, final_state.view());
        cpu::solve<core::ObjectiveObserver>(model, batch.theta.data(), batch.n, o, observed.view());
        for (const std::string& target : targets) {
          SimdChoice choice(target.c_str());
          SCOPED_TRACE("target " + target + ", threads " + std::to_string(threads) + ", v_stop " +
                       std::to_string(o.v_stop) + ", capacity " + std::to_string(o.event_capacity) +
                       ", sensitivities " + std::to_string(sens));
          Result lane_full(batch.n, Model::N, Model::P, o.event_capacity, sens);
          Result lane_final(batch.n, Model::N, Model::P, 0, sens);
          Observation lane_observed(batch.n, objectives, design);
          ASSERT_TRUE(
              cpu::solve_lanes<core::FullRecord>(model, batch.theta.data(), batch.n, o, lane_full.view(), nullptr));
          ASSERT_TRUE(
              cpu::solve_lanes<core::FinalState>(model, batch.theta.data(), batch.n, o, lane_final.view(), nullptr));
          ASSERT_TRUE(cpu::solve_lanes<core::ObjectiveObserver>(model, batch.theta.data(), batch.n, o,
                                                                lane_observed.view(), nullptr));
          expect_bitwise(lane_full, full);
          expect_bitwise(lane_final, final_state);
          expect_bitwise(lane_observed, observed);
        }
        exercised(full, o);
        if (sens) {
          EXPECT_FALSE(full.dqf.empty());
        }
      }
    }
  }
}

// How many trajectories of r ended with each status.
std::vector<int> endings(const Result& r) {
  std::vector<int> ends(status_count, 0);
  for (std::size_t i = 0; i < r.n; ++i) ++ends[r.status[i]];
  return ends;
}

// What the ball's and the terrain's batches go through (one option set shows each ending).
void expect_impact_endings(const Result& full, const Options& o) {
  const std::vector<int> ends = endings(full);
  EXPECT_GT(ends[static_cast<int>(Status::NonFinite)], 0);
  EXPECT_GT(ends[static_cast<int>(Status::InvalidInput)], 0);
  if (o.event_capacity == 3) {
    EXPECT_GT(ends[static_cast<int>(Status::EventCapacity)], 0);
  }
  if (o.v_stop == 0.0 && o.event_capacity > 3) {
    EXPECT_GT(ends[static_cast<int>(Status::Zeno)], 0);
  }
  if (o.v_stop > 0.0) {
    EXPECT_GT(ends[static_cast<int>(Status::Settled)], 0);
  }
}

template <int K>
void check_terrain(std::size_t n) {
  check_lanes(TerrainBall<K>{}, mixed_batch<K>(n), option_sets(), [](const Result& full, const Options& o) {
    if (K > 0) {
      expect_impact_endings(full, o);
    } else {  // no bumps, so no bump's width to make a row invalid
      EXPECT_GT(endings(full)[static_cast<int>(Status::NonFinite)], 0);
    }
  });
}

// The bouncing ball's mixed batch: drops and throws that bounce, settle or chatter (e = 0), with
// rows that blow up, rows out of the domain, a ball starting at rest on the ground and throws that
// dip back to the ground within a step of their start.
Batch ball_batch(std::size_t n) {
  Batch b(n, BouncingBall::P);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(i) / n;
    b.at(i, BouncingBall::H0) = 0.3 + 1.7 * u;
    b.at(i, BouncingBall::V0) = 3.0 * std::sin(7.0 * i) - 1.0;
    b.at(i, BouncingBall::E) = 0.5 + 0.45 * std::cos(3.0 * i) * std::cos(3.0 * i);
    switch (i % 7) {
      case 0: b.at(i, BouncingBall::E) = 0.0; break;  // stops dead at its first impact: Zeno or settled
      case 1: b.at(i, BouncingBall::H0) = b.at(i, BouncingBall::V0) = 1e308; break;  // overflows
      case 2: b.at(i, BouncingBall::E) = 1.5; break;                                 // invalid
      case 3: b.at(i, BouncingBall::H0) = b.at(i, BouncingBall::V0) = 0.0; break;    // at rest on the ground
      case 4:  // a shallow hop: back on the ground within one step
        b.at(i, BouncingBall::H0) = 1e-6;
        b.at(i, BouncingBall::V0) = 1e-3;
        break;
      default: break;
    }
  }
  return b;
}

// The thermostat's mixed batch: switching On and Off between T_low and T_high, rows switching at
// t = 0, rows that blow up (tau tiny, Q huge) and rows out of the domain.
Batch thermostat_batch(std::size_t n) {
  Batch b(n, Thermostat::P);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(i) / n;
    b.at(i, Thermostat::T0) = 19.0 + 2.0 * u;
    b.at(i, Thermostat::TEnv) = 10.0;
    b.at(i, Thermostat::Tau) = 0.3 + 0.5 * std::cos(5.0 * i) * std::cos(5.0 * i);
    b.at(i, Thermostat::Q) = 15.0 + 10.0 * u;
    b.at(i, Thermostat::TLow) = 19.0;
    b.at(i, Thermostat::THigh) = 21.0;
    switch (i % 6) {
      case 0: b.at(i, Thermostat::T0) = 25.0; break;  // On above T_high: switches Off at t = 0
      case 1:                                         // overflows
        b.at(i, Thermostat::Tau) = 1e-300;
        b.at(i, Thermostat::Q) = 1e300;
        break;
      case 2: b.at(i, Thermostat::THigh) = 18.0; break;  // T_high below T_low: invalid
      default: break;
    }
  }
  return b;
}

// dopri5's option sets: the impact sets at two tolerances (steps bounded by dt_max where the
// terrain has bumps), and one whose steps run out (status step_limit).
std::vector<Options> adaptive_option_sets(double dt_max) {
  std::vector<Options> sets;
  for (double tol : {1e-6, 1e-10})
    for (Options o : option_sets()) {
      o.method = Method::Dopri5;
      o.rtol = tol;
      o.atol = tol;
      o.dt_max = dt_max;
      sets.push_back(o);
    }
  Options limited = sets[sets.size() - 2];  // zeno's: room for every event
  limited.max_steps = 8;
  sets.push_back(limited);
  return sets;
}

// What an adaptive batch goes through: invalid rows, events, rows that blow up (non-finite, or
// their steps shrinking below dt_min) where `blow_ups`, and with max_steps 8 rows that run out
// of steps.
auto adaptive_endings(bool blow_ups) {
  return [blow_ups](const Result& full, const Options& o) {
    const std::vector<int> ends = endings(full);
    EXPECT_GT(ends[static_cast<int>(Status::InvalidInput)], 0);
    if (o.max_steps == 8) {
      EXPECT_GT(ends[static_cast<int>(Status::StepLimit)], 0);
      return;
    }
    if (blow_ups) {
      EXPECT_GT(ends[static_cast<int>(Status::NonFinite)] + ends[static_cast<int>(Status::StepSizeUnderflow)], 0);
    }
    int events = 0;
    for (std::size_t i = 0; i < full.n; ++i) events += full.n_events[i];
    EXPECT_GT(events, 0);
  };
}

}  // namespace

// dopri5, forward: the lanes' trial steps taken together, each lane with its own step size (with
// sensitivities the built-in models keep the scalar driver; test_static_lanes and the model-file
// test run them in lanes).
TEST(SimdLanes, AdaptiveStepsBitwise) {
  check_lanes(TerrainBall<3>{}, mixed_batch<3>(61), adaptive_option_sets(0.01), adaptive_endings(true), true);
  check_lanes(TerrainBall<24>{}, mixed_batch<24>(29), adaptive_option_sets(0.01), adaptive_endings(true), true);
  check_lanes(BouncingBall{}, ball_batch(61), adaptive_option_sets(0.0), adaptive_endings(false), true);
  check_lanes(Thermostat{}, thermostat_batch(43), adaptive_option_sets(0.0), adaptive_endings(true), true);
}

TEST(SimdLanes, TerrainBallK0Bitwise) { check_terrain<0>(61); }
TEST(SimdLanes, TerrainBallK3Bitwise) { check_terrain<3>(61); }
TEST(SimdLanes, TerrainBallK24Bitwise) { check_terrain<24>(61); }
TEST(SimdLanes, TerrainBallK192Bitwise) { check_terrain<192>(29); }

// Models without a guard bound: free steps screened in vectors (guards at the end and, with
// probes, on the dense output), with probes 0 and 3.
TEST(SimdLanes, BouncingBallBitwise) {
  check_lanes(BouncingBall{}, ball_batch(61), probe_option_sets(), expect_impact_endings);
}
TEST(SimdLanes, ThermostatBitwise) {
  check_lanes(Thermostat{}, thermostat_batch(43), probe_option_sets(), [](const Result& full, const Options&) {
    const std::vector<int> ends = endings(full);
    EXPECT_GT(ends[static_cast<int>(Status::NonFinite)], 0);
    EXPECT_GT(ends[static_cast<int>(Status::InvalidInput)], 0);
    int switches = 0;
    for (std::size_t i = 0; i < full.n; ++i) switches += full.n_events[i];
    EXPECT_GT(switches, static_cast<int>(full.n));
  });
}

// Launched high above the terrain: every step is free flight, taken in vectors, until t_final;
// with sensitivities the tangent's pending full steps are all applied at the end.
TEST(SimdLanes, FreeFlightBitwise) {
  TerrainBall<3> model;
  model.y0 = 100.0;
  const Batch batch = sample_terrain_batch<3>(21, 5);
  const std::vector<std::string> targets = lane_targets();
  if (targets.empty()) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512";
  for (const bool sens : {false, true}) {
    Options o;
    o.t_final = 1.0005;
    o.sensitivities = sens;
    o = normalize_options(o);
    Result scalar(batch.n, 4, model.P, o.event_capacity, sens);
    cpu::solve<core::FullRecord>(model, batch.theta.data(), batch.n, o, scalar.view());
    for (std::size_t i = 0; i < batch.n; ++i) {
      ASSERT_EQ(scalar.status_of(i), Status::Finished);
      ASSERT_EQ(scalar.n_events[i], 0);
    }
    for (const std::string& target : targets) {
      SimdChoice choice(target.c_str());
      Result lanes = solve(model, batch, o, Backend::Cpu);  // solve() takes the lanes by default
      expect_bitwise(lanes, scalar);
    }
  }
}

// What solve() chooses: lanes for terrain-ball runs, forward and with sensitivities (an affine
// flow), unless SALTATION_SIMD=0; the scalar driver for models without lanes.
TEST(SimdLanes, Choice) {
  static_assert(has_cpu_lanes<TerrainBall<3>>::value && has_cpu_lanes<TerrainBall<192>>::value);
  static_assert(!has_cpu_lanes<TerrainBall<5>>::value, "only the built-in bump counts are compiled");
  static_assert(has_cpu_lanes<BouncingBall>::value && has_cpu_lanes<Thermostat>::value,
                "models without a guard bound have lanes too");
  const Batch batch = sample_terrain_batch<3>(10, 3);
  Options o = normalize_options(Options{});
  Result r(batch.n, 4, TerrainBall<3>::P, o.event_capacity, true);
  static_assert(has_affine_flow<TerrainBall<3>>::value, "its sensitivities run in the lanes too");
  for (const bool sens : {false, true}) {
    o.sensitivities = sens;
    SimdChoice off("0");
    EXPECT_EQ(cpu::lane_target().width, 0);
    EXPECT_STREQ(cpu::lane_target().name, "none");
    EXPECT_FALSE(
        cpu::solve_lanes<core::FullRecord>(TerrainBall<3>{}, batch.theta.data(), batch.n, o, r.view(), nullptr));
  }
  if (lane_targets().empty()) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512";
  SimdChoice best("best");
  const cpu::LaneTarget target = cpu::lane_target();
  EXPECT_TRUE(target.width == 8 || target.width == 4) << target.name;
  for (const bool sens : {false, true}) {
    o.sensitivities = sens;
    EXPECT_TRUE(
        cpu::solve_lanes<core::FullRecord>(TerrainBall<3>{}, batch.theta.data(), batch.n, o, r.view(), nullptr));
  }
}

// Progress is reported from the lanes as from the scalar driver: last call done == total.
TEST(SimdLanes, ProgressEndsAtTotal) {
  if (lane_targets().empty()) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512";
  const Batch batch = sample_terrain_batch<3>(300, 8);
  std::size_t last_done = 0, calls = 0;
  const Progress progress = [&](std::size_t done, std::size_t total) {
    EXPECT_EQ(total, batch.n);
    EXPECT_GE(done, last_done);
    last_done = done;
    ++calls;
  };
  Options o;
  o.threads = 1;
  solve(TerrainBall<3>{}, batch, o, Backend::Cpu, progress);
  EXPECT_EQ(last_done, batch.n);
  EXPECT_GT(calls, 10u);
}
