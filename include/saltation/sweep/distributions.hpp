#pragma once
// Parameter distributions of a sweep, and how one uniform becomes one parameter value.
//
// Every random distribution is sampled by inverse CDF from exactly one uniform (random.hpp), so
// parameter p of sample i consumes the single draw (seed, stream, i, slot = p): streams stay
// simple and a sample never depends on another. All of it is SALTATION_HD: a kernel draws the same
// uniforms bit for bit and maps them with the same code (the transformed values then agree to the
// accuracy of the device's log/exp/erfc, a few ulps).
#include <cmath>
#include <cstdint>
#include <string>

#include "saltation/config.hpp"
#include "saltation/sweep/random.hpp"

namespace saltation::sweep {

// The standard normal quantile, Wichura's AS 241 (PPND16; Applied Statistics 37, 477-484, 1988):
// three rational approximations of degree 7, relative accuracy about 1e-16 over (0, 1). Returns
// -inf at p <= 0 and +inf at p >= 1 (never reached from u01_from_bits).
SALTATION_HD inline double inverse_normal_cdf(double p) {
  if (p <= 0.0) return -HUGE_VAL;
  if (p >= 1.0) return HUGE_VAL;
  const double q = p - 0.5;
  if (::fabs(q) <= 0.425) {
    const double r = 0.180625 - q * q;
    const double num =
        ((((((2.5090809287301226727e+3 * r + 3.3430575583588128105e+4) * r + 6.7265770927008700853e+4) * r +
            4.5921953931549871457e+4) *
               r +
           1.3731693765509461125e+4) *
              r +
          1.9715909503065514427e+3) *
             r +
         1.3314166789178437745e+2) *
            r +
        3.3871328727963666080e+0;
    const double den =
        ((((((5.2264952788528545610e+3 * r + 2.8729085735721942674e+4) * r + 3.9307895800092710610e+4) * r +
            2.1213794301586595867e+4) *
               r +
           5.3941960214247511077e+3) *
              r +
          6.8718700749205790830e+2) *
             r +
         4.2313330701600911252e+1) *
            r +
        1.0;
    return q * num / den;
  }
  double r = ::sqrt(-::log(q < 0.0 ? p : 1.0 - p));
  double value;
  if (r <= 5.0) {
    r -= 1.6;
    const double num =
        ((((((7.74545014278341407640e-4 * r + 2.27238449892691845833e-2) * r + 2.41780725177450611770e-1) * r +
            1.27045825245236838258e+0) *
               r +
           3.64784832476320460504e+0) *
              r +
          5.76949722146069140550e+0) *
             r +
         4.63033784615654529590e+0) *
            r +
        1.42343711074968357734e+0;
    const double den =
        ((((((1.05075007164441684324e-9 * r + 5.47593808499534494600e-4) * r + 1.51986665636164571966e-2) * r +
            1.48103976427480074590e-1) *
               r +
           6.89767334985100004550e-1) *
              r +
          1.67638483018380384940e+0) *
             r +
         2.05319162663775882187e+0) *
            r +
        1.0;
    value = num / den;
  } else {
    r -= 5.0;
    const double num =
        ((((((2.01033439929228813265e-7 * r + 2.71155556874348757815e-5) * r + 1.24266094738807843860e-3) * r +
            2.65321895265761230930e-2) *
               r +
           2.96560571828504891230e-1) *
              r +
          1.78482653991729133580e+0) *
             r +
         5.46378491116411436990e+0) *
            r +
        6.65790464350110377720e+0;
    const double den =
        ((((((2.04426310338993978564e-15 * r + 1.42151175831644588870e-7) * r + 1.84631831751005468180e-5) * r +
            7.86869131145613259100e-4) *
               r +
           1.48753612908506148525e-2) *
              r +
          1.36929880922735805310e-1) *
             r +
         5.99832206555887937690e-1) *
            r +
        1.0;
    value = num / den;
  }
  return q < 0.0 ? -value : value;
}

// Phi(x) and its complement 1 - Phi(x), each through erfc so that both tails keep full relative
// accuracy.
SALTATION_HD inline double normal_cdf(double x) { return 0.5 * ::erfc(-x * 0.70710678118654752440); }
SALTATION_HD inline double normal_upper_tail(double x) { return 0.5 * ::erfc(x * 0.70710678118654752440); }

enum class DistributionKind : std::uint32_t {
  Fixed,        // value: a constant
  Design,       // value: a constant the study differentiates with respect to (no draw)
  Uniform,      // low, high
  Normal,       // mean, sigma
  Lognormal,    // mu, sigma of the underlying normal: exp(mu + sigma z)
  Truncnormal,  // mean, sigma of the parent normal, truncated to [low, high]
};

// One parameter's distribution: a trivially copyable POD (copied into kernels by value). The
// meaning of a, b, c, d follows `kind` (see the named constructors); unused fields are 0.
struct Distribution {
  DistributionKind kind = DistributionKind::Fixed;
  double a = 0.0, b = 0.0, c = 0.0, d = 0.0;

