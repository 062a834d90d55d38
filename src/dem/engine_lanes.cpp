// The disk engine's SIMD lanes (docs/simd_lanes.md): W consecutive systems per call of the one
// per-system body (rollout_system, include/saltation/dem/rollout.hpp), one per lane of a vector (8
// with AVX-512, 4 with AVX2), built once per vector target by Google Highway and chosen at run
// time like the hybrid-trajectory lanes (SALTATION_SIMD). The body is generic over its per-system
// scalar; GroupOfSystems below makes that scalar a lane vector, its comparisons lane masks, its
// inputs and outputs vector loads and stores of W neighbouring systems (the arrays keep the
// system index fastest).
//
// Why the results are bitwise the one-system driver's: every lane goes through the same IEEE
// operations in the same order (a lane out of contact computes along and keeps nothing, by
// select), and this file is compiled with -ffp-contract=off, so no multiply-add is fused.
#include <cstring>

#include "engine_internal.hpp"
#include "saltation/cpu_lanes.hpp"
#include "saltation/dem/rollout.hpp"

#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_SSE4)
#endif
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "engine_lanes.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace saltation::dem::lanes {
namespace HWY_NAMESPACE {

#include "saltation/lane_vec-inl.h"

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
// rollout_system's Lanes policy for the systems b .. b + W - 1 (OneSystem's members, per lane).
struct GroupOfSystems {
  using Value = LaneVec;
  static constexpr int width = kW;
  static LaneVec load(const double* p) { return LaneVec(hn::LoadU(Tag(), p)); }
  static void store(double* p, const LaneVec& v) { hn::StoreU(v.v, Tag(), p); }
  static void store_where(double* p, const LaneMask& where, const LaneVec& v) {
    hn::BlendedStore(v.v, where.m, Tag(), p);
  }
  static LaneVec pair_entry(const double* table, const int* md, const int* mj, int n_materials) {
    if (n_materials == 1) return LaneVec(table[0]);
    HWY_ALIGN double x[kW];
    for (int l = 0; l < kW; ++l) x[l] = table[md[l] * n_materials + mj[l]];
    return LaneVec(hn::Load(Tag(), x));
  }
  // The work memory is aligned for vectors by the driver (engine.cpp).
  static LaneVec* values(double* work) { return reinterpret_cast<LaneVec*>(work); }
  static LaneMask unfinished(const int* slot) {
    unsigned bits = 0;
    for (int l = 0; l < kW; ++l)
      if (slot[l] != static_cast<int>(Status::Finished)) bits |= 1u << l;
    return lanes_of_bits(bits);
  }
  // A lane keeps its first status: it goes on computing after it stopped.
  static void set_status(int* slot, const LaneMask& where, Status st) {
    for (unsigned m = lane_bits(where); m; m &= m - 1) {
      const int l = __builtin_ctz(m);
      if (slot[l] == static_cast<int>(Status::Finished)) slot[l] = static_cast<int>(st);
    }
  }
  static void copy_status(int* out, const int* slot) { std::memcpy(out, slot, sizeof(int) * kW); }
};

// Flattened, so that the body (a template compiled for the baseline) is inlined here and runs in
// this target's vectors.
__attribute__((flatten)) void run_group(const RolloutView& c, int b, const Work& w) {
  detail::rollout_at_known_sizes<GroupOfSystems>(c, b, w);
}
#endif

detail::SystemLanes system_lanes() {
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
  return {kW, &run_group};
#else
  return {};
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace saltation::dem::lanes
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace saltation::dem {
namespace lanes {
HWY_EXPORT(system_lanes);
}  // namespace lanes

detail::SystemLanes detail::system_lanes() {
  switch (cpu::simd_request()) {
    case cpu::SimdRequest::None: return {};
    case cpu::SimdRequest::Avx2:
#if HWY_TARGETS & HWY_AVX2
      if (hwy::SupportedTargets() & HWY_AVX2) return lanes::N_AVX2::system_lanes();
#endif
      return {};
    default: return HWY_DYNAMIC_DISPATCH(lanes::system_lanes)();
  }
}

}  // namespace saltation::dem
#endif  // HWY_ONCE
