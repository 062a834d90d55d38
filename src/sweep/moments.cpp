#include "saltation/sweep/moments.hpp"

#include <cmath>
#include <limits>

#include "saltation/errors.hpp"

namespace saltation::sweep {

CoMoments::CoMoments(int dim) : dim_(dim) {
  if (dim < 1) throw InvalidInput("n_outputs", -1, "must be at least 1");
  mean_.assign(dim, 0.0);
  comoment_.assign(static_cast<std::size_t>(dim) * dim, 0.0);
}

void CoMoments::merge(const CoMoments& later) {
  if (later.dim_ != dim_) throw InvalidInput("moments", -1, "merging accumulators of different dimension");
  comoments_merge(weight_, mean_.data(), comoment_.data(), dim_, later.weight_, later.mean_.data(),
                  later.comoment_.data());
}

double CoMoments::covariance(int i, int j) const {
  if (weight_ < 2.0) return std::numeric_limits<double>::quiet_NaN();
  return comoment(i, j) / (weight_ - 1.0);
}

double CoMoments::standard_error(int i) const { return std::sqrt(variance(i) / weight_); }

nlohmann::json CoMoments::to_json() const {
  return {{"dim", dim_}, {"weight", weight_}, {"mean", mean_}, {"comoment", comoment_}};
}

CoMoments CoMoments::from_json(const nlohmann::json& j) {
  CoMoments m(j.at("dim").get<int>());
  m.weight_ = j.at("weight").get<double>();
  m.mean_ = j.at("mean").get<std::vector<double>>();
  m.comoment_ = j.at("comoment").get<std::vector<double>>();
  if (m.mean_.size() != static_cast<std::size_t>(m.dim_) || m.comoment_.size() != m.mean_.size() * m.mean_.size())
    throw InvalidInput("moments", -1, "array sizes do not match dim");
  return m;
}

void CoMoments::assign(double weight, const double* mean, const double* comoment) {
  weight_ = weight;
  mean_.assign(mean, mean + dim_);
  comoment_.assign(comoment, comoment + static_cast<std::size_t>(dim_) * dim_);
}

}  // namespace saltation::sweep
