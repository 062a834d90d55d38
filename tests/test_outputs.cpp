// The output policies of the per-trajectory routine (docs/architecture.md, "Outputs"): the final
// state only and the objective observer give exactly what the full record gives for the same
// entries, on every backend, and an objective that is undefined for a trajectory is NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "backends.hpp"
#include "saltation/models/terrain_ball.hpp"
#include "saltation/models/thermostat.hpp"
#include "terrain_samples.hpp"

namespace {

using saltation::Batch;
using saltation::ObjectiveKind;
using saltation::ObjectiveSpec;
using saltation::Observation;
using saltation::Options;
using saltation::Result;
using saltation::Status;

using Model = saltation::TerrainBall<3>;
using Outputs = saltation::testing::BackendTest;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kCapacity = 6;

// Bouncing rows, then one invalid row (a NaN parameter), kept as a row by mark_invalid_rows.
Batch sample_batch() {
  std::mt19937_64 rng(23);
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 40; ++i) rows.push_back(saltation::sample_terrain_row<3>(rng));
  rows.push_back(rows.front());
  rows.back()[0] = kNaN;
  return Batch::from_rows(rows, Model::P);
}

Options options(bool sensitivities) {
  Options o;
  o.t_final = 2.0;
  o.dt = 1e-3;
  o.event_capacity = kCapacity;
  o.mark_invalid_rows = true;
  o.sensitivities = sensitivities;
  return o;
}

// Every kind, with the last event slot (which few trajectories reach) for the undefined case.
std::vector<ObjectiveSpec> objectives() {
  std::vector<ObjectiveSpec> list(7);
  list[0].kind = ObjectiveKind::EventTime;
  list[0].event = 0;
  list[1].kind = ObjectiveKind::EventState;
  list[1].event = 1;
  list[1].state = 3;
  list[2].kind = ObjectiveKind::Landing;
  list[2].event = 0;
  list[2].state = 0;
  list[2].target = 0.5;
  list[3].kind = ObjectiveKind::FinalState;
  list[3].state = 2;
  list[4].kind = ObjectiveKind::EventCount;
  list[5].kind = ObjectiveKind::StatusIs;
  list[5].status = static_cast<int>(Status::Finished);
  list[6].kind = ObjectiveKind::EventTime;
  list[6].event = kCapacity - 1;
  return list;
}

const std::vector<int> kDesign = {0, 3, 7};

// The objective's value and derivative read off the full record, as the sweep read them before
// the observer existed.
double value_from_record(const ObjectiveSpec& o, const Result& r, std::size_t i) {
  const bool has_event = r.n_events[i] > o.event;
  switch (o.kind) {
    case ObjectiveKind::EventTime: return has_event ? r.event_time(i, o.event) : kNaN;
    case ObjectiveKind::EventState: return has_event ? r.event_q(i, o.event, o.state) : kNaN;
    case ObjectiveKind::FinalState: return r.qf_of(i, o.state);
    case ObjectiveKind::EventCount: return r.n_events[i];
    case ObjectiveKind::Landing: {
      if (!has_event) return kNaN;
      const double miss = r.event_q(i, o.event, o.state) - o.target;
      return miss * miss;
    }
    case ObjectiveKind::StatusIs: return r.status[i] == o.status ? 1.0 : 0.0;
  }
  return kNaN;
}

double derivative_from_record(const ObjectiveSpec& o, const Result& r, std::size_t i, int p) {
  if (r.status_of(i) == Status::InvalidInput || (o.kind != ObjectiveKind::FinalState && r.n_events[i] <= o.event))
    return kNaN;
  switch (o.kind) {
    case ObjectiveKind::EventTime: return r.event_dt(i, o.event, p);
    case ObjectiveKind::EventState: return r.event_dq(i, o.event, o.state, p);
    case ObjectiveKind::FinalState: return r.dqf_of(i, o.state, p);
    case ObjectiveKind::Landing:
      return 2.0 * (r.event_q(i, o.event, o.state) - o.target) * r.event_dq(i, o.event, o.state, p);
    default: return kNaN;
  }
}

