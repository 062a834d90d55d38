#include "saltation/sweep/histogram.hpp"

#include <cmath>
#include <cstring>

#include "saltation/errors.hpp"

namespace saltation::sweep {

Histogram::Histogram(HistogramRange range) : range_(range) {
  if (!std::isfinite(range.low) || !std::isfinite(range.high) || !(range.low < range.high))
    throw InvalidInput("histogram", -1, "needs finite low < high");
  if (range.n_bins < 1) throw InvalidInput("histogram", -1, "needs at least one bin");
  counts_.assign(range.n_bins, 0);
}

void Histogram::add(double x) {
  const std::uint32_t slot = histogram_slot(range_, x);
  if (slot == 0) ++below_;
  else if (slot == range_.n_bins + 1) ++above_;
  else ++counts_[slot - 1];
}

void Histogram::add_slots(const std::uint64_t* slots) {
  below_ += slots[0];
  for (std::uint32_t b = 0; b < range_.n_bins; ++b) counts_[b] += slots[1 + b];
  above_ += slots[range_.n_bins + 1];
}

void Histogram::merge(const Histogram& other) {
  if (other.range_.low != range_.low || other.range_.high != range_.high || other.range_.n_bins != range_.n_bins)
    throw InvalidInput("histogram", -1, "merging histograms with different bins");
  for (std::size_t b = 0; b < counts_.size(); ++b) counts_[b] += other.counts_[b];
  below_ += other.below_;
  above_ += other.above_;
}

nlohmann::json Histogram::to_json() const {
  return {{"low", range_.low}, {"high", range_.high}, {"counts", counts_}, {"below", below_}, {"above", above_}};
}

Histogram Histogram::from_json(const nlohmann::json& j) {
  const auto counts = j.at("counts").get<std::vector<std::uint64_t>>();
  Histogram h({j.at("low").get<double>(), j.at("high").get<double>(), static_cast<std::uint32_t>(counts.size())});
  h.counts_ = counts;
  h.below_ = j.at("below").get<std::uint64_t>();
  h.above_ = j.at("above").get<std::uint64_t>();
  return h;
}

namespace {

double from_sortable_bits(std::uint64_t sortable) {
  constexpr std::uint64_t sign_bit = std::uint64_t(1) << 63;
  const std::uint64_t bits = (sortable & sign_bit) ? (sortable & ~sign_bit) : ~sortable;
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

}  // namespace

QuantileSketch::QuantileSketch(int mantissa_bits) : mantissa_bits_(mantissa_bits) {
  if (mantissa_bits < 1 || mantissa_bits > 20)
    throw InvalidInput("quantile_mantissa_bits", -1, "must be between 1 and 20");
}

double QuantileSketch::relative_error_bound() const { return std::ldexp(1.0, -(mantissa_bits_ + 1)); }

void QuantileSketch::add(double x) {
  ++buckets_[sketch_key(x, mantissa_bits_)];
  ++count_;
}

void QuantileSketch::add_bucket(std::uint64_t key, std::uint64_t count) {
  buckets_[key] += count;
  count_ += count;
}

void QuantileSketch::merge(const QuantileSketch& other) {
  if (other.mantissa_bits_ != mantissa_bits_)
    throw InvalidInput("quantile_mantissa_bits", -1, "merging sketches of different resolution");
  for (const auto& [key, n] : other.buckets_) buckets_[key] += n;
  count_ += other.count_;
}

double QuantileSketch::quantile(double q) const {
  if (count_ == 0) throw InvalidInput("quantile", -1, "the sketch is empty");
  if (!(q >= 0.0 && q <= 1.0)) throw InvalidInput("quantile", -1, "q must be in [0, 1]");
  std::uint64_t rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = rank < 1 ? 1 : (rank > count_ ? count_ : rank);
  const int shift = 52 - mantissa_bits_;
  std::uint64_t seen = 0;
  for (const auto& [key, n] : buckets_) {
    seen += n;
    if (seen >= rank) {
      const double low = from_sortable_bits(key << shift);
      const double high = from_sortable_bits((key << shift) | ((std::uint64_t(1) << shift) - 1));
      // The two buckets at zero answer 0: exact for zeros, and within the absolute bound for the
      // subnormals that share them.
      if (low == 0.0 || high == 0.0) return 0.0;
      return 0.5 * low + 0.5 * high;
    }
  }
  return from_sortable_bits(buckets_.rbegin()->first << shift);  // unreachable: the counts sum to count_
}

nlohmann::json QuantileSketch::to_json() const {
  nlohmann::json buckets = nlohmann::json::array();
  for (const auto& [key, n] : buckets_) buckets.push_back({key, n});
  return {{"mantissa_bits", mantissa_bits_}, {"count", count_}, {"buckets", std::move(buckets)}};
}

QuantileSketch QuantileSketch::from_json(const nlohmann::json& j) {
  QuantileSketch s(j.at("mantissa_bits").get<int>());
  s.count_ = j.at("count").get<std::uint64_t>();
  for (const auto& bucket : j.at("buckets"))
    s.buckets_[bucket.at(0).get<std::uint64_t>()] = bucket.at(1).get<std::uint64_t>();
  return s;
}

}  // namespace saltation::sweep