  static Distribution fixed(double value) { return {DistributionKind::Fixed, value, 0.0, 0.0, 0.0}; }
  static Distribution design(double value) { return {DistributionKind::Design, value, 0.0, 0.0, 0.0}; }
  static Distribution uniform(double low, double high) { return {DistributionKind::Uniform, low, high, 0.0, 0.0}; }
  static Distribution normal(double mean, double sigma) { return {DistributionKind::Normal, mean, sigma, 0.0, 0.0}; }
  static Distribution lognormal(double mu, double sigma) { return {DistributionKind::Lognormal, mu, sigma, 0.0, 0.0}; }
  static Distribution truncnormal(double mean, double sigma, double low, double high) {
    return {DistributionKind::Truncnormal, mean, sigma, low, high};
  }

  // Whether the parameter is drawn (a factor of a Sobol study) or constant.
  SALTATION_HD bool is_random() const { return kind != DistributionKind::Fixed && kind != DistributionKind::Design; }

  // The value at CDF level u in (0, 1); constants ignore u.
  SALTATION_HD double from_uniform(double u) const {
    switch (kind) {
      case DistributionKind::Fixed:
      case DistributionKind::Design: return a;
      case DistributionKind::Uniform: return a + (b - a) * u;
      case DistributionKind::Normal: return a + b * inverse_normal_cdf(u);
      case DistributionKind::Lognormal: return ::exp(a + b * inverse_normal_cdf(u));
      case DistributionKind::Truncnormal: return truncated_normal(u);
    }
    return a;
  }

 private:
  // Inverse CDF of the truncated normal: z = Phi^-1(Phi(alpha) + u (Phi(beta) - Phi(alpha))). When
  // the whole interval lies in the upper tail the same map is taken on the complement
  // (1 - Phi), where the probabilities are not rounded against 1; the result is clamped to the
  // interval against the last rounding.
  SALTATION_HD double truncated_normal(double u) const {
    const double alpha = (c - a) / b, beta = (d - a) / b;
    double z;
    if (alpha >= 0.0) {
      const double upper_alpha = normal_upper_tail(alpha), upper_beta = normal_upper_tail(beta);
      z = -inverse_normal_cdf(upper_alpha - u * (upper_alpha - upper_beta));
    } else {
      const double lower_alpha = normal_cdf(alpha), lower_beta = normal_cdf(beta);
      z = inverse_normal_cdf(lower_alpha + u * (lower_beta - lower_alpha));
    }
    const double x = a + b * z;
    return x < c ? c : (x > d ? d : x);
  }
};

// Parameter p of sample `index` in `stream`: the one uniform of slot p mapped through p's
// distribution (constants draw nothing).
SALTATION_HD inline double draw_parameter(const Distribution& distribution, std::uint64_t seed, Stream stream,
                                          std::uint64_t index, std::uint32_t p) {
  if (!distribution.is_random()) return distribution.a;
  return distribution.from_uniform(uniform01(seed, stream, index, p));
}

// Row `index` of a plain Monte Carlo sweep: theta[p] for p < n_params.
SALTATION_HD inline void sample_parameters(const Distribution* distributions, std::uint32_t n_params,
                                           std::uint64_t seed, std::uint64_t index, double* theta) {
  for (std::uint32_t p = 0; p < n_params; ++p)
    theta[p] = draw_parameter(distributions[p], seed, Stream::MonteCarlo, index, p);
}

// Rejects a distribution that cannot be sampled (InvalidInput naming `name`): non-finite or
// inverted bounds, sigma <= 0, or a truncation interval without probability mass.
void validate_distribution(const Distribution& distribution, const std::string& name);

}  // namespace saltation::sweep
