#pragma once
// Scrambled Sobol' points: an optional quasi-random replacement for the Philox uniforms of a
// sweep's sampled parameters (study key "sampling": "scrambled_sobol", docs/sweep.md).
//
// Points: the Sobol' sequence with Joe & Kuo's direction numbers (SIAM J. Sci. Comput. 30,
// 2635-2654, 2008; the table Boost.Random ships, up to 3667 dimensions), 32 bits per coordinate,
// point i taken in Gray-code order, x_i = XOR of the direction numbers of the set bits of
// i ^ (i >> 1). Point 0 is kept (Boost's engine skips it), so the first 2^m points form a
// (t, m, s)-net. Random access: a point is a pure function of (seed, index, dimension), never of
// chunking, threads or shards.
//
// Scrambling: a nested uniform (Owen) scramble per dimension, computed by a hash as in Burley,
// "Practical Hash-based Owen Scrambling", JCGT 9(4), 2020: reverse the bits, apply a
// Laine-Karras style permutation in which each output bit depends only on the input bits below
// it, reverse back. The per-dimension seeds come from Philox (stream QmcScramble). Scrambling
// keeps the net's stratification and makes every point uniform on [0, 1)^s, so estimates stay
// unbiased.
//
// The uniform: the 32 scrambled bits are the top bits of a 64-bit word whose low 32 bits are the
// Philox draw the random sampling would have used; u01_from_bits (random.hpp) maps it exactly as
// for random sampling, so u is never 0 or 1.
#include <cstdint>
#include <vector>

#include "saltation/sweep/random.hpp"

namespace saltation::sweep {

class ScrambledSobol {
 public:
  static constexpr std::uint32_t max_dimensions = 3667;
  static constexpr std::uint64_t max_points = std::uint64_t(1) << 32;

  // InvalidInput naming "sampling" when n_dims is 0 or past max_dimensions.
  ScrambledSobol(std::uint32_t n_dims, std::uint64_t seed);

  std::uint32_t n_dims() const { return n_dims_; }
  // Coordinate `dim` of point `index` (< max_points) as a 32-bit fraction, before and after scrambling.
  std::uint32_t unscrambled(std::uint64_t index, std::uint32_t dim) const;
  std::uint32_t scrambled(std::uint64_t index, std::uint32_t dim) const;
  // The uniform in (0, 1) described above.
  double uniform(std::uint64_t index, std::uint32_t dim, std::uint64_t low_bits) const {
    return u01_from_bits((std::uint64_t(scrambled(index, dim)) << 32) | (low_bits & 0xffffffffu));
  }

 private:
  std::uint32_t n_dims_;
  std::vector<std::uint32_t> directions_;  // [dim * 32 + bit]: direction number v_bit of dimension dim
  std::vector<std::uint32_t> seeds_;       // per dimension
};

}  // namespace saltation::sweep
