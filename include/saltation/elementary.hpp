#pragma once
// exp, log, sin and cos written once over a generic scalar S: double, a SIMD lane vector
// (lane_vec-inl.h) or a dual number. Every step is an IEEE addition, subtraction, multiplication
// or division, a comparison with select, or an exact operation on the bits (below), so a lane of
// a vector gets the double version's bits: what lets a model calling them run in the CPU's SIMD
// lanes with the scalar driver's results (docs/simd_lanes.md). Model files call these.
//
// Accuracy against the C library, measured by tests/test_elementary.cpp (which holds each to its
// bound): exp (numeric.hpp's exp_by_table) and log within 1 ulp; sin and cos within 1.5 ulp for |x| <= 100 and 2 ulp
// beyond (the reduced argument is one double). sin and cos reduce the argument by pi/2 in three parts (Cody and Waite)
// for |x| <= 2^19 pi/2, and return the C library's value beyond. On the device each is CUDA's function.
//
// What a scalar type provides, besides arithmetic, comparisons, select and any_lane (numeric.hpp;
// lane_vec-inl.h for the lanes): library_where(m, x, value, f), f(x) where m holds and value
// elsewhere; and the bit steps of numeric.hpp's exp_by_table (to_bits, from_bits, the integer
// operators on bits and exp2_fraction), which log's exponent and mantissa use too.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "saltation/config.hpp"
#include "saltation/dual.hpp"
#include "saltation/numeric.hpp"

