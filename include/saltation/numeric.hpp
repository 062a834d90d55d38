#pragma once
// Small numeric helpers shared by every per-trajectory (host/device) routine.
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "saltation/config.hpp"

namespace saltation {

// Finite (not NaN, not +-Inf), portable on host and device without a host macro; relies on
// IEEE semantics, so the build never uses -ffast-math.
SALTATION_HD inline bool is_finite(double x) { return x - x == 0.0; }

// Code generic over its scalar (double, or the CPU's SIMD-lane vector with its lane masks,
// include/saltation/lane_vec-inl.h) picks values per lane with select and branches only on any_lane or
// all_lanes of a condition. These are the double versions: one lane.
SALTATION_HD inline double select(bool m, double a, double b) { return m ? a : b; }
SALTATION_HD inline bool any_lane(bool m) { return m; }
SALTATION_HD inline bool all_lanes(bool m) { return m; }

// 2^(j/128), j = 0..127, as pairs: the double nearest it, then the rest (exp_by_table).
inline constexpr double kExp2Fractions[256] = {
#include "saltation/exp2_fractions.inc"
};

// Host vectors of four and eight doubles (GCC and Clang vector extensions): code that sums over a
// model's terms evaluates four terms' independent parts at once with them, and an event's jump
// eight parameter columns (Group below); an operation on one is the same IEEE operation on each
// element, in the vector width of the function it is compiled in (AVX-512 or AVX2 in the CPU's
// SIMD lanes, SSE2 halves in the baseline build). Every function taking or returning one is
// always inlined: how a 32- or 64-byte vector is passed depends on whether the function was
// compiled with AVX or AVX-512, and the SIMD lanes' AVX2 code calling a baseline
// copy out of line would pass it in the wrong place. GCC's -Wpsabi notes that ABI difference at
// every such function and call; with nothing called out of line it does not apply, so it is off
// from here on.
#if !defined(__CUDA_ARCH__) && (defined(__GNUC__) || defined(__clang__))
#define SALTATION_HOST_VECTORS 1
#pragma GCC diagnostic ignored "-Wpsabi"
typedef double Double4 __attribute__((vector_size(32)));
typedef std::uint64_t Bits4 __attribute__((vector_size(32)));
typedef std::int64_t Mask4 __attribute__((vector_size(32)));
typedef double Double8 __attribute__((vector_size(64)));
typedef std::int64_t Mask8 __attribute__((vector_size(64)));
#endif

namespace detail {

// The steps of exp_by_table, generic over one double or a host vector of them (below), so that
// each element of a vector goes through the scalar's very operations.
SALTATION_HD inline std::uint64_t to_bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
SALTATION_HD inline double from_bits(std::uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}
SALTATION_HD inline void exp2_fraction(std::uint64_t j, double& hi, double& lo) {
  hi = kExp2Fractions[2 * j];
  lo = kExp2Fractions[2 * j + 1];
}
#if SALTATION_HOST_VECTORS
SALTATION_HOST_INLINE inline Bits4 to_bits(const Double4& x) {
  return (Bits4)x;
}  // the bits, as memcpy would give them
SALTATION_HOST_INLINE inline Double4 from_bits(const Bits4& b) { return (Double4)b; }
SALTATION_HOST_INLINE inline void exp2_fraction(const Bits4& j, Double4& hi, Double4& lo) {
  double h[4], l[4];
  for (int e = 0; e < 4; ++e) exp2_fraction(j[e], h[e], l[e]);
  hi = Double4{h[0], h[1], h[2], h[3]};
  lo = Double4{l[0], l[1], l[2], l[3]};
}
#endif
template <class T>
SALTATION_HD SALTATION_HOST_INLINE inline T exp_by_table_in_range(const T& x) {  // x in [-708, 709.78]
  constexpr double kRound = 6755399441055744.0;          // 1.5 * 2^52: x + kRound - kRound rounds x
  constexpr double kInvLn2_128 = 184.6649652337873;      // 128 / ln 2
  constexpr double kLn2_128Hi = 0x1.62e42ff000000p-8;    // ln 2 / 128 to 32 bits: k * hi is exact
  constexpr double kLn2_128Lo = -0x1.718432a1b0e26p-42;  // the rest
  const T kd = x * kInvLn2_128 + kRound;                 // k in the low bits of kd
  const T k = kd - kRound;
  const T r = (x - k * kLn2_128Hi) - k * kLn2_128Lo;
  const auto bits = to_bits(kd);
  T hi, lo;
  exp2_fraction(bits & 127u, hi, lo);
  const T whole = from_bits(((bits >> 7) + 1023u) << 52);                                      // 2^floor(k / 128)
  const T q = r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0)))));  // e^r - 1
  return (hi + (lo + hi * q)) * whole;
}

}  // namespace detail