// Equal bits, or both NaN (whatever their payloads).
bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

template <class T>
bool same_bytes(const saltation::HostArray<T>& a, const saltation::HostArray<T>& b) {
  // An empty vector's data() may be null, which memcmp must not be given (UBSan).
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

TEST_P(Outputs, FinalStateEqualsFullRecord) {
  const Batch batch = sample_batch();
  for (bool sens : {false, true}) {
    const Result full = saltation::solve(Model{}, batch, options(sens), backend());
    const Result final_state = saltation::solve_final_state(Model{}, batch, options(sens), backend());
    EXPECT_EQ(final_state.C, 0);
    EXPECT_TRUE(final_state.ev_t.empty() && final_state.ev_q.empty() && final_state.ev_dq.empty());
    EXPECT_TRUE(same_bytes(final_state.status, full.status)) << "sensitivities " << sens;
    EXPECT_TRUE(same_bytes(final_state.n_events, full.n_events)) << "sensitivities " << sens;
    EXPECT_TRUE(same_bytes(final_state.t_end, full.t_end)) << "sensitivities " << sens;
    EXPECT_TRUE(same_bytes(final_state.qf, full.qf)) << "sensitivities " << sens;
    EXPECT_TRUE(same_bytes(final_state.dqf, full.dqf)) << "sensitivities " << sens;
  }
}

TEST_P(Outputs, ObserverEqualsFullRecord) {
  const Batch batch = sample_batch();
  const std::vector<ObjectiveSpec> list = objectives();
  for (bool sens : {false, true}) {
    const std::vector<int> design = sens ? kDesign : std::vector<int>{};
    const Result full = saltation::solve(Model{}, batch, options(sens), backend());
    const Observation obs = saltation::observe(Model{}, batch, options(sens), list, design, backend());
    int expected_outputs = 0;
    for (const ObjectiveSpec& o : list)
      expected_outputs += 1 + (o.differentiable() ? static_cast<int>(design.size()) : 0);
    ASSERT_EQ(obs.n_outputs, expected_outputs);
    ASSERT_EQ(obs.values.size(), batch.n * expected_outputs);
    EXPECT_TRUE(same_bytes(obs.status, full.status));
    EXPECT_TRUE(same_bytes(obs.n_events, full.n_events));
    for (std::size_t i = 0; i < batch.n; ++i) {
      int row = 0;
      for (std::size_t k = 0; k < list.size(); ++k) {
        const ObjectiveSpec& o = list[k];
        EXPECT_TRUE(same(obs.value(i, row), value_from_record(o, full, i)))
            << "objective " << k << " row " << i << ": " << obs.value(i, row) << " vs "
            << value_from_record(o, full, i);
        ++row;
        if (!o.differentiable()) continue;
        for (int p : design) {
          EXPECT_TRUE(same(obs.value(i, row), derivative_from_record(o, full, i, p)))
              << "objective " << k << " d/dtheta_" << p << " row " << i;
          ++row;
        }
      }
    }
  }
}

TEST_P(Outputs, UndefinedObjectivesAreNaN) {
  const Batch batch = sample_batch();
  const std::vector<ObjectiveSpec> list = objectives();
  const Observation obs = saltation::observe(Model{}, batch, options(true), list, kDesign, backend());
  const int width = 1 + static_cast<int>(kDesign.size());
  // Rows of objectives 0..3 (differentiable), 4 and 5 (value only), then 6, the last event slot.
  const int last_event_row = 4 * width + 2;
  const int final_state_row = 3 * width;
  int short_rows = 0;
  for (std::size_t i = 0; i + 1 < batch.n; ++i) {
    if (obs.n_events[i] >= kCapacity) continue;
    ++short_rows;
    for (int w = 0; w < width; ++w) EXPECT_TRUE(std::isnan(obs.value(i, last_event_row + w))) << "row " << i;
  }
  EXPECT_GT(short_rows, 0) << "no trajectory ends with fewer events than the capacity: the case is not exercised";

  const std::size_t invalid = batch.n - 1;
  ASSERT_EQ(obs.status[invalid], static_cast<int>(Status::InvalidInput));
  EXPECT_EQ(obs.n_events[invalid], 0);
  // Every event objective and every derivative is NaN; the final state is the initial one (a NaN
  // parameter may make it NaN too), the count 0 and the status indicator 0.
  for (int row = 0; row < obs.n_outputs; ++row) {
    if (row != final_state_row && row != 4 * width && row != 4 * width + 1) {
      EXPECT_TRUE(std::isnan(obs.value(invalid, row))) << "output row " << row << " of the invalid row";
    }
  }
  EXPECT_EQ(obs.value(invalid, 4 * width), 0.0);
  EXPECT_EQ(obs.value(invalid, 4 * width + 1), 0.0);
}

TEST_P(Outputs, ObserverRefusesWhatItCannotObserve) {
  const Batch batch = sample_batch();
  std::vector<ObjectiveSpec> past_capacity = objectives();
  past_capacity[0].event = kCapacity;
  EXPECT_THROW(saltation::observe(Model{}, batch, options(true), past_capacity, kDesign, backend()),
               saltation::InvalidInput);
  EXPECT_THROW(saltation::observe(Model{}, batch, options(true), objectives(), {Model::P}, backend()),
               saltation::InvalidInput);
  EXPECT_THROW(saltation::observe(Model{}, batch, options(false), objectives(), kDesign, backend()),
               saltation::InvalidInput);
}

// The thermostat starts On and switches Off (guard 0) and On (guard 1) in turn: guard 1's k-th
// event is event 2k + 1, guard 0's k-th is event 2k, and objectives that name a guard read them.
TEST_P(Outputs, ObjectivesNamingAGuardCountItsEvents) {
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 16; ++i) rows.push_back({19.0 + 0.1 * i, 10.0, 1.0 + 0.05 * i, 20.0, 18.0, 22.0});
  const Batch batch = Batch::from_rows(rows, saltation::Thermostat::P);
  Options o = options(true);
  o.t_final = 3.0;
  auto spec = [](ObjectiveKind kind, int event, int guard) {
    ObjectiveSpec s;
    s.kind = kind;
    s.event = event;
    s.guard = guard;
    return s;
  };
  const std::vector<ObjectiveSpec> by_guard = {spec(ObjectiveKind::EventTime, 0, 1),
                                               spec(ObjectiveKind::EventState, 1, 0),
                                               spec(ObjectiveKind::EventTime, kCapacity - 1, 1)};
  const std::vector<ObjectiveSpec> by_index = {spec(ObjectiveKind::EventTime, 1, -1),
                                               spec(ObjectiveKind::EventState, 2, -1)};
  const std::vector<int> design = {0, 2, 5};
  const Observation a = saltation::observe(saltation::Thermostat{}, batch, o, by_guard, design, backend());
  const Observation b = saltation::observe(saltation::Thermostat{}, batch, o, by_index, design, backend());
  const int width = 1 + static_cast<int>(design.size());
  int defined = 0;
  for (std::size_t i = 0; i < batch.n; ++i) {
    ASSERT_GE(a.n_events[i], 3) << "row " << i;
    for (int row = 0; row < 2 * width; ++row) {
      EXPECT_TRUE(same(a.value(i, row), b.value(i, row))) << "output row " << row << " of row " << i;
      defined += std::isfinite(a.value(i, row));
    }
    // Guard 1's last counted event would be event 2 kCapacity - 1, past the capacity: never recorded.
    for (int w = 0; w < width; ++w) EXPECT_TRUE(std::isnan(a.value(i, 2 * width + w))) << "row " << i;
  }
  EXPECT_EQ(defined, static_cast<int>(batch.n) * 2 * width);

  std::vector<ObjectiveSpec> no_such_guard = by_guard;
  no_such_guard[0].guard = saltation::Thermostat::M;
  EXPECT_THROW(saltation::observe(saltation::Thermostat{}, batch, o, no_such_guard, design, backend()),
               saltation::InvalidInput);
}

SALTATION_INSTANTIATE_ON_EVERY_BACKEND(Outputs);

}  // namespace
