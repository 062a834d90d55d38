// The CUDA driver's warp loop (kernels/solve.cuh, docs/warp_events.md) emulated on the CPU: warps
// of 32 lanes stepped in lockstep through core::WarpLane's phases, with the vote taken over the
// lanes as __ballot_sync takes it. Deferring event localisation changes when a lane localises, and
// refill which lane runs a row, never what it computes: every result array is bitwise that of the
// CPU driver's run(), with deferral off, with the standard policy and with extreme ones, with a
// thread per row and with two warps whose lanes take the next row as theirs end. With
// sensitivities the lanes also record their events' maps instead of jumping the parameter columns,
// and the columns are composed from the records afterwards, as the CUDA driver's second kernel
// does (core/columns.hpp): the same bits again.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "saltation/core/columns.hpp"
#include "saltation/core/warp.hpp"
#include "saltation/host_arrays.hpp"
#include "saltation/models/bouncing_ball.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/solve.hpp"
#include "terrain_samples.hpp"

using namespace saltation;

namespace {

constexpr std::size_t kWarp = 32;

struct WarpCounts {
  long events = 0;         // localisations of single lanes
  long localisations = 0;  // lockstep localisation passes (one per vote that said yes)
};

// `launched` threads (whole warps) over the batch's rows, as a launch of that grid: each lane
// starts on the row of its index, and with fewer threads than rows the lanes whose trajectory
// ended claim the next rows, a warp's lanes in lane order (claim_row in kernels/solve.cuh). The
// warps take turns an iteration at a time, as warps interleave on a device.
template <bool Sens, Method Stepping, class Output, class Model>
void run_warps(const Model& model, const Batch& batch, const Options& o, core::WarpDeferral deferral,
               const typename Output::View& out, std::size_t launched, WarpCounts& counts) {
  using Lane = core::WarpLane<Model, RowParams, Sens, Output, Stepping>;
  auto row_params = [&](std::size_t i) { return RowParams{batch.theta.data() + i, batch.n}; };
  struct Warp {
    std::vector<Lane> lanes;
    std::vector<bool> rows_left;
    bool done = false;
  };
  std::vector<Warp> warps;
  for (std::size_t first = 0; first < launched; first += kWarp) {
    Warp w;
    w.lanes.reserve(kWarp);
    for (std::size_t i = first; i < first + kWarp; ++i) {
      const bool in_batch = i < batch.n;  // the last warp of a batch that is not a multiple of 32
      w.lanes.emplace_back(model, o, row_params(in_batch ? i : 0), i, out, in_batch);
    }
    w.rows_left.assign(kWarp, launched < batch.n);
    warps.push_back(std::move(w));
  }
  std::size_t claimed = 0;
  auto iterate = [&](Warp& w) {
    for (std::size_t k = 0; k < kWarp; ++k) {
      if (!w.rows_left[k] || !w.lanes[k].ended()) continue;
      const std::size_t row = launched + claimed++;
      if (row < batch.n) {
        w.lanes[k].take_row(row_params(row), row);
      } else {
        w.rows_left[k] = false;
      }
    }
    w.done = true;
    for (std::size_t k = 0; k < kWarp; ++k) w.done = w.done && w.lanes[k].ended() && !w.rows_left[k];
    if (w.done) return;
    for (Lane& lane : w.lanes) lane.step_phase();
    int pending = 0, stepping = 0;
    bool expired = false;
    for (const Lane& lane : w.lanes) {
      pending += lane.pending();
      stepping += lane.stepping();
      expired = expired || lane.expired(deferral);
    }
    const bool localise = deferral.localise_now(pending, stepping, expired);
    if (localise) {
      ++counts.localisations;
      counts.events += pending;
    }
    for (Lane& lane : w.lanes) lane.localise_phase(localise);
  };
  for (bool running = true; running;) {
    running = false;
    for (Warp& w : warps) {
      if (w.done) continue;
      iterate(w);
      running = true;
    }
  }
}

// The lanes' run into `out` through the Output policy, for the options' method; with
// `columns_apart` (sensitivities only) the lanes record their columns and compose_columns forms
// them, every row a chunk of columns at a time. `threads` 0: a thread per row (rounded up to whole
// warps), no refill.
template <class Output, class Model>
void run_in_warps(const Model& model, const Batch& batch, const Options& o, core::WarpDeferral deferral,
                  std::size_t threads, bool columns_apart, const typename Output::View& out, WarpCounts& counts) {
  const std::size_t launched = threads > 0 ? threads : (batch.n + kWarp - 1) / kWarp * kWarp;
  auto run = [&](auto stepping) {
    constexpr Method kStepping = decltype(stepping)::value;
    if (!o.sensitivities) {
      run_warps<false, kStepping, Output>(model, batch, o, deferral, out, launched, counts);
    } else if (!columns_apart) {
      run_warps<true, kStepping, Output>(model, batch, o, deferral, out, launched, counts);
    } else {
      using Recording = core::RecordingColumns<Model, Output>;
      core::ColumnRecordArrays<Model, typename Output::ColumnNote, HostArray> records(batch.n, core::jumps_per_row(o));
      run_warps<true, kStepping, Recording>(model, batch, o, deferral, {out, records.view()}, launched, counts);
      for (int p0 = 0; p0 < Model::P; p0 += core::kChunk)
        for (std::size_t i = 0; i < batch.n; ++i)
          core::compose_columns<Output>(model, RowParams{batch.theta.data() + i, batch.n}, i, out, records.view(), p0);
    }
  };
  if (o.method == Method::Dopri5) {
    run(std::integral_constant<Method, Method::Dopri5>{});
  } else {
    run(std::integral_constant<Method, Method::Rk4>{});
  }
}

template <class Model>
Result solve_in_warps(const Model& model, const Batch& batch, const Options& options, core::WarpDeferral deferral,
                      std::size_t threads, bool columns_apart, WarpCounts& counts) {
  const Options o = normalize_options(options);
  Result result(batch.n, Model::N, Model::P, o.event_capacity, o.sensitivities);
  run_in_warps<core::FullRecord>(model, batch, o, deferral, threads, columns_apart, result.view(), counts);
  return result;
}

void expect_bitwise_equal(const Result& a, const Result& b) {
  zip_arrays(a, b, [](const auto& x, const auto& y) {
    ASSERT_EQ(x.size(), y.size());
    // An empty array's data() may be null, which memcmp must not be given (UBSan).
    if (!x.empty()) {
      EXPECT_EQ(0, std::memcmp(x.data(), y.data(), x.size() * sizeof(*x.data())));
    }
  });
}

Options terrain_options(bool sensitivities) {
  Options o;
  o.t_final = 3.0;
  o.dt = 1e-3;
  o.v_stop = 0.25;
  o.sensitivities = sensitivities;
  o.threads = 1;
  return o;
}

// Every policy against the CPU driver, forward and with sensitivities (the columns jumped in the
// lanes and composed apart), with a thread per row and with two warps that refill. Returns the
// counts of the standard policy with sensitivities and a thread per row, for checks that it did
// defer.
template <class Model>
WarpCounts check_policies(const Model& model, const Batch& batch, Options o) {
  const core::WarpDeferral policies[] = {core::WarpDeferral::off(), core::WarpDeferral::standard(),
                                         core::WarpDeferral{32, 1000000},  // wait for the whole warp
                                         core::WarpDeferral{2, 3}};
  WarpCounts standard;
  for (bool sens : {false, true}) {
    o.sensitivities = sens;
    const Result reference = solve(model, batch, o, Backend::Cpu);
    long events = 0;
    for (int e : reference.n_events) events += e;
    for (const core::WarpDeferral& d : policies)
      for (std::size_t threads : {std::size_t(0), 2 * kWarp})
        for (bool apart : {false, true}) {
          if (apart && !sens) continue;
          SCOPED_TRACE(std::string(sens ? "with sensitivities" : "forward") + ", min_pending " +
                       std::to_string(d.min_pending) + ", max_wait " + std::to_string(d.max_wait) +
                       (threads ? ", two warps refilling" : ", a thread per row") +
                       (apart ? ", columns composed apart" : ""));
          WarpCounts counts;
          expect_bitwise_equal(solve_in_warps(model, batch, o, d, threads, apart, counts), reference);
          EXPECT_GE(counts.events, events);  // terminal crossings past the capacity are localised, not recorded
          if (sens && threads == 0 && !apart && d.min_pending == core::WarpDeferral::standard().min_pending &&
              d.max_wait == core::WarpDeferral::standard().max_wait)
            standard = counts;
        }
  }
  return standard;
}

}  // namespace

