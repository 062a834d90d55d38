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
// src/lane_vec-inl.h) picks values per lane with select and branches only on any_lane or
// all_lanes of a condition. These are the double versions: one lane.
SALTATION_HD inline double select(bool m, double a, double b) { return m ? a : b; }
SALTATION_HD inline bool any_lane(bool m) { return m; }
SALTATION_HD inline bool all_lanes(bool m) { return m; }

// 2^(j/128), j = 0..127, as pairs: the double nearest it, then the rest (exp_by_table).
inline constexpr double kExp2Fractions[256] = {0x1.0000000000000p+0, 0x0.0p+0,
                                               0x1.0163da9fb3335p+0, 0x1.b61299ab8cdb7p-54,
                                               0x1.02c9a3e778061p+0, -0x1.19083535b085dp-56,
                                               0x1.04315e86e7f85p+0, -0x1.0a31c1977c96ep-54,
                                               0x1.059b0d3158574p+0, 0x1.d73e2a475b465p-55,
                                               0x1.0706b29ddf6dep+0, -0x1.c91dfe2b13c27p-55,
                                               0x1.0874518759bc8p+0, 0x1.186be4bb284ffp-57,
                                               0x1.09e3ecac6f383p+0, 0x1.1487818316136p-54,
                                               0x1.0b5586cf9890fp+0, 0x1.8a62e4adc610bp-54,
                                               0x1.0cc922b7247f7p+0, 0x1.01edc16e24f71p-54,
                                               0x1.0e3ec32d3d1a2p+0, 0x1.03a1727c57b53p-59,
                                               0x1.0fb66affed31bp+0, -0x1.b9bedc44ebd7bp-57,
                                               0x1.11301d0125b51p+0, -0x1.6c51039449b3ap-54,
                                               0x1.12abdc06c31ccp+0, -0x1.1b514b36ca5c7p-58,
                                               0x1.1429aaea92de0p+0, -0x1.32fbf9af1369ep-54,
                                               0x1.15a98c8a58e51p+0, 0x1.2406ab9eeab0ap-55,
                                               0x1.172b83c7d517bp+0, -0x1.19041b9d78a76p-55,
                                               0x1.18af9388c8deap+0, -0x1.11023d1970f6cp-54,
                                               0x1.1a35beb6fcb75p+0, 0x1.e5b4c7b4968e4p-55,
                                               0x1.1bbe084045cd4p+0, -0x1.95386352ef607p-54,
                                               0x1.1d4873168b9aap+0, 0x1.e016e00a2643cp-54,
                                               0x1.1ed5022fcd91dp+0, -0x1.1df98027bb78cp-54,
                                               0x1.2063b88628cd6p+0, 0x1.dc775814a8495p-55,
                                               0x1.21f49917ddc96p+0, 0x1.2a97e9494a5eep-55,
                                               0x1.2387a6e756238p+0, 0x1.9b07eb6c70573p-54,
                                               0x1.251ce4fb2a63fp+0, 0x1.ac155bef4f4a4p-55,
                                               0x1.26b4565e27cddp+0, 0x1.2bd339940e9d9p-55,
                                               0x1.284dfe1f56381p+0, -0x1.a4c3a8c3f0d7ep-54,
                                               0x1.29e9df51fdee1p+0, 0x1.612e8afad1255p-55,
                                               0x1.2b87fd0dad990p+0, -0x1.10adcd6381aa4p-59,
                                               0x1.2d285a6e4030bp+0, 0x1.0024754db41d5p-54,
                                               0x1.2ecafa93e2f56p+0, 0x1.1ca0f45d52383p-56,
                                               0x1.306fe0a31b715p+0, 0x1.6f46ad23182e4p-55,
                                               0x1.32170fc4cd831p+0, 0x1.a9ce78e18047cp-55,
                                               0x1.33c08b26416ffp+0, 0x1.32721843659a6p-54,
                                               0x1.356c55f929ff1p+0, -0x1.b5cee5c4e4628p-55,
                                               0x1.371a7373aa9cbp+0, -0x1.63aeabf42eae2p-54,
                                               0x1.38cae6d05d866p+0, -0x1.e958d3c9904bdp-54,
                                               0x1.3a7db34e59ff7p+0, -0x1.5e436d661f5e3p-56,
                                               0x1.3c32dc313a8e5p+0, -0x1.efff8375d29c3p-54,
                                               0x1.3dea64c123422p+0, 0x1.ada0911f09ebcp-55,
                                               0x1.3fa4504ac801cp+0, -0x1.7d023f956f9f3p-54,
                                               0x1.4160a21f72e2ap+0, -0x1.ef3691c309278p-58,
                                               0x1.431f5d950a897p+0, -0x1.1c7dde35f7999p-55,
                                               0x1.44e086061892dp+0, 0x1.89b7a04ef80d0p-59,
                                               0x1.46a41ed1d0057p+0, 0x1.c944bd1648a76p-54,
                                               0x1.486a2b5c13cd0p+0, 0x1.3c1a3b69062f0p-56,
                                               0x1.4a32af0d7d3dep+0, 0x1.9cb62f3d1be56p-54,
                                               0x1.4bfdad5362a27p+0, 0x1.d4397afec42e2p-56,
                                               0x1.4dcb299fddd0dp+0, 0x1.8ecdbbc6a7833p-54,
                                               0x1.4f9b2769d2ca7p+0, -0x1.4b309d25957e3p-54,
                                               0x1.516daa2cf6642p+0, -0x1.f768569bd93efp-55,
                                               0x1.5342b569d4f82p+0, -0x1.07abe1db13cadp-55,
                                               0x1.551a4ca5d920fp+0, -0x1.d689cefede59bp-55,
                                               0x1.56f4736b527dap+0, 0x1.9bb2c011d93adp-54,
                                               0x1.58d12d497c7fdp+0, 0x1.295e15b9a1de8p-55,
                                               0x1.5ab07dd485429p+0, 0x1.6324c054647adp-54,
                                               0x1.5c9268a5946b7p+0, 0x1.c4b1b816986a2p-60,
                                               0x1.5e76f15ad2148p+0, 0x1.ba6f93080e65ep-54,
                                               0x1.605e1b976dc09p+0, -0x1.3e2429b56de47p-54,
                                               0x1.6247eb03a5585p+0, -0x1.383c17e40b497p-54,
                                               0x1.6434634ccc320p+0, -0x1.c483c759d8933p-55,
                                               0x1.6623882552225p+0, -0x1.bb60987591c34p-54,
                                               0x1.68155d44ca973p+0, 0x1.038ae44f73e65p-57,
                                               0x1.6a09e667f3bcdp+0, -0x1.bdd3413b26456p-54,
                                               0x1.6c012750bdabfp+0, -0x1.2895667ff0b0dp-56,
                                               0x1.6dfb23c651a2fp+0, -0x1.bbe3a683c88abp-57,
                                               0x1.6ff7df9519484p+0, -0x1.83c0f25860ef6p-55,
                                               0x1.71f75e8ec5f74p+0, -0x1.16e4786887a99p-55,
                                               0x1.73f9a48a58174p+0, -0x1.0a8d96c65d53cp-54,
                                               0x1.75feb564267c9p+0, -0x1.0245957316dd3p-54,
                                               0x1.780694fde5d3fp+0, 0x1.866b80a02162dp-54,
                                               0x1.7a11473eb0187p+0, -0x1.41577ee04992fp-55,
                                               0x1.7c1ed0130c132p+0, 0x1.f124cd1164dd6p-54,
                                               0x1.7e2f336cf4e62p+0, 0x1.05d02ba15797ep-56,
                                               0x1.80427543e1a12p+0, -0x1.27c86626d972bp-54,
                                               0x1.82589994cce13p+0, -0x1.d4c1dd41532d8p-54,
                                               0x1.8471a4623c7adp+0, -0x1.8d684a341cdfbp-55,
                                               0x1.868d99b4492edp+0, -0x1.fc6f89bd4f6bap-54,
                                               0x1.88ac7d98a6699p+0, 0x1.994c2f37cb53ap-54,
                                               0x1.8ace5422aa0dbp+0, 0x1.6e9f156864b27p-54,
                                               0x1.8cf3216b5448cp+0, -0x1.0d55e32e9e3aap-56,
                                               0x1.8f1ae99157736p+0, 0x1.5cc13a2e3976cp-55,
                                               0x1.9145b0b91ffc6p+0, -0x1.dd6792e582524p-54,
                                               0x1.93737b0cdc5e5p+0, -0x1.75fc781b57ebcp-57,
                                               0x1.95a44cbc8520fp+0, -0x1.64b7c96a5f039p-56,
                                               0x1.97d829fde4e50p+0, -0x1.d185b7c1b85d1p-54,
                                               0x1.9a0f170ca07bap+0, -0x1.173bd91cee632p-54,
                                               0x1.9c49182a3f090p+0, 0x1.c7c46b071f2bep-56,
                                               0x1.9e86319e32323p+0, 0x1.824ca78e64c6ep-56,
                                               0x1.a0c667b5de565p+0, -0x1.359495d1cd533p-54,
                                               0x1.a309bec4a2d33p+0, 0x1.6305c7ddc36abp-54,
                                               0x1.a5503b23e255dp+0, -0x1.d2f6edb8d41e1p-54,
                                               0x1.a799e1330b358p+0, 0x1.bcb7ecac563c7p-54,
                                               0x1.a9e6b5579fdbfp+0, 0x1.0fac90ef7fd31p-54,
                                               0x1.ac36bbfd3f37ap+0, -0x1.f9234cae76cd0p-55,
                                               0x1.ae89f995ad3adp+0, 0x1.7a1cd345dcc81p-54,
                                               0x1.b0e07298db666p+0, -0x1.bdef54c80e425p-54,
                                               0x1.b33a2b84f15fbp+0, -0x1.2805e3084d708p-57,
                                               0x1.b59728de5593ap+0, -0x1.c71dfbbba6de3p-54,
                                               0x1.b7f76f2fb5e47p+0, -0x1.5584f7e54ac3bp-56,
                                               0x1.ba5b030a1064ap+0, -0x1.efcd30e54292ep-54,
                                               0x1.bcc1e904bc1d2p+0, 0x1.23dd07a2d9e84p-55,
                                               0x1.bf2c25bd71e09p+0, -0x1.efdca3f6b9c73p-54,
                                               0x1.c199bdd85529cp+0, 0x1.11065895048ddp-55,
                                               0x1.c40ab5fffd07ap+0, 0x1.b4537e083c60ap-54,
                                               0x1.c67f12e57d14bp+0, 0x1.2884dff483cadp-54,
                                               0x1.c8f6d9406e7b5p+0, 0x1.1acbc48805c44p-56,
                                               0x1.cb720dcef9069p+0, 0x1.503cbd1e949dbp-56,
                                               0x1.cdf0b555dc3fap+0, -0x1.dd83b53829d72p-55,
                                               0x1.d072d4a07897cp+0, -0x1.cbc3743797a9cp-54,
                                               0x1.d2f87080d89f2p+0, -0x1.d487b719d8578p-54,
                                               0x1.d5818dcfba487p+0, 0x1.2ed02d75b3707p-55,
                                               0x1.d80e316c98398p+0, -0x1.11ec18beddfe8p-54,
                                               0x1.da9e603db3285p+0, 0x1.c2300696db532p-54,
                                               0x1.dd321f301b460p+0, 0x1.2da5778f018c3p-54,
                                               0x1.dfc97337b9b5fp+0, -0x1.1a5cd4f184b5cp-54,
                                               0x1.e264614f5a129p+0, -0x1.7b627817a1496p-54,
                                               0x1.e502ee78b3ff6p+0, 0x1.39e8980a9cc8fp-55,
                                               0x1.e7a51fbc74c83p+0, 0x1.2d522ca0c8de2p-54,
                                               0x1.ea4afa2a490dap+0, -0x1.e9c23179c2893p-54,
                                               0x1.ecf482d8e67f1p+0, -0x1.c93f3b411ad8cp-54,
                                               0x1.efa1bee615a27p+0, 0x1.dc7f486a4b6b0p-54,
                                               0x1.f252b376bba97p+0, 0x1.3a1a5bf0d8e43p-54,
                                               0x1.f50765b6e4540p+0, 0x1.9d3e12dd8a18bp-54,
                                               0x1.f7bfdad9cbe14p+0, -0x1.dbb12d006350ap-54,
                                               0x1.fa7c1819e90d8p+0, 0x1.74853f3a5931ep-55,
                                               0x1.fd3c22b8f71f1p+0, 0x1.2eb74966579e7p-57};

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
// margin covers the rounding (the terrain ball's bump_bound). src/lane_vec-inl.h has the
// SIMD-lane version, the same operations.
SALTATION_HD inline double exp_neg_upper_bound(double s) {
  const double y_uncapped = s * 1.4426950408889634;            // s / ln 2
  const double y = y_uncapped < 1000.0 ? y_uncapped : 1000.0;  // NaN too
  const std::int64_t k = static_cast<std::int64_t>(y);         // floor: y >= 0
  const double two_to_minus_k = detail::from_bits(static_cast<std::uint64_t>(1023 - k) << 52);
  return two_to_minus_k * (1.0 - 0.5 * (y - static_cast<double>(k)));
}

// s = (d / w)^2 / 2 for w > 0, the exponent of a Gaussian bump's height d / w widths from its
// centre, for a bound of e^-s. src/lane_vec-inl.h has the SIMD-lane version, which on AVX-512 may
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
