#pragma once
// Small numeric helpers shared by every per-trajectory (host/device) routine.
#include "saltation/config.hpp"

namespace saltation {

// Finite (not NaN, not +-Inf), portable on host and device without a host macro; relies on
// IEEE semantics, so the build never uses -ffast-math.
SALTATION_HD inline bool is_finite(double x) { return x - x == 0.0; }

}  // namespace saltation