// 100 trajectories: three full warps and one of 4 lanes.
TEST(WarpPolicy, TerrainBallK3BitwiseWithAndWithoutDeferral) {
  const WarpCounts c = check_policies(TerrainBall<3>{}, sample_terrain_batch<3>(100, 11), terrain_options(false));
  EXPECT_GT(c.events, 2 * c.localisations) << "the standard policy localised about one lane at a time";
}

TEST(WarpPolicy, TerrainBallK24BitwiseWithAndWithoutDeferral) {
  const WarpCounts c = check_policies(TerrainBall<24>{}, sample_terrain_batch<24>(100, 12), terrain_options(false));
  EXPECT_GT(c.events, 2 * c.localisations) << "the standard policy localised about one lane at a time";
}

// dopri5, each lane with its own steps, as the CUDA kernels run it.
TEST(WarpPolicy, AdaptiveStepsBitwiseWithAndWithoutDeferral) {
  Options o = terrain_options(false);
  o.method = Method::Dopri5;
  o.rtol = 1e-9;
  o.atol = 1e-9;
  o.dt_max = 0.01;
  const WarpCounts c = check_policies(TerrainBall<3>{}, sample_terrain_batch<3>(100, 13), o);
  EXPECT_GT(c.events, 2 * c.localisations) << "the standard policy localised about one lane at a time";
}