// e^x on the host, 2^(k/128) e^r with k = round(128 x / ln 2): 2^(k/128) from the table (its
// double and the rest) and the exponent field, e^r from a degree-5 polynomial on |r| <= ln 2 / 256.
// Within 0.511 ulp of e^x (glibc's exp: 0.507); 0 below -708, +inf above 709.78. Faster than
// glibc's exp (inlined, no wrapper), which was the largest single cost of a terrain-ball run
// (bench/README.md, "The terrain's exp"). The terrain ball's bumps use it. On the device: CUDA's exp.
SALTATION_HD inline double exp_by_table(double x) {
#if defined(__CUDA_ARCH__)
  return ::exp(x);
#else
  if (x < -708.0) return 0.0;
  if (x > 709.78) return std::numeric_limits<double>::infinity();
  return detail::exp_by_table_in_range(x);
#endif
}

// An upper bound of e^-s for s >= 0 from the exponent field alone, without a division or a table:
// with s / ln 2 = k + f (k whole, 0 <= f < 1), e^-s = 2^-k 2^-f <= 2^-k (1 - f / 2), the chord of
// the convex 2^-f over [0, 1]; at most 6.2 % above e^-s (at f = 0.56), and within 1e-13 of that
// below it through the rounding of s / ln 2 for s < 700. s / ln 2 is capped at 1000 (then the
// bound is 2^-1000), which also takes NaN; k by truncation, the floor for s >= 0. A guard bound's
// margin covers the rounding (the terrain ball's bump_bound). include/saltation/lane_vec-inl.h has the
// SIMD-lane version, the same operations.
SALTATION_HD inline double exp_neg_upper_bound(double s) {
  const double y_uncapped = s * 1.4426950408889634;            // s / ln 2
  const double y = y_uncapped < 1000.0 ? y_uncapped : 1000.0;  // NaN too
  const std::int64_t k = static_cast<std::int64_t>(y);         // floor: y >= 0
  const double two_to_minus_k = detail::from_bits(static_cast<std::uint64_t>(1023 - k) << 52);
  return two_to_minus_k * (1.0 - 0.5 * (y - static_cast<double>(k)));
}

// s = (d / w)^2 / 2 for w > 0, the exponent of a Gaussian bump's height d / w widths from its
// centre, for a bound of e^-s. include/saltation/lane_vec-inl.h has the SIMD-lane version, which on AVX-512 may
// come out below this by up to 6e-4 relative, never above it: e^-s from it is still a bound.
SALTATION_HD inline double half_square_ratio(double d, double w) {
  const double r = d / w;
  return 0.5 * r * r;
}

#if SALTATION_HOST_VECTORS
namespace detail {
template <class V, class M>  // a host vector and its mask
SALTATION_HOST_INLINE inline V blend(const M& m, const V& a, const V& b) {
  return (V)((m & (M)a) | (~m & (M)b));
}
}  // namespace detail
SALTATION_HOST_INLINE inline Double4 select(const Mask4& m, const Double4& a, const Double4& b) {
  return detail::blend(m, a, b);
}
SALTATION_HOST_INLINE inline Double8 select(const Mask8& m, const Double8& a, const Double8& b) {
  return detail::blend(m, a, b);
}

// exp_by_table of each element, bit for bit.
SALTATION_HOST_INLINE inline Double4 exp_by_table(const Double4& x) {
  const Double4 lowest = {-708.0, -708.0, -708.0, -708.0}, highest = {709.78, 709.78, 709.78, 709.78};
  const Double4 zero = {0.0, 0.0, 0.0, 0.0};
  const Double4 inf = zero + std::numeric_limits<double>::infinity();
  const Mask4 below = x<lowest, above = x> highest;
  const Double4 e = detail::exp_by_table_in_range(select(below | above, zero, x));
  return select(below, zero, select(above, inf, e));
}
#endif

// exp_by_table for a caller that keeps the result only where x lies in [-708, 709.78] (a bump's
// -u^2 / 2 within its reach, TerrainBall::terrain): the host vectors skip the clamps of the
// elements' range, whose compares and selects slowed terrain-ball runs down
// (bench/README.md, "The terrain's exp"). There an element gives exp_by_table's bits; out of range
// it gives an unspecified value (no out-of-bounds read: the table index is masked), for the
// caller to select away.
template <class T>
SALTATION_HD inline T exp_in_range(const T& x) {
  return exp_by_table(x);
}
#if SALTATION_HOST_VECTORS
SALTATION_HOST_INLINE inline Double4 exp_in_range(const Double4& x) { return detail::exp_by_table_in_range(x); }
#endif