namespace saltation::elementary {

// The double version of library_where (one lane).
template <class F>
SALTATION_HD double library_where(bool m, double x, double value, F f) {
  return m ? f(x) : value;
}

namespace detail {

// For a positive finite x: its biased exponent as a number (the field's bits put under those of
// 2^52, which is then taken away), and x scaled by a power of two into [1, 2).
template <class S>
SALTATION_HD S exponent_field(const S& x) {
  using saltation::detail::from_bits, saltation::detail::to_bits;
  constexpr double kTwo52 = 4503599627370496.0;
  return from_bits((to_bits(x) >> 52) | 0x4330000000000000ULL) - S(kTwo52);
}
template <class S>
SALTATION_HD S unit_mantissa(const S& x) {
  using saltation::detail::from_bits, saltation::detail::to_bits;
  return from_bits((to_bits(x) & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
}

// x rounded to the nearest integer (ties to even), for |x| < 2^51: two additions.
template <class S>
SALTATION_HD S round_to_integer(const S& x) {
  constexpr double kShift = 6755399441055744.0;  // 1.5 * 2^52
  return (x + S(kShift)) - S(kShift);
}

// c[0] + c[1] z + ... + c[n-1] z^(n-1) by Estrin's scheme: pairs c[2k] + c[2k+1] z, then pairs
// of those with z^2, z^4, ...: a dependency chain of log2(n) steps instead of Horner's n.
template <int n, class S>
SALTATION_HD S polynomial(const S& z, const double (&c)[n]) {
  S t[n];
  for (int k = 0; k < n; ++k) t[k] = S(c[k]);
  S power = z;
  for (int m = n; m > 1; m = (m + 1) / 2) {
    for (int k = 0; 2 * k < m; ++k) t[k] = 2 * k + 1 < m ? t[2 * k] + power * t[2 * k + 1] : t[2 * k];
    power = power * power;
  }
  return t[0];
}

// sin r and cos r for |r| <= pi/4 (and a little beyond, from the reduction's rounding): Taylor
// polynomials to r^17 and r^18, whose remainders are below 1e-19 there.
template <class S>
SALTATION_HD S sin_kernel(const S& r) {
  constexpr double c[8] = {-0x1.5555555555555p-3,  0x1.1111111111111p-7,   -0x1.a01a01a01a01ap-13,
                           0x1.71de3a556c734p-19,  -0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33,
                           -0x1.ae7f3e733b81fp-41, 0x1.952c77030ad4ap-49};
  const S z = r * r;
  return r + r * (z * polynomial(z, c));
}
template <class S>
SALTATION_HD S cos_kernel(const S& r) {
  constexpr double c[8] = {0x1.5555555555555p-5,   -0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-16,
                           -0x1.27e4fb7789f5cp-22, 0x1.1eed8eff8d898p-29,  -0x1.93974a8c07c9dp-37,
                           0x1.ae7f3e733b81fp-45,  -0x1.6827863b97d97p-53};
  const S z = r * r, half = S(0.5) * z, w = S(1.0) - half;
  // ((1 - w) - half) is the rounding error of w = 1 - z/2, added back.
  return w + (((S(1.0) - w) - half) + z * z * polynomial(z, c));
}

// x = k pi/2 + r with k mod 4 (the quadrant), for |x| <= 2^19 pi/2 (`large` marks the others,
// NaN and the infinities included, whose r is that of 0).
template <class S>
struct Reduced {
  decltype(S(0.0) < S(0.0)) large;
  S r, quadrant;
};
template <class S>
SALTATION_HD Reduced<S> reduce(const S& x) {
  constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
  constexpr double kPiOver2[3] = {0x1.921fb54400000p+0, 0x1.0b4611a600000p-34, 0x1.3198a2e037073p-69};
  constexpr double kLimit = 823549.6;  // 2^19 pi/2: k pi/2's first two parts stay exact
  const auto large = !(select(x < S(0.0), -x, x) <= S(kLimit));
  const S x_in = select(large, S(0.0), x);
  const S k = round_to_integer(x_in * S(kTwoOverPi));
  const S r = ((x_in - k * S(kPiOver2[0])) - k * S(kPiOver2[1])) - k * S(kPiOver2[2]);
  const S quarter = k * S(0.25);
  return {large, r, (quarter - round_to_integer(quarter - S(0.375))) * S(4.0)};
}

// sin x (shift 0) or cos x = sin(x + pi/2) (shift 1) from its reduction: by the quadrant q one of
// sin r, cos r, -sin r, -cos r. A double evaluates the one kernel it needs; a vector both, and
// selects (the same bits per lane).
template <int shift, class S>
SALTATION_HD S sin_from(const S& x, const Reduced<S>& red) {
  const S q = red.quadrant + S(static_cast<double>(shift));
  const auto odd = q == S(1.0) || q == S(3.0), negative = q == S(2.0) || q == S(3.0);
  S v;
  if constexpr (std::is_same_v<S, double>) {
    v = odd ? cos_kernel(red.r) : sin_kernel(red.r);
  } else {
    v = select(odd, cos_kernel(red.r), sin_kernel(red.r));
  }
  const S value = select(negative, -v, v);
  const S signed_zero = shift == 1 ? value : select(x == S(0.0), x, value);  // sin(-0) is -0
  return library_where(red.large, x, signed_zero, [](double a) { return shift == 1 ? std::cos(a) : std::sin(a); });
}

}  // namespace detail

template <class S>
SALTATION_HD S exp(const S& x) {
#ifdef __CUDA_ARCH__
  return ::exp(x);
#else
  // numeric.hpp's table and polynomial (within 0.511 ulp) on [-708, 709.78]; the C library's
  // value beyond (subnormal results, the last sliver below overflow, the infinities, NaN).
  const auto outside = !(x >= S(-708.0) && x <= S(709.78));
  const S value = saltation::detail::exp_by_table_in_range(select(outside, S(0.0), x));
  return library_where(outside, x, value, [](double a) { return std::exp(a); });
#endif
}

template <class S>
SALTATION_HD S log(const S& x) {
#ifdef __CUDA_ARCH__
  return ::log(x);
#else
  // x = 2^e m with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(f), f = (m - 1) / (m + 1), as
  // g - (g^2/2 - f (g^2/2 + R(f^2))) with g = m - 1 exact and R the series' tail to f^22.
  constexpr double kLn2Hi = 0x1.62e42ff000000p-1, kLn2Lo = -0x1.718432a1b0e26p-35;
  constexpr double kSqrt2 = 1.4142135623730951;
  constexpr double c[11] = {0x1.5555555555555p-1, 0x1.999999999999ap-2, 0x1.2492492492492p-2, 0x1.c71c71c71c71cp-3,
                            0x1.745d1745d1746p-3, 0x1.3b13b13b13b14p-3, 0x1.1111111111111p-3, 0x1.e1e1e1e1e1e1ep-4,
                            0x1.af286bca1af28p-4, 0x1.8618618618618p-4, 0x1.642c8590b2164p-4};  // 2 / (2n + 1)
  const auto subnormal = x < S(0x1p-1022);
  const S scaled = select(subnormal, x * S(0x1p54), x);
  const auto usable = scaled > S(0.0) && scaled < S(HUGE_VAL);  // positive and finite
  const S y = select(usable, scaled, S(1.0));
  const S m0 = detail::unit_mantissa(y), e0 = detail::exponent_field(y) - select(subnormal, S(1077.0), S(1023.0));
  const auto high = m0 > S(kSqrt2);
  const S m = select(high, m0 * S(0.5), m0), e = select(high, e0 + S(1.0), e0);
  const S g = m - S(1.0), f = g / (S(2.0) + g), z = f * f, half_g2 = S(0.5) * g * g;
  const S R = z * detail::polynomial(z, c);
  const S value = e * S(kLn2Hi) + (g - (half_g2 - (f * (half_g2 + R) + e * S(kLn2Lo))));
  // log 0 = -inf, log(+inf) = +inf, log of a negative number or NaN = NaN.
  const S special = select(x == S(0.0), S(-HUGE_VAL), select(x == S(HUGE_VAL), x, (x - x) / (x - x)));
  return select(usable, value, special);
#endif
}

template <class S>
SALTATION_HD S sin(const S& x) {
#ifdef __CUDA_ARCH__
  return ::sin(x);
#else
  return detail::sin_from<0>(x, detail::reduce(x));
#endif
}

template <class S>
SALTATION_HD S cos(const S& x) {
#ifdef __CUDA_ARCH__
  return ::cos(x);
#else
  return detail::sin_from<1>(x, detail::reduce(x));
#endif
}

// Dual numbers (of doubles or of lane vectors): the value and the slope from the functions above
// (dual.hpp's chain rule).
// The value by the qualified call: unqualified, a lane vector's argument-dependent lookup would
// find the lanes' C-library exp and log, not these.
template <int D, class T>
SALTATION_HD Dual<D, T> exp(const Dual<D, T>& a) {
  const T e = elementary::exp(a.v);
  return saltation::detail::chain(e, e, a);
}
template <int D, class T>
SALTATION_HD Dual<D, T> log(const Dual<D, T>& a) {
  return saltation::detail::chain(elementary::log(a.v), 1.0 / a.v, a);
}
// sin and cos of a dual number share one reduction.
template <int D, class T>
SALTATION_HD Dual<D, T> sin(const Dual<D, T>& a) {
#ifdef __CUDA_ARCH__
  return saltation::detail::chain(::sin(a.v), ::cos(a.v), a);
#else
  const detail::Reduced<T> red = detail::reduce(a.v);
  return saltation::detail::chain(detail::sin_from<0>(a.v, red), detail::sin_from<1>(a.v, red), a);
#endif
}
template <int D, class T>
SALTATION_HD Dual<D, T> cos(const Dual<D, T>& a) {
#ifdef __CUDA_ARCH__
  return saltation::detail::chain(::cos(a.v), -::sin(a.v), a);
#else
  const detail::Reduced<T> red = detail::reduce(a.v);
  return saltation::detail::chain(detail::sin_from<1>(a.v, red), -detail::sin_from<0>(a.v, red), a);
#endif
}

}  // namespace saltation::elementary
