#pragma once
// Variance-based sensitivity (Sobol indices) from the Saltelli design, accumulated in the block
// tree's merge algebra.
//
// Design (Saltelli et al., Comput. Phys. Commun. 181, 259-270, 2010): the k random parameters
// ("factors"; fixed and design parameters stay constant) are sampled into two independent
// matrices A and B; AB_i is A with column i taken from B. Base sample j contributes the k + 2
// model values f(A_j), f(B_j), f(AB_i,j). Row j of A is the plain Monte Carlo sample j (stream
// MonteCarlo); row j of B uses stream SaltelliB with the same index and slot, so A and B share
// no counter (random.hpp).
//
// Estimators, with N base samples and d_i,j = f(AB_i,j) - f(A_j):
//   V    = variance of the 2N values f(A_j), f(B_j) (population variance, as SALib)
//   S1_i = (1/N) sum_j (f(B_j) - mean f(B)) d_i,j / V               (Saltelli 2010, Table 2 (b))
//   ST_i = (1/(2N)) sum_j d_i,j^2 / V                               (Jansen 1999, Table 2 (f))
// S1 is Saltelli's estimator applied to f - mean f(B): the shift leaves its expectation unchanged
// (E d_i = 0) and removes the term mean f(B) * mean d_i, whose spread grows with the squared mean
// of f (for the ball's t2, mean 1.3 s and sd 0.18 s, it widened the interval tenfold). Both
// numerators are co-moments of the pairs (f(B), d_i), kept by the Welford/Chan updates of
// moments.hpp, so they merge exactly like the other accumulators; ST uses
// sum d^2 = C(d, d) + N (mean d)^2.

// Confidence intervals: a Poisson bootstrap (Hanley & MacGibbon 2006; Chamandy et al. 2012),
// which resamples without storing samples: in replicate r, base sample j carries the weight
// w_rj ~ Poisson(1) drawn by inverse CDF from uniform01(seed, bootstrap, j, r) (counter-based,
// so the same for every chunking and shard). Each replicate keeps the same weighted sums; the
// half-width is S_conf = z_{(1+level)/2} * sd_r(S_r) (sample sd over replicates), SALib's rule.
//
// A base sample with any non-finite value is counted and left out.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "saltation/config.hpp"
#include "saltation/sweep/distributions.hpp"
#include "saltation/sweep/moments.hpp"
#include "saltation/sweep/random.hpp"

