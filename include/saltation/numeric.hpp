#pragma once
// Small numeric helpers shared by every per-trajectory (host/device) routine.
#include "saltation/config.hpp"

namespace saltation {

// Finite (not NaN, not +-Inf), portable on host and device without a host macro; relies on
// IEEE semantics, so the build never uses -ffast-math.
SALTATION_HD inline bool is_finite(double x) { return x - x == 0.0; }

// Code generic over its scalar (double, or the CPU's SIMD-lane vector with its lane masks,
// src/lane_vec-inl.h) picks values per lane with select and branches only on any_lane or
// all_lanes of a condition. These are the double versions: one lane.
SALTATION_HD inline double select(bool m, double a, double b) { return m ? a : b; }
SALTATION_HD inline bool any_lane(bool m) { return m; }
SALTATION_HD inline bool all_lanes(bool m) { return m; }

}  // namespace saltation
