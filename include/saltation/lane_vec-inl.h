// The CPU's SIMD-lane scalar (docs/simd_lanes.md): W values of one double, one per lane of a
// Highway vector, so that per-trajectory and per-system code written over a generic scalar runs on
// W of them at once. Shared by the hybrid-trajectory lanes (saltation/cpu_lanes-inl.h) and the disk
// engine's lanes (src/dem/engine_lanes.cpp).
//
// A per-target header in Highway's sense: a file compiled per target (hwy/foreach_target.h)
// includes it inside HWY_BEFORE_NAMESPACE() and a namespace `...::HWY_NAMESPACE` on every pass (the
// toggle below lets it in again for the next target); it declares the lanes for the AVX2 and
// AVX-512 targets only.
#if defined(SALTATION_LANE_VEC_INL_H) == defined(HWY_TARGET_TOGGLE)
#ifdef SALTATION_LANE_VEC_INL_H
#undef SALTATION_LANE_VEC_INL_H
#else
#define SALTATION_LANE_VEC_INL_H
#endif
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3

namespace hn = hwy::HWY_NAMESPACE;
using Tag = hn::ScalableTag<double>;
constexpr int kW = HWY_MAX_BYTES / sizeof(double);  // lanes per vector

// Each operation is the double operation lane by lane (IEEE +, -, *, /, sqrt; negation and |x| on
// the sign bit), so generic code gives each lane the double result. Functions without an exact
// vector form (exp, ...) call the C library per lane (below).
struct LaneVec {
  hn::Vec<Tag> v;
  LaneVec() = default;
  LaneVec(double x) : v(hn::Set(Tag(), x)) {}  // NOLINT: constants lift implicitly, as for Dual
  explicit LaneVec(hn::Vec<Tag> x) : v(x) {}
  LaneVec& operator+=(const LaneVec& b) { return *this = LaneVec(hn::Add(v, b.v)); }
  LaneVec& operator-=(const LaneVec& b) { return *this = LaneVec(hn::Sub(v, b.v)); }
  LaneVec& operator*=(const LaneVec& b) { return *this = LaneVec(hn::Mul(v, b.v)); }
  LaneVec& operator/=(const LaneVec& b) { return *this = LaneVec(hn::Div(v, b.v)); }
};
inline LaneVec operator+(const LaneVec& a) { return a; }
inline LaneVec operator-(const LaneVec& a) { return LaneVec(hn::Neg(a.v)); }
inline LaneVec operator+(const LaneVec& a, const LaneVec& b) { return LaneVec(hn::Add(a.v, b.v)); }
inline LaneVec operator-(const LaneVec& a, const LaneVec& b) { return LaneVec(hn::Sub(a.v, b.v)); }
inline LaneVec operator*(const LaneVec& a, const LaneVec& b) { return LaneVec(hn::Mul(a.v, b.v)); }
inline LaneVec operator/(const LaneVec& a, const LaneVec& b) { return LaneVec(hn::Div(a.v, b.v)); }
inline LaneVec sqrt(const LaneVec& a) { return LaneVec(hn::Sqrt(a.v)); }
inline LaneVec abs(const LaneVec& a) { return LaneVec(hn::Abs(a.v)); }
inline LaneVec fabs(const LaneVec& a) { return LaneVec(hn::Abs(a.v)); }
inline LaneVec value_of(const LaneVec& a) { return a; }  // as value_of(double): generic code's plain value

// The C library's f lane by lane, for the functions without an exact vector form: what generic
// code (the built-in models, the models generated from files: dual.hpp's list) may call.
template <class F>
LaneVec per_lane(const LaneVec& a, F f) {
  HWY_ALIGN double x[kW];
  hn::Store(a.v, Tag(), x);
  for (int l = 0; l < kW; ++l) x[l] = f(x[l]);
  return LaneVec(hn::Load(Tag(), x));
}
template <class F>
LaneVec per_lane(const LaneVec& a, const LaneVec& b, F f) {
  HWY_ALIGN double x[kW], y[kW];
  hn::Store(a.v, Tag(), x);
  hn::Store(b.v, Tag(), y);
  for (int l = 0; l < kW; ++l) x[l] = f(x[l], y[l]);
  return LaneVec(hn::Load(Tag(), x));
}
#define SALTATION_LANE_FUNCTION(f)                       \
  inline LaneVec f(const LaneVec& a) {                   \
    return per_lane(a, [](double x) { return ::f(x); }); \
  }
