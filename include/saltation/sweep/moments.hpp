#pragma once
// Count, mean and co-moments of a vector of outputs, updated one sample at a time (Welford 1962,
// West 1979 for weights) and merged pairwise (Chan, Golub & LeVeque 1979).
//
// State: W = sum of weights, mean[i], C[i*dim + j] = sum_k w_k (x_ki - mean_i)(x_kj - mean_j).
// Add (x, w):   W' = W + w,  d_i = x_i - mean_i,
//               C_ij += w d_i d_j W / W',  mean_i += d_i w / W'.
// Merge (a, b): W = Wa + Wb, d_i = mean_b,i - mean_a,i,
//               C_ij = Ca_ij + Cb_ij + d_i d_j Wa Wb / W,  mean_i = mean_a,i + d_i Wb / W.
// Merging with an empty side returns the other side unchanged (no 0/0: bootstrap replicates of
// sobol.hpp may have zero weight in a block).
//
// The two update functions are SALTATION_HD over plain arrays so a kernel can fold samples with
// the very same arithmetic; CoMoments owns the arrays on the host.
#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "saltation/config.hpp"

namespace saltation::sweep {

SALTATION_HD inline void comoments_add(double& weight, double* mean, double* comoment, int dim, const double* x,
                                       double w) {
  const double new_weight = weight + w;
  const double scale = w * weight / new_weight;
  for (int i = 0; i < dim; ++i) {
    const double d_i = x[i] - mean[i];
    for (int j = 0; j < dim; ++j) comoment[i * dim + j] += scale * d_i * (x[j] - mean[j]);
  }
  for (int i = 0; i < dim; ++i) mean[i] += (x[i] - mean[i]) * w / new_weight;
  weight = new_weight;
}

SALTATION_HD inline void comoments_merge(double& weight, double* mean, double* comoment, int dim, double later_weight,
                                         const double* later_mean, const double* later_comoment) {
  if (later_weight == 0.0) return;
  if (weight == 0.0) {
    weight = later_weight;
    for (int i = 0; i < dim; ++i) mean[i] = later_mean[i];
    for (int k = 0; k < dim * dim; ++k) comoment[k] = later_comoment[k];
    return;
  }
  const double new_weight = weight + later_weight;
  const double scale = weight * later_weight / new_weight;
  for (int i = 0; i < dim; ++i) {
    const double d_i = later_mean[i] - mean[i];
    for (int j = 0; j < dim; ++j)
      comoment[i * dim + j] += later_comoment[i * dim + j] + scale * d_i * (later_mean[j] - mean[j]);
  }
  for (int i = 0; i < dim; ++i) mean[i] += (later_mean[i] - mean[i]) * later_weight / new_weight;
  weight = new_weight;
}

class CoMoments {
 public:
  explicit CoMoments(int dim = 1);

  void add(const double* x, double weight = 1.0) {
    comoments_add(weight_, mean_.data(), comoment_.data(), dim_, x, weight);
  }
  // `later` holds samples after this one's in the global order.
  void merge(const CoMoments& later);
  // The state a device's fold computed with comoments_add: weight, dim means, dim x dim co-moments.
  void assign(double weight, const double* mean, const double* comoment);

  int dim() const { return dim_; }
  double weight() const { return weight_; }  // the sample count when every weight is 1
  double mean(int i) const { return mean_[i]; }
  double comoment(int i, int j) const { return comoment_[i * dim_ + j]; }
  // Unbiased (n - 1) covariance for unit weights; NaN with fewer than two samples.
  double covariance(int i, int j) const;
  double variance(int i) const { return covariance(i, i); }
  // Standard error of mean(i): sqrt(variance(i) / n).
  double standard_error(int i) const;

  nlohmann::json to_json() const;
  static CoMoments from_json(const nlohmann::json& j);

 private:
  int dim_;
  double weight_ = 0.0;
  std::vector<double> mean_, comoment_;
};

}  // namespace saltation::sweep
