#include "saltation/sweep/qmc.hpp"

#include <string>

#include <boost/random/sobol.hpp>

#include "saltation/errors.hpp"

namespace saltation::sweep {

namespace {

std::uint32_t reverse_bits(std::uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  return (x >> 16) | (x << 16);
}

// Burley's (2020) constants. Every step maps bit b from bits <= b only (an add carries upwards, a
// product with an odd factor keeps the low bits' dependence, x ^ x * even adds only lower bits),
// so on the reversed word bit b of the result depends on the original's bits above b: a nested
// scramble.
std::uint32_t laine_karras_permutation(std::uint32_t x, std::uint32_t seed) {
  x ^= x * 0x3d20adeau;
  x += seed;
  x *= (seed >> 16) | 1u;
  x ^= x * 0x05526c56u;
  x ^= x * 0x53a22864u;
  return x;
}

}  // namespace

ScrambledSobol::ScrambledSobol(std::uint32_t n_dims, std::uint64_t seed) : n_dims_(n_dims) {
  if (n_dims == 0 || n_dims > max_dimensions)
    throw InvalidInput("sampling", -1,
                       "scrambled_sobol needs 1 to " + std::to_string(max_dimensions) + " dimensions, this study has " +
                           std::to_string(n_dims));
  // Boost's lattice stores bit j of dimension d at [n_dims * j + d], already scaled to 32-bit fractions.
  const boost::random::qrng_detail::sobol_lattice<std::uint32_t, 32, boost::random::default_sobol_table> lattice(
      n_dims);
  directions_.resize(std::size_t(n_dims) * 32);
  for (std::uint32_t d = 0; d < n_dims; ++d)
    for (std::uint32_t j = 0; j < 32; ++j) directions_[d * 32 + j] = *lattice.iter_at(std::size_t(n_dims) * j + d);
  for (std::uint32_t d = 0; d < n_dims; ++d)
    seeds_.push_back(static_cast<std::uint32_t>(philox_bits(seed, Stream::QmcScramble, d, 0)));
}

std::uint32_t ScrambledSobol::unscrambled(std::uint64_t index, std::uint32_t dim) const {
  std::uint64_t gray = index ^ (index >> 1);
  const std::uint32_t* v = directions_.data() + std::size_t(dim) * 32;
  std::uint32_t x = 0;
  for (int j = 0; gray != 0; ++j, gray >>= 1)
    if (gray & 1u) x ^= v[j];
  return x;
}

std::uint32_t ScrambledSobol::scrambled(std::uint64_t index, std::uint32_t dim) const {
  return reverse_bits(laine_karras_permutation(reverse_bits(unscrambled(index, dim)), seeds_[dim]));
}

}  // namespace saltation::sweep
