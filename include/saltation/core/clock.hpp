#pragma once
// A trajectory's time as a compensated (Kahan) sum of its steps: `carry` keeps what the last
// addition lost, so that 10^5 steps of a dt binary cannot hold exactly (1e-4) end within an ulp or
// two of n dt instead of drifting by about n ulps. Additions only, so no contraction changes it: S
// is double, or a lane vector in the CPU's SIMD lanes (src/cpu_lanes.cpp), with the same bits.
#include "saltation/config.hpp"

namespace saltation::core {

template <class S>
SALTATION_HD void advance_time(S& t, S& carry, const S& h) {
  const S y = h - carry;
  const S next = t + y;
  carry = (next - t) - y;
  t = next;
}

}  // namespace saltation::core