// Event-capacity endings, and trajectories that end at different steps.
TEST(WarpPolicy, BouncingBallBitwiseWithAndWithoutDeferral) {
  Batch batch(70, 3);
  for (std::size_t i = 0; i < batch.n; ++i) {
    batch.at(i, 0) = 0.5 + 0.02 * static_cast<double>(i);   // h0
    batch.at(i, 1) = 0.1 * static_cast<double>(i % 7);      // v0
    batch.at(i, 2) = 0.5 + 0.004 * static_cast<double>(i);  // e
  }
  Options o;
  o.t_final = 4.0;
  o.dt = 1e-3;
  o.event_capacity = 6;
  o.threads = 1;
  check_policies(BouncingBall{}, batch, o);
}

// The objective observer places an event's columns by what it noted at the event (its index,
// guard and occurrence): composed apart, from the note in the event's record, the same bits.
TEST(WarpPolicy, ObserverColumnsComposedApartBitwise) {
  const Batch batch = sample_terrain_batch<3>(100, 14);
  Options o = terrain_options(true);
  o.event_capacity = 4;
  std::vector<ObjectiveSpec> list(4);
  list[0].kind = ObjectiveKind::EventTime;
  list[0].event = 1;
  list[1].kind = ObjectiveKind::EventState;
  list[1].event = 2;
  list[1].guard = 0;
  list[1].state = 3;
  list[2].kind = ObjectiveKind::FinalState;
  list[2].state = 2;
  list[3].kind = ObjectiveKind::EventCount;
  const std::vector<int> design = {0, 3, 7, 13};
  const Observation reference = observe(TerrainBall<3>{}, batch, o, list, design, Backend::Cpu);
  Observation apart(batch.n, list, design);
  WarpCounts counts;
  run_in_warps<core::ObjectiveObserver>(TerrainBall<3>{}, batch, normalize_options(o), core::WarpDeferral::standard(),
                                        2 * kWarp, true, apart.view(), counts);
  Observation::zip(apart, reference, [](const auto& x, const auto& y) {
    ASSERT_EQ(x.size(), y.size());
    EXPECT_EQ(0, std::memcmp(x.data(), y.data(), x.size() * sizeof(*x.data())));
  });
  int defined = 0;
  for (double v : reference.values) defined += std::isfinite(v);
  EXPECT_GT(defined, static_cast<int>(batch.n) * 10) << "most event objectives and derivatives are defined";
}
