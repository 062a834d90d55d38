#include "saltation/sweep/score.hpp"

#include <cmath>

namespace saltation::sweep {

namespace {

double normal_pdf(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI); }

// The truncated normal's standardised sample and bounds, its mass, and u = F(x).
struct Truncation {
  double z, alpha, beta, mass, u;
  explicit Truncation(const Distribution& d, double x)
      : z((x - d.a) / d.b),
        alpha((d.c - d.a) / d.b),
        beta((d.d - d.a) / d.b),
        mass(normal_cdf(beta) - normal_cdf(alpha)),
        u((normal_cdf(z) - normal_cdf(alpha)) / mass) {}
};

}  // namespace

bool has_score(const Distribution& d, int field) {
  const bool fixed_support = d.kind == DistributionKind::Normal || d.kind == DistributionKind::Lognormal ||
                             d.kind == DistributionKind::Truncnormal;
  return fixed_support && (field == 0 || field == 1);
}

double score(const Distribution& d, int field, double x) {
  switch (d.kind) {
    case DistributionKind::Normal: {
      const double z = (x - d.a) / d.b;
      return field == 0 ? z / d.b : (z * z - 1.0) / d.b;
    }
    case DistributionKind::Lognormal: {
      const double z = (std::log(x) - d.a) / d.b;
      return field == 0 ? z / d.b : (z * z - 1.0) / d.b;
    }
    case DistributionKind::Truncnormal: {
      // log p = log phi(z) - log sigma - log(Phi(beta) - Phi(alpha)): the mass moves with both.
      const Truncation t(d, x);
      const double pa = normal_pdf(t.alpha), pb = normal_pdf(t.beta);
      if (field == 0) return t.z / d.b - (pa - pb) / (d.b * t.mass);
      return (t.z * t.z - 1.0) / d.b - (t.alpha * pa - t.beta * pb) / (d.b * t.mass);
    }
    default: return NAN;
  }
}

double sample_slope(const Distribution& d, int field, double x) {
  switch (d.kind) {
    case DistributionKind::Uniform: {
      const double u = (x - d.a) / (d.b - d.a);
      return field == 0 ? 1.0 - u : u;
    }
    case DistributionKind::Normal: return field == 0 ? 1.0 : (x - d.a) / d.b;
    case DistributionKind::Lognormal: return field == 0 ? x : x * (std::log(x) - d.a) / d.b;
    case DistributionKind::Truncnormal: {
      // Phi(z) = Phi(alpha) + u (Phi(beta) - Phi(alpha)) at fixed u, differentiated.
      const Truncation t(d, x);
      const double pa = normal_pdf(t.alpha), pb = normal_pdf(t.beta), pz = normal_pdf(t.z);
      switch (field) {
        case 0: return 1.0 - ((1.0 - t.u) * pa + t.u * pb) / pz;
        case 1: return t.z - ((1.0 - t.u) * t.alpha * pa + t.u * t.beta * pb) / pz;
        case 2: return (1.0 - t.u) * pa / pz;
        default: return t.u * pb / pz;
      }
    }
    default: return 0.0;
  }
}

Distribution with_field(Distribution d, int field, double value) {
  (field == 0 ? d.a : field == 1 ? d.b : field == 2 ? d.c : d.d) = value;
  return d;
}

double field_value(const Distribution& d, int field) {
  return field == 0 ? d.a : field == 1 ? d.b : field == 2 ? d.c : d.d;
}

}  // namespace saltation::sweep