#define SALTATION_LANE_FUNCTION2(f)                                      \
  inline LaneVec f(const LaneVec& a, const LaneVec& b) {                 \
    return per_lane(a, b, [](double x, double y) { return ::f(x, y); }); \
  }
SALTATION_LANE_FUNCTION(exp)
SALTATION_LANE_FUNCTION(log)
SALTATION_LANE_FUNCTION(cbrt)
SALTATION_LANE_FUNCTION(sin)
SALTATION_LANE_FUNCTION(cos)
SALTATION_LANE_FUNCTION(tan)
SALTATION_LANE_FUNCTION(asin)
SALTATION_LANE_FUNCTION(acos)
SALTATION_LANE_FUNCTION(atan)
SALTATION_LANE_FUNCTION(sinh)
SALTATION_LANE_FUNCTION(cosh)
SALTATION_LANE_FUNCTION(tanh)
SALTATION_LANE_FUNCTION2(atan2)
SALTATION_LANE_FUNCTION2(pow)
SALTATION_LANE_FUNCTION2(hypot)
#undef SALTATION_LANE_FUNCTION
#undef SALTATION_LANE_FUNCTION2

// saltation::exp_neg_upper_bound lane by lane: the same operations (Min returns its second
// operand, 1000, for a NaN product, as the double version's comparison does).
inline LaneVec exp_neg_upper_bound(const LaneVec& s) {
  const Tag d;
  const hn::RebindToSigned<Tag> di;
  const auto y = hn::Min(hn::Mul(s.v, hn::Set(d, 1.4426950408889634)), hn::Set(d, 1000.0));
  const auto k = hn::ConvertTo(di, y);  // truncation, as the static_cast
  const auto two_to_minus_k = hn::BitCast(d, hn::ShiftLeft<52>(hn::Sub(hn::Set(di, 1023), k)));
  return LaneVec(
      hn::Mul(two_to_minus_k, hn::Sub(hn::Set(d, 1.0), hn::Mul(hn::Set(d, 0.5), hn::Sub(y, hn::ConvertTo(d, k))))));
}

// saltation::half_square_ratio lane by lane. On AVX-512 without a division (one per bump and step,
// issuing once per 16 cycles, was most of the lanes' guard bound at K = 24): 1/w from the 14-bit
// reciprocal estimate (relative error below 2^-14), and the result scaled down by 2^-11, more than
// the estimate's error after squaring, so that it stays below (d / w)^2 / 2 and e^-s from it
// above e^-(d / w)^2 / 2. Elsewhere the double version's operations.
inline LaneVec half_square_ratio(const LaneVec& d, const LaneVec& w) {
#if HWY_TARGET == HWY_AVX3
  const LaneVec r = d * LaneVec(decltype(w.v){_mm512_rcp14_pd(w.v.raw)});
  return (0.5 * (1.0 - 0x1p-11)) * (r * r);
#else
  const LaneVec r = d / w;
  return 0.5 * r * r;
#endif
}

