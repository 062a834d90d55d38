#pragma once
// The problems the peers solve (bench/README.md, "Peers"): each names its model type, its rows, the
// options every tool follows (end time, event capacity, settling), and which pre-event state
// components the record keeps. A peer is written once over a problem (peer_common.hpp's dispatch).
#include <cmath>
#include <cstddef>

#include "../file_models.hpp"
#include "../terrain_batch.hpp"
#include "file_model_types.hpp"
#include "saltation/models/terrain_ball.hpp"

namespace peers {

// The terrain ball on bench/terrain_batch.hpp's rows, seed_options: t_final 3, an impact slower
// than v_stop = 0.25 in the normal direction settles the ball, event capacity 16.
template <int K>
struct TerrainProblem {
  using Model = saltation::TerrainBall<K>;
  static constexpr int event_states = 2;    // the impact position x, y
  static constexpr bool from_file = false;  // saltation solves the model type itself

  static saltation::Batch rows(std::size_t n) { return saltation_bench::terrain_batch(n, K); }
  static saltation::Options options(bool sens) { return saltation_bench::seed_options(sens, 1); }
  // Normal speed |v . n| of the pre-impact state q below v_stop (the library's impact_speed for
  // this guard).
  static bool settles(const Model& m, const double* q, const double* th, const saltation::Options& o) {
    double h, dh;
    m.terrain(q[0], th, h, dh);
    return std::fabs(q[3] - dh * q[2]) / std::sqrt(1.0 + dh * dh) < o.v_stop;
  }
};

// A model file of bench/models (its type in file_model_types.hpp) on the rows of its box
// (bench/file_models.hpp), the problem of bench_probe_cost: t_final 20, event capacity 64, the
// library's default options otherwise (no settling).
template <class M>
struct FileModelProblem {
  using Model = M;
  static constexpr int event_states = M::N;  // the whole pre-event state
  static constexpr bool from_file = true;    // saltation solves the model file, not the type

  static saltation::Batch rows(std::size_t n) {
    const saltation_bench::ModelFileBox& box = saltation_bench::nonlinear_box(M::name);
    return saltation_bench::uniform_rows(n, box.lo, box.hi);
  }
  static saltation::Options options(bool sens) {
    saltation::Options o;
    o.t_final = 20.0;
    o.event_capacity = 64;
    o.threads = 1;
    o.sensitivities = sens;
    return o;
  }
  static bool settles(const Model&, const double*, const double*, const saltation::Options&) { return false; }
};

}  // namespace peers
