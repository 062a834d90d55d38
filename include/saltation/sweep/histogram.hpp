#pragma once
// Integer-count summaries of one output: a fixed-bin histogram and a quantile sketch. Both hold
// only counts, so their merge is exact: the result is the same in any order and grouping.
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "saltation/config.hpp"

namespace saltation::sweep {

// `n_bins` equal bins over [low, high), given up front (a streaming run cannot revisit samples
// to choose a range). Bin b holds low + b w <= x < low + (b + 1) w, w = (high - low) / n_bins, with
// the bin computed as floor((x - low) / (high - low) * n_bins); below and above count the rest.
struct HistogramRange {
  double low = 0.0, high = 1.0;
  std::uint32_t n_bins = 64;
};

// Where x goes in a histogram over `range`: 0 below (NaN too), 1 + bin, n_bins + 1 above. One
// definition for the host's add and a device's fold.
SALTATION_HD inline std::uint32_t histogram_slot(const HistogramRange& range, double x) {
  if (!(x >= range.low)) return 0;
  if (x >= range.high) return range.n_bins + 1;
  const auto bin = static_cast<std::uint64_t>((x - range.low) / (range.high - range.low) * range.n_bins);
  // x just below high can round up to n_bins.
  return 1 + static_cast<std::uint32_t>(bin < range.n_bins ? bin : range.n_bins - 1);
}

// The bit pattern reordered so that unsigned order is the order of the values: positive numbers
// get the sign bit set, negative ones are complemented.
SALTATION_HD inline std::uint64_t sortable_bits(double x) {
  std::uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  constexpr std::uint64_t sign_bit = std::uint64_t(1) << 63;
  return (bits & sign_bit) ? ~bits : (bits | sign_bit);
}

// The QuantileSketch bucket of a finite x (below): sign, exponent and the top m mantissa bits, a
// key of 12 + m <= 32 bits.
SALTATION_HD inline std::uint64_t sketch_key(double x, int mantissa_bits) {
  return sortable_bits(x) >> (52 - mantissa_bits);
}

class Histogram {
 public:
  explicit Histogram(HistogramRange range = {});
  void add(double x);
  void merge(const Histogram& other);
  // Adds counts per slot (histogram_slot's numbering: below, the bins, above): a device's fold.
  void add_slots(const std::uint64_t* slots);

  const HistogramRange& range() const { return range_; }
  const std::vector<std::uint64_t>& counts() const { return counts_; }
  std::uint64_t below() const { return below_; }
  std::uint64_t above() const { return above_; }

  nlohmann::json to_json() const;
  static Histogram from_json(const nlohmann::json& j);

 private:
  HistogramRange range_;
  std::vector<std::uint64_t> counts_;
  std::uint64_t below_ = 0, above_ = 0;
};

// A streaming quantile sketch on the bit pattern of doubles (log-linear buckets, as in
// HdrHistogram or DDSketch, but computed with integer operations only).
//
// A bucket is the set of doubles that share sign, exponent and the top m mantissa bits, so it
// spans a relative width of at most 2^-m; its representative is its midpoint (0 for the two
// buckets that hold +0 and -0).
// quantile(q) returns the representative r of the bucket holding the order statistic x_(k),
// k = max(1, ceil(q n)) (the "inverted CDF" definition), and
//     |r - x_(k)| <= 2^-(m+1) |x_(k)|        for normal x_(k) (|x| >= 2^-1022),
//     |r - x_(k)| <= 2^-(1022+m)             for zero and subnormal x_(k).
// m = 7 (the default) bounds the relative error by 2^-8 = 0.39 %, m = 10 by 0.049 %.
// Memory: one (key, count) pair per occupied bucket, at most 2^m per binade the data reaches.
// Only finite values may be added (the caller counts the rest).
class QuantileSketch {
 public:
  explicit QuantileSketch(int mantissa_bits = 7);
  void add(double x);
  void merge(const QuantileSketch& other);
  // `count` more values in bucket `key` (sketch_key): a device's fold.
  void add_bucket(std::uint64_t key, std::uint64_t count);

  std::uint64_t count() const { return count_; }
  int mantissa_bits() const { return mantissa_bits_; }
  double relative_error_bound() const;  // 2^-(m+1)
  // Requires count() > 0 and 0 <= q <= 1.
  double quantile(double q) const;

  nlohmann::json to_json() const;
  static QuantileSketch from_json(const nlohmann::json& j);

 private:
  int mantissa_bits_;
  std::uint64_t count_ = 0;
  std::map<std::uint64_t, std::uint64_t> buckets_;  // key (ordered like the values) -> count
};

}  // namespace saltation::sweep