namespace saltation::sweep {

// Which Saltelli matrix a parameter row belongs to: A, B, or AB_i = saltelli_ab(i).
enum : std::uint32_t { SaltelliA = 0, SaltelliB = 1 };
SALTATION_HD inline std::uint32_t saltelli_ab(std::uint32_t factor) { return 2 + factor; }

SALTATION_HD inline std::uint32_t count_factors(const Distribution* distributions, std::uint32_t n_params) {
  std::uint32_t n = 0;
  for (std::uint32_t p = 0; p < n_params; ++p) n += distributions[p].is_random() ? 1 : 0;
  return n;
}

// theta of matrix `matrix` (SaltelliA, SaltelliB or saltelli_ab(i)) of one base sample, with
// factor i's uniform from uniform(from_b, i, p) (p its parameter index, from_b whether the matrix
// takes that factor from B). Factor i is the i-th random parameter in parameter order.
template <class Uniform>
SALTATION_HD void saltelli_row(const Distribution* distributions, std::uint32_t n_params, std::uint32_t matrix,
                               Uniform&& uniform, double* theta) {
  std::uint32_t factor = 0;
  for (std::uint32_t p = 0; p < n_params; ++p) {
    if (!distributions[p].is_random()) {
      theta[p] = distributions[p].a;
      continue;
    }
    const bool from_b = matrix == SaltelliB || matrix == saltelli_ab(factor);
    theta[p] = distributions[p].from_uniform(uniform(from_b, factor, p));
    ++factor;
  }
}

// The same with the Philox uniforms: base sample j's slot p in stream MonteCarlo (A) or SaltelliB.
SALTATION_HD inline void saltelli_parameters(const Distribution* distributions, std::uint32_t n_params,
                                             std::uint64_t seed, std::uint64_t j, std::uint32_t matrix, double* theta) {
  saltelli_row(
      distributions, n_params, matrix,
      [&](bool from_b, std::uint32_t, std::uint32_t p) {
        return uniform01(seed, from_b ? Stream::SaltelliB : Stream::MonteCarlo, j, p);
      },
      theta);
}

// Poisson(1) by inverse CDF: the smallest k with P(K <= k) >= u. P(K > 19) < 1e-18, below the
// largest u's distance from 1; the cap only guards against the rounded cumulative sum stalling
// just under u.
SALTATION_HD inline double poisson1_from_uniform(double u) {
  double probability = 0.36787944117144232160;  // e^-1 = P(K = 0)
  double cumulative = probability;
  int k = 0;
  while (u > cumulative && k < 40) {
    ++k;
    probability /= k;
    cumulative += probability;
  }
  return k;
}

// Bootstrap replicate r (0: unit weights) of SobolAccumulator updated with base sample `index`,
// whose k + 2 values are finite: the replicate's k + 1 co-moment sets, set 0 the pair (f(A), f(B))
// and set 1 + i the pair (f(B), d_i), at weight[s], mean[2 s], comoment[4 s]. One definition for
// the host's add and a device's fold.
SALTATION_HD inline void sobol_add_replicate(double* weight, double* mean, double* comoment, int n_factors,
                                             std::uint64_t seed, std::uint64_t index, int r, const double* values) {
  const double w = r == 0 ? 1.0 : poisson1_from_uniform(uniform01(seed, Stream::Bootstrap, index, r - 1));
  if (w == 0.0) return;
  const double f_a = values[0], f_b = values[1];
  for (int s = 0; s <= n_factors; ++s) {
    const double pair[2] = {s == 0 ? f_a : f_b, s == 0 ? f_b : values[1 + s] - f_a};
    comoments_add(weight[s], &mean[s * 2], &comoment[s * 4], 2, pair, w);
  }
}

struct SobolIndices {
  std::uint64_t n_base_samples = 0;  // N, finite ones
  std::uint64_t n_non_finite = 0;
  double mean = 0.0, variance = 0.0;  // of the 2N values f(A), f(B)
  double confidence_level = 0.95;
  int n_resamples = 0;
  std::vector<double> S1, S1_conf, ST, ST_conf;

  // SALib's keys S1, S1_conf, ST, ST_conf, plus the numbers above.
  nlohmann::json to_json() const;
};

class SobolAccumulator {
 public:
  SobolAccumulator(int n_factors, std::uint64_t seed, int n_resamples = 100);

  int input_width() const { return n_factors_ + 2; }
  // values = f(A_j), f(B_j), f(AB_1,j) .. f(AB_k,j) of base sample `index` = j.
  void add(std::uint64_t index, const double* values);
  void merge(const SobolAccumulator& later);
  // Becomes the accumulator a device's fold computed with sobol_add_replicate (this one empty):
  // per replicate r its k + 1 sets at weight[r (k + 1) + s], mean[2 (...)], comoment[4 (...)].
  void assign(std::uint64_t n_non_finite, const double* weight, const double* mean, const double* comoment);

  int n_factors() const { return n_factors_; }
  int n_resamples() const { return n_resamples_; }
  std::uint64_t seed() const { return seed_; }
  SobolIndices indices(double confidence_level = 0.95) const;

  nlohmann::json to_json() const;
  static SobolAccumulator from_json(const nlohmann::json& j);

 private:
  // Co-moment sets: per replicate r (0: unit weights, the estimate; 1 .. n_resamples: bootstrap),
  // set 0 holds the pair (f(A), f(B)) and set 1 + i the pair (f(B), d_i).
  struct Estimate {
    double first_order, total;
  };
  std::size_t set(int r, int s) const { return static_cast<std::size_t>(r) * (n_factors_ + 1) + s; }
  void replicate_estimates(int r, std::vector<Estimate>& out, double& mean, double& variance) const;

  int n_factors_;
  std::uint64_t seed_;
  int n_resamples_;
  std::uint64_t n_non_finite_ = 0;
  std::vector<double> weight_;    // [set]
  std::vector<double> mean_;      // [set * 2 + c]
  std::vector<double> comoment_;  // [set * 4 + 2 c + c']
};

}  // namespace saltation::sweep
