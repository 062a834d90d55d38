#include "saltation/sweep/distributions.hpp"

#include <cmath>

#include "saltation/errors.hpp"

namespace saltation::sweep {

void validate_distribution(const Distribution& d, const std::string& name) {
  const auto finite = [](double x) { return std::isfinite(x); };
  switch (d.kind) {
    case DistributionKind::Fixed:
    case DistributionKind::Design:
      if (!finite(d.a)) throw InvalidInput(name, -1, "value must be finite");
      return;
    case DistributionKind::Uniform:
      if (!finite(d.a) || !finite(d.b) || !(d.a < d.b)) throw InvalidInput(name, -1, "uniform needs finite low < high");
      return;
    case DistributionKind::Normal:
    case DistributionKind::Lognormal:
      if (!finite(d.a) || !finite(d.b) || !(d.b > 0.0))
        throw InvalidInput(name, -1, "needs a finite mean and sigma > 0");
      return;
    case DistributionKind::Truncnormal: {
      if (!finite(d.a) || !finite(d.b) || !(d.b > 0.0))
        throw InvalidInput(name, -1, "needs a finite mean and sigma > 0");
      if (std::isnan(d.c) || std::isnan(d.d) || !(d.c < d.d))
        throw InvalidInput(name, -1, "truncnormal needs low < high (either may be infinite)");
      // The probability mass of [low, high], computed on the side where it is not rounded away.
      const double alpha = (d.c - d.a) / d.b, beta = (d.d - d.a) / d.b;
      const double mass =
          alpha >= 0.0 ? normal_upper_tail(alpha) - normal_upper_tail(beta) : normal_cdf(beta) - normal_cdf(alpha);
      if (!(mass > 0.0))
        throw InvalidInput(name, -1, "truncation interval has no probability mass in double precision");
      return;
    }
  }
  throw InvalidInput(name, -1, "unknown distribution kind");
}

}  // namespace saltation::sweep
