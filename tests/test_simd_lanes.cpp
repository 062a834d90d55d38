// The CPU's SIMD lanes (cpu_lanes.hpp, docs/simd_lanes.md) against the scalar CPU driver
// (cpu::solve, one trajectory per thread): every output array bitwise equal, for each terrain ball
// the lanes are compiled for, each output policy, on each vector target this CPU has (AVX-512 and
// AVX2 through SALTATION_SIMD), with 1 and 3 threads, over batches that mix bounces, settling,
// Zeno chatter, event-capacity overflow, a blow-up to non-finite values, invalid rows, near-grazing
// starts, free flight that never lands and a last step shorter than dt.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

// Every element the same bits, except that a NaN matches any NaN: its sign bit is whatever the
// instruction that made it (or the operand order the compiler chose for it) gives, and means nothing.
template <class A, class B>
void expect_bitwise(A& a, B& b) {
  const auto same = [](const auto& x, const auto& y) {
    ASSERT_EQ(x.size(), y.size());
    std::size_t differing = 0;
    for (std::size_t k = 0; k < x.size(); ++k) {
      const bool both_nan = x[k] != x[k] && y[k] != y[k];
      if (!both_nan && std::memcmp(&x[k], &y[k], sizeof(x[k])) != 0) ++differing;
    }
    EXPECT_EQ(differing, 0u);
  };
  if constexpr (std::is_same_v<A, Observation>) Observation::zip(a, b, same);
  else zip_arrays(a, b, same);
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

// Every output policy, lanes against the scalar driver, on each target and thread count, forward
// and with sensitivities (the free steps' tangent in lanes; the observer's derivatives along three
// parameters).
template <class Model>
void check_lanes(const Model& model, const Batch& batch) {
  const std::vector<std::string> targets = lane_targets();
  if (targets.empty()) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512";
  const std::vector<ObjectiveSpec> objectives = {
      {ObjectiveKind::EventTime, 1}, {ObjectiveKind::FinalState, 0, 0}, {ObjectiveKind::EventCount}};
  for (const Options& options : option_sets()) {
    for (const bool sens : {false, true}) {
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
        // What the batch exercised (one option set shows each ending).
        int ends[8] = {};
        for (std::size_t i = 0; i < batch.n; ++i) ++ends[full.status[i]];
        EXPECT_GT(ends[static_cast<int>(Status::NonFinite)], 0);
        if (Model::bumps > 0) {
          EXPECT_GT(ends[static_cast<int>(Status::InvalidInput)], 0);
        }
        if (o.event_capacity == 3) {
          EXPECT_GT(ends[static_cast<int>(Status::EventCapacity)], 0);
        }
        if (o.v_stop == 0.0 && o.event_capacity > 3) {
          EXPECT_GT(ends[static_cast<int>(Status::Zeno)], 0);
        }
        if (o.v_stop > 0.0) {
          EXPECT_GT(ends[static_cast<int>(Status::Settled)], 0);
        }
        if (sens) {
          EXPECT_FALSE(full.dqf.empty());
        }
      }
    }
  }
}

}  // namespace

TEST(SimdLanes, TerrainBallK0Bitwise) { check_lanes(TerrainBall<0>{}, mixed_batch<0>(61)); }
TEST(SimdLanes, TerrainBallK3Bitwise) { check_lanes(TerrainBall<3>{}, mixed_batch<3>(61)); }
TEST(SimdLanes, TerrainBallK24Bitwise) { check_lanes(TerrainBall<24>{}, mixed_batch<24>(61)); }
TEST(SimdLanes, TerrainBallK192Bitwise) { check_lanes(TerrainBall<192>{}, mixed_batch<192>(29)); }

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
  static_assert(!has_cpu_lanes<BouncingBall>::value && !has_cpu_lanes<Thermostat>::value,
                "models without a guard bound take the scalar driver");
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