// A group of a sum's terms evaluated at once: for doubles on the host, Width of them in a host
// vector (Double4 or Double8); otherwise (dual numbers, the device) one. make() builds a group
// from `size` values (load() loads them), at() reads one back (add_at adds to it), store() writes
// them all.
template <class S, int Width = 4>
struct Group {
  using type = S;
  static constexpr int size = 1;
  SALTATION_HD static S make(const S* v) { return v[0]; }
  SALTATION_HD static S load(const S* v) { return v[0]; }
  SALTATION_HD static S at(const S& v, int) { return v; }
  SALTATION_HD static void add_at(S& v, int, const S& x) { v = v + x; }  // element e of v plus x
  SALTATION_HD static void store(const S& v, S* out) { out[0] = v; }     // all `size` values
  SALTATION_HD static S zero() { return S(0.0); }
  SALTATION_HD static bool any(bool m) { return m; }                           // of a comparison's result
  SALTATION_HD static S masked(bool m, const S& v) { return m ? v : S(0.0); }  // v where m, else 0
  SALTATION_HD static S sum(const S& v) { return v; }                          // of the elements
};
#if SALTATION_HOST_VECTORS
template <int Width>
struct HostVector;
template <>
struct HostVector<4> {
  using type = Double4;
  using mask = Mask4;
};
template <>
struct HostVector<8> {
  using type = Double8;
  using mask = Mask8;
};

template <int Width>
struct Group<double, Width> {
  using type = typename HostVector<Width>::type;
  using mask = typename HostVector<Width>::mask;
  static constexpr int size = Width;
  SALTATION_HOST_INLINE static type make(const double* v) { return make(v, Elements{}); }
  // make() for values stored long before, or by store(), in one vector load (make's scalar loads
  // and shuffles are for values just written by scalar stores, which a vector load would wait for).
  SALTATION_HOST_INLINE static type load(const double* v) {
    type r;
    std::memcpy(&r, v, sizeof r);
    return r;
  }
  SALTATION_HOST_INLINE static double at(const type& v, int e) { return v[e]; }
  // v + (x at e, -0 elsewhere): -0 is addition's exact identity (+0 would turn a -0 into +0).
  // Element e written alone (v[e] with e known only at run time) went through memory, and the
  // next vector load of v waited for that store.
  SALTATION_HOST_INLINE static void add_at(type& v, int e, double x) {
    const mask at_e = indices(Elements{}) == static_cast<std::int64_t>(e);
    v = v + select(at_e, x - zero(), -zero());  // x - (+0) is x, a -0 included
  }
  SALTATION_HOST_INLINE static void store(const type& v, double* out) { std::memcpy(out, &v, sizeof v); }
  SALTATION_HOST_INLINE static type zero() { return type{}; }
  SALTATION_HOST_INLINE static bool any(const mask& m) { return any(m, Elements{}); }
  SALTATION_HOST_INLINE static type masked(const mask& m, const type& v) { return select(m, v, zero()); }
  // Pairwise, halves first: (v0 + v1) + (v2 + v3) for four.
  SALTATION_HOST_INLINE static double sum(const type& v) { return sum<0, Width>(v); }

 private:
  using Elements = std::make_index_sequence<Width>;
  template <std::size_t... I>
  SALTATION_HOST_INLINE static type make(const double* v, std::index_sequence<I...>) {
    return type{v[I]...};
  }
  template <std::size_t... I>
  SALTATION_HOST_INLINE static mask indices(std::index_sequence<I...>) {
    return mask{static_cast<std::int64_t>(I)...};
  }
  template <std::size_t... I>
  SALTATION_HOST_INLINE static bool any(const mask& m, std::index_sequence<I...>) {
    return (m[I] | ...) != 0;
  }
  template <int First, int Count>
  SALTATION_HOST_INLINE static double sum(const type& v) {
    if constexpr (Count == 1) {
      return v[First];
    } else {
      return sum<First, Count / 2>(v) + sum<First + Count / 2, Count / 2>(v);
    }
  }
};
SALTATION_HOST_INLINE inline Double4 value_of(const Double4& x) { return x; }
#endif

}  // namespace saltation
