#pragma once
// Counter-based random numbers for sweeps (Random123 Philox, Salmon et al., SC'11).
//
// A draw is a pure function of (seed, stream, index, slot): no generator state exists, so a
// sample's numbers never depend on chunking, threads, shards or backend, and the CPU and a CUDA
// kernel compute the same bits (Philox is integer arithmetic only; the conversion to a double
// below is exact, so no floating-point rounding can differ either).
//
// The mapping, fixed for the life of the format:
//   counter = { index, (stream << 32) | slot }   (philox2x64, 10 rounds)
//   key     = { seed }
//   bits    = first 64-bit word of philox2x64_10(counter, key)
//   u       = ((bits >> 12) + 0.5) * 2^-52
// u takes the 2^52 values (k + 1/2) 2^-52, k = 0 .. 2^52 - 1, every one exactly representable, so
// 2^-53 <= u <= 1 - 2^-53: never 0 or 1, which keeps inverse CDFs finite. (A 53-bit mapping
// (k + 1/2) 2^-53 would need 54 significant bits at the top and round 1 - 2^-54 up to 1.)
#include <cstdint>

#include <Random123/philox.h>

#include "saltation/config.hpp"

namespace saltation::sweep {

// What a stream's draws are for. The index is the global sample index in every stream; the slot
// is the parameter index (or the bootstrap replicate, see sobol.hpp).
enum class Stream : std::uint32_t {
  MonteCarlo = 0,   // plain Monte Carlo samples; also the Saltelli matrix A
  SaltelliB = 1,    // the Saltelli matrix B
  Bootstrap = 2,    // Poisson bootstrap weights of the Sobol estimators (slot = replicate)
  QmcScramble = 3,  // per-dimension seeds of the scrambled Sobol' points (qmc.hpp; index = dimension)
};

SALTATION_HD inline std::uint64_t philox_bits(std::uint64_t seed, Stream stream, std::uint64_t index,
                                              std::uint32_t slot) {
  r123::Philox2x64 philox;
  const r123::Philox2x64::ctr_type counter = {{index, (std::uint64_t(stream) << 32) | slot}};
  const r123::Philox2x64::key_type key = {{seed}};
  return philox(counter, key)[0];
}

// The exact conversion documented above: a double in [2^-53, 1 - 2^-53].
SALTATION_HD inline double u01_from_bits(std::uint64_t bits) {
  return (static_cast<double>(bits >> 12) + 0.5) * 0x1p-52;
}

SALTATION_HD inline double uniform01(std::uint64_t seed, Stream stream, std::uint64_t index, std::uint32_t slot) {
  return u01_from_bits(philox_bits(seed, stream, index, slot));
}

}  // namespace saltation::sweep
