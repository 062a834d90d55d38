#pragma once
// The boundary term of d E[L] / dtheta that no per-trajectory derivative sees (docs/sweep.md,
// "Gradients across topology changes"). Where an event crosses the horizon t_final, an objective
// that counts it, reads a state after it or needs it to exist jumps by J; then
//
//     d E[L] / dtheta = E[dL/dtheta] + E[ delta(t_final - t_c) (-dt_c/dtheta) J_c ],
//
// summed over the events c whose crossing makes L jump. The second term is estimated per sample
// from what the solver records exactly, the margin m_c = t_final - t_c, dt_c/dtheta and J_c, by a
// one-sided kernel on [0, h): the events past t_final are never integrated, and the density of
// t_c is continuous at t_final, so its left side estimates it. Settling at v_stop, a threshold in
// an event's speed, has a boundary term of the same form (Settling, below).
#include <cstdint>
#include <vector>

#include "saltation/result.hpp"
#include "saltation/sweep/study.hpp"

namespace saltation::sweep {

// The boundary kernel for a density at the left end of its support, K(u) = 4 - 6u on [0, 1)
// (integral 1, first moment 0): its bias is O(h^2), where a plain one-sided kernel's is O(h).
// K_h(m) = K(m / h) / h, 0 outside [0, h).
double boundary_kernel(double margin, double bandwidth);

// Settling (options.v_stop > 0) ends a trajectory at its first event whose normal speed s_c is
// below v_stop: where theta moves s_c across v_stop, the trajectory stops one event earlier or
// later and o jumps. The same kernel on the speed's margin s_c - v_stop of the events that went on
// (the events that settled instead are never integrated past) estimates that boundary term.
// What it needs of trajectory i: its events' speeds and their derivatives by the design
// parameters' model parameters (impact_speed.hpp), and the speed kernel's width.
struct Settling {
  double v_stop = 0.0;            // 0: settling is off, no term
  double bandwidth = 0.0;         // of the speed margin's kernel
  const double* speed = nullptr;  // [c]
  const double* slope = nullptr;  // [c * D + d]: d s_c / d theta_{parameters[d]}
};

// Per design parameter d, for trajectory i of `record`, with dt_c/dtheta_d =
// slopes[d] dt_c/dq_{parameters[d]} (slope 1 for a model parameter; dx/dtheta for a distribution's
// design field, x the sample of model parameter parameters[d], score.hpp):
//   z[d]    = sum_c K_h(m_c) (-dt_c/dtheta_d) J_c over the events whose crossing makes o jump
//             (Objective::jumps_in_value; an objective read at event c instead ceases to exist
//             when c passes t_final: J_c = 1, and the boundary term of its mean over the samples
//             where it is defined is Cov(L, z)),
//             plus, with settling, sum_c K_hs(s_c - v_stop) (ds_c/dtheta_d) J_c over the events c
//             that went on, J_c = o as recorded minus o had the run settled at c (1 for an
//             objective read at a later event, which would cease to exist);
//   near[d] = 1 when o is discontinuous in theta_d near this sample: such an event within h of
//             t_final (or with a speed within hs of v_stop) with J_c != 0 and a derivative != 0,
//             a settling event within hs of v_stop that decides o, a grazing one (it may vanish),
//             a status other than finished or settled reached within h of t_final, or for an
//             objective read at event c a neighbour of another guard within h of it (the two may
//             swap order); else 0.
// An invalid row gives 0. `record` must hold the events and their derivatives (sensitivities on).
void boundary_terms(const Result& record, std::size_t i, const Objective& o, const std::vector<int>& parameters,
                    const double* slopes, double t_final, double bandwidth, const Settling& settling, double* z,
                    double* near);

// The data-driven bandwidth of objective o, from the pilot's records (the same samples for every
// shard, chunking and rank, so the bandwidth is part of the study, like the histogram ranges):
// h = s n^(-1/3), s the sample standard deviation of each pilot trajectory's smallest margin
// among the events whose crossing makes o jump, n the study's samples. n^(-1/3) undersmooths
// (the bias, O(h^2), shrinks faster than the standard error, O((n h)^-1/2)), so the reported
// standard error covers the estimator's error. With fewer than two such pilot trajectories, s is
// t_final / sqrt(12), the spread of a margin uniform on [0, t_final].
double pilot_bandwidth(const Result& pilot, const Objective& o, double t_final, std::uint64_t samples);

// The speed kernel's bandwidth by the same rule, from the pilot's smallest speed margins
// s_c - v_stop among the events that went on and whose settling would make o jump (speeds[i]:
// pilot trajectory i's event speeds); with fewer than two, s is v_stop / sqrt(12).
double pilot_speed_bandwidth(const Result& pilot, const std::vector<std::vector<double>>& speeds, const Objective& o,
                             double v_stop, std::uint64_t samples);

}  // namespace saltation::sweep
