#pragma once
// Per-trajectory results in SoA arrays: entry (..., i) of trajectory i is contiguous in i, so
// a warp writes consecutive addresses. The views here are the raw pointers the per-trajectory
// code writes through (host or device memory); saltation/result.hpp owns host storage.
#include <cstddef>

#include "saltation/config.hpp"
#include "saltation/core/objectives.hpp"

namespace saltation {

// Bits of an event record's flags.
enum EventFlag : int { EventGrazing = 1 };

struct ResultView {
  std::size_t n = 0;  // trajectories
  int N = 0, P = 0, C = 0;
  bool sensitivities = false;
  int* status = nullptr;        // [n]
  double* t_end = nullptr;      // [n]
  double* qf = nullptr;         // [N][n]
  int* n_events = nullptr;      // [n]
  double* ev_t = nullptr;       // [C][n]
  int* ev_guard = nullptr;      // [C][n]
  int* ev_flags = nullptr;      // [C][n]
  double* ev_q = nullptr;       // [C][N][n]  pre-event state
  double* ev_q_plus = nullptr;  // [C][N][n]  post-event state
  double* dqf = nullptr;        // [N][P][n]  total derivative of qf
  double* ev_dt = nullptr;      // [C][P][n]  dt_e / dtheta
  double* ev_dq = nullptr;      // [C][N][P][n]  total derivative of the pre-event state

  SALTATION_HD std::size_t at(std::size_t row, std::size_t i) const { return row * n + i; }
  SALTATION_HD std::size_t qf_at(int k, std::size_t i) const { return at(k, i); }
  SALTATION_HD std::size_t ev_at(int c, std::size_t i) const { return at(c, i); }
  SALTATION_HD std::size_t ev_q_at(int c, int k, std::size_t i) const { return at(std::size_t(c) * N + k, i); }
  SALTATION_HD std::size_t dqf_at(int k, int p, std::size_t i) const { return at(std::size_t(k) * P + p, i); }
  SALTATION_HD std::size_t ev_dt_at(int c, int p, std::size_t i) const { return at(std::size_t(c) * P + p, i); }
  SALTATION_HD std::size_t ev_dq_at(int c, int k, int p, std::size_t i) const {
    return at((std::size_t(c) * N + k) * P + p, i);
  }
};

// ---- Objective observations: each trajectory reduced to a few objective values and their
// derivatives with respect to chosen (design) parameters, with nothing per event kept
// (core::ObjectiveObserver writes them).

// Objective o takes width(o) rows of `values`, in objective order: its value, then (when it is
// differentiable) its derivative with respect to each design parameter, in design order.
// NaN where undefined: an event objective whose event never came (fewer events, an invalid row),
// and the derivatives of an invalid row.
struct ObservationView {
  std::size_t n = 0;  // trajectories
  int n_objectives = 0;
  const ObjectiveSpec* objectives = nullptr;  // [n_objectives], in memory the writer can read
  int n_design = 0;
  const int* design = nullptr;  // [n_design] parameter indices
  int n_outputs = 0;
  int* status = nullptr;     // [n]
  int* n_events = nullptr;   // [n]
  double* values = nullptr;  // [n_outputs][n]

  SALTATION_HD std::size_t at(int row, std::size_t i) const { return static_cast<std::size_t>(row) * n + i; }
  SALTATION_HD int width(const ObjectiveSpec& o) const { return 1 + (o.differentiable() ? n_design : 0); }
};

}  // namespace saltation