// A comparison's outcome per lane: what bool is to double. Generic code combines masks with
// &&, || and ! (lane by lane, no short circuit), picks values with select(m, a, b) and branches
// only on any_lane(m) or all_lanes(m) (include/saltation/numeric.hpp has the bool versions).
struct LaneMask {
  hn::Mask<Tag> m;
};
inline LaneMask operator<(const LaneVec& a, const LaneVec& b) { return {hn::Lt(a.v, b.v)}; }
inline LaneMask operator<=(const LaneVec& a, const LaneVec& b) { return {hn::Le(a.v, b.v)}; }
inline LaneMask operator>(const LaneVec& a, const LaneVec& b) { return {hn::Gt(a.v, b.v)}; }
inline LaneMask operator>=(const LaneVec& a, const LaneVec& b) { return {hn::Ge(a.v, b.v)}; }
inline LaneMask operator==(const LaneVec& a, const LaneVec& b) { return {hn::Eq(a.v, b.v)}; }
inline LaneMask operator&&(const LaneMask& a, const LaneMask& b) { return {hn::And(a.m, b.m)}; }
inline LaneMask operator||(const LaneMask& a, const LaneMask& b) { return {hn::Or(a.m, b.m)}; }
inline LaneMask operator!(const LaneMask& a) { return {hn::Not(a.m)}; }
inline LaneVec select(const LaneMask& m, const LaneVec& a, const LaneVec& b) {
  return LaneVec(hn::IfThenElse(m.m, a.v, b.v));
}
// saltation::fmin and fmax lane by lane: ties take the first argument, a NaN the other one.
inline LaneVec fmin(const LaneVec& a, const LaneVec& b) { return select(b < a || !(a == a), b, a); }
inline LaneVec fmax(const LaneVec& a, const LaneVec& b) { return select(b > a || !(a == a), b, a); }
inline bool any_lane(const LaneMask& m) { return !hn::AllFalse(Tag(), m.m); }
inline bool all_lanes(const LaneMask& m) { return hn::AllTrue(Tag(), m.m); }
// As saltation::is_finite: x - x is 0 exactly for finite x, NaN otherwise.
inline LaneMask is_finite(const LaneVec& x) { return x - x == LaneVec(0.0); }
// The bits of W doubles, with the integer steps of exp_by_table (numeric.hpp) and of
// saltation::elementary's log lane by lane.
struct LaneBits {
  hn::Vec<hn::RebindToUnsigned<Tag>> v;
};
inline LaneBits to_bits(const LaneVec& x) { return {hn::BitCast(hn::RebindToUnsigned<Tag>(), x.v)}; }
inline LaneVec from_bits(const LaneBits& b) { return LaneVec(hn::BitCast(Tag(), b.v)); }
inline LaneBits operator&(const LaneBits& a, std::uint64_t m) {
  return {hn::And(a.v, hn::Set(hn::RebindToUnsigned<Tag>(), m))};
}
inline LaneBits operator|(const LaneBits& a, std::uint64_t m) {
  return {hn::Or(a.v, hn::Set(hn::RebindToUnsigned<Tag>(), m))};
}
inline LaneBits operator+(const LaneBits& a, std::uint64_t m) {
  return {hn::Add(a.v, hn::Set(hn::RebindToUnsigned<Tag>(), m))};
}
inline LaneBits operator>>(const LaneBits& a, int shift) { return {hn::ShiftRightSame(a.v, shift)}; }
inline LaneBits operator<<(const LaneBits& a, int shift) { return {hn::ShiftLeftSame(a.v, shift)}; }
// 2^(j/128) as its double and the rest, from the table, for j in [0, 127].
inline void exp2_fraction(const LaneBits& j, LaneVec& hi, LaneVec& lo) {
  const hn::RebindToSigned<Tag> di;
  const auto index = hn::BitCast(di, hn::Add(j.v, j.v));
  hi = LaneVec(hn::GatherIndex(Tag(), kExp2Fractions, index));
  lo = LaneVec(hn::GatherIndex(Tag(), kExp2Fractions + 1, index));
}

// f(x) in the lanes where m holds, value elsewhere.
template <class F>
LaneVec library_where(const LaneMask& m, const LaneVec& x, const LaneVec& value, F f) {
  if (!any_lane(m)) return value;
  return select(m, per_lane(x, f), value);
}

// Bit l set where lane l's mask is true.
inline unsigned lane_bits(const LaneMask& m) {
  uint8_t b[8] = {};
  hn::StoreMaskBits(Tag(), m.m, b);
  return b[0];
}
// The mask true in lane l where bit l is set: lane_bits' inverse.
inline LaneMask lanes_of_bits(unsigned lanes) {
  const uint8_t b[8] = {static_cast<uint8_t>(lanes)};
  return {hn::LoadMaskBits(Tag(), b)};
}

#endif  // HWY_TARGET
#endif  // SALTATION_LANE_VEC_INL_H
