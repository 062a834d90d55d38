// The CPU's SIMD lanes for the built-in models (include/saltation/cpu_lanes.hpp,
// docs/simd_lanes.md): the driver of saltation/cpu_lanes-inl.h built once per vector target by
// Google Highway (hwy/foreach_target.h re-includes this file for AVX-512, AVX2 and the baseline)
// and chosen at run time (HWY_DYNAMIC_DISPATCH). The baseline, and any CPU without AVX2, keeps the
// scalar driver (cpu::solve). Compiled with -ffp-contract=off, so that no multiply-add is fused on
// the vector targets (the scalar x86-64 build has no FMA instructions to fuse with).
#include "saltation/cpu_lanes.hpp"

#include "builtin_models.hpp"
#include "saltation/core/outputs.hpp"

#ifndef SALTATION_CPU_LANES_TABLE
#define SALTATION_CPU_LANES_TABLE
namespace saltation::cpu::detail {

// The lane drivers of one vector target, one entry per (output policy, built-in model); null
// where the model has no lanes or the target is the baseline (width 0).
template <class Output, class Model>
struct LaneEntry {
  using Run = void (*)(const Model&, const double*, std::size_t, const Options&, const typename Output::View&,
                       const Progress*);
  Run run = nullptr;           // forward
  Run run_sens = nullptr;      // with sensitivities
  Run run_adaptive = nullptr;  // dopri5, forward
};
template <class Model>
struct LaneEntries : LaneEntry<core::FullRecord, Model>,
                     LaneEntry<core::FinalState, Model>,
                     LaneEntry<core::ObjectiveObserver, Model> {};
struct LaneTableBase {
  const char* name = "none";
  int width = 0;
};
#define SALTATION_LANE_ENTRIES(Model) , LaneEntries<Model>
struct LaneTable : LaneTableBase SALTATION_FOR_EACH_BUILTIN_MODEL(SALTATION_LANE_ENTRIES) {};
#undef SALTATION_LANE_ENTRIES

}  // namespace saltation::cpu::detail
#endif

// SSSE3 and SSE4 are left out: 2 lanes of double gain too little to be worth the build time.
#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_SSE4)
#endif
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu_lanes.cpp"
#define SALTATION_LANES_FLATTEN_STEP __attribute__((flatten))
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "saltation/cpu_lanes-inl.h"

HWY_BEFORE_NAMESPACE();
namespace saltation::cpu_lanes {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
template <class Output, class Model>
void fill_entry(cpu::detail::LaneTable& table) {
  auto& entry = static_cast<cpu::detail::LaneEntry<Output, Model>&>(table);
  entry.run = &run_lanes<Output, Model, false>;
  entry.run_sens = &run_lanes<Output, Model, true>;
  entry.run_adaptive = &run_lanes<Output, Model, false, Method::Dopri5>;
}
template <class Model>
void fill(cpu::detail::LaneTable& table) {
  if constexpr (has_cpu_lanes<Model>::value) {
    fill_entry<core::FullRecord, Model>(table);
    fill_entry<core::FinalState, Model>(table);
    fill_entry<core::ObjectiveObserver, Model>(table);
  }
}
#endif

const cpu::detail::LaneTable* lane_table() {
  static const cpu::detail::LaneTable table = [] {
    cpu::detail::LaneTable t;
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
    t.name = HWY_TARGET == HWY_AVX3 ? "avx3" : "avx2";
    t.width = kW;
#define SALTATION_FILL_LANES(Model) fill<Model>(t);
    SALTATION_FOR_EACH_BUILTIN_MODEL(SALTATION_FILL_LANES)
#undef SALTATION_FILL_LANES
#endif
    return t;
  }();
  return &table;
}

}  // namespace HWY_NAMESPACE
}  // namespace saltation::cpu_lanes
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace saltation::cpu_lanes {
HWY_EXPORT(lane_table);
}  // namespace saltation::cpu_lanes

namespace saltation::cpu {

namespace {

// The table for this process's CPU and SALTATION_SIMD (include/saltation/cpu_lanes.hpp).
const detail::LaneTable& chosen_lanes() {
  static const detail::LaneTable none;
  switch (simd_request()) {
    case SimdRequest::None: return none;
    case SimdRequest::Avx2:
#if HWY_TARGETS & HWY_AVX2
      if (hwy::SupportedTargets() & HWY_AVX2) return *cpu_lanes::N_AVX2::lane_table();
#endif
      return none;
    default: return *HWY_DYNAMIC_DISPATCH(cpu_lanes::lane_table)();
  }
}

}  // namespace

LaneTarget lane_target() {
  const detail::LaneTable& table = chosen_lanes();
  return {table.name, table.width};
}

template <class Output, class Model>
bool solve_lanes(const Model& model, const double* theta, std::size_t n, const Options& options,
                 const typename Output::View& out, const Progress* progress) {
  const auto& entry = static_cast<const detail::LaneEntry<Output, Model>&>(chosen_lanes());
  // dopri5 with sensitivities of a built-in model keeps the scalar driver: its lanes would double
  // this file's compile time (bench/README.md, "dopri5 with sensitivities in lanes").
  const auto run = options.method == Method::Dopri5 ? (options.sensitivities ? nullptr : entry.run_adaptive)
                   : options.sensitivities          ? entry.run_sens
                                                    : entry.run;
  if (!run) return false;
  run(model, theta, n, options, out, progress);
  return true;
}

#define SALTATION_INSTANTIATE_LANES(Model)                                                                            \
  template bool solve_lanes<core::FullRecord, Model>(const Model&, const double*, std::size_t, const Options&,        \
                                                     const ResultView&, const Progress*);                             \
  template bool solve_lanes<core::FinalState, Model>(const Model&, const double*, std::size_t, const Options&,        \
                                                     const ResultView&, const Progress*);                             \
  template bool solve_lanes<core::ObjectiveObserver, Model>(const Model&, const double*, std::size_t, const Options&, \
                                                            const ObservationView&, const Progress*);
SALTATION_FOR_EACH_BUILTIN_MODEL(SALTATION_INSTANTIATE_LANES)
#undef SALTATION_INSTANTIATE_LANES

}  // namespace saltation::cpu
#endif  // HWY_ONCE
