#include "saltation/sweep/partial_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>

#include "saltation/errors.hpp"
#include "saltation/io/files.hpp"

namespace saltation::sweep {

using nlohmann::json;

namespace {

std::string fnv1a64(const std::string& bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// The message of an InvalidInput without its "invalid input: " prefix, to restate it for a file.
std::string bare(const InvalidInput& e) { return std::string(e.what()).substr(std::strlen("invalid input: ")); }

// Walks one partial's JSON; every failure is InvalidInput(where, "partial.<path>: <what>").
class InvariantWalk {
 public:
  explicit InvariantWalk(std::string where) : where_(std::move(where)) {}

  void partial(const json& p) {
    const std::uint64_t n_samples = count(p, "n_samples", ""), block_size = count(p, "block_size", "");
    if (n_samples == 0 || block_size == 0) fail("n_samples", "n_samples and block_size must be >= 1");
    const std::uint64_t n_blocks = n_samples / block_size + (n_samples % block_size != 0);
    const std::uint64_t first = count(p, "first_block", ""), end = count(p, "end_block", "");
    if (first >= end || end > n_blocks)
      fail("end_block", "blocks [" + std::to_string(first) + ", " + std::to_string(end) +
                            ") are not within the study's " + std::to_string(n_blocks) + " blocks");
    if (!p.contains("nodes") || !p.at("nodes").is_array()) fail("nodes", "must be an array of tree nodes");
    const json& nodes = p.at("nodes");
    std::uint64_t cursor = first;  // the next block the nodes must cover, in order
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const std::string at = "nodes[" + std::to_string(k) + "]";
      const std::uint64_t level = count(nodes[k], "level", at), index = count(nodes[k], "index", at);
      if (level > 63 || index > (UINT64_MAX >> level) - 1) fail(at, "level or index out of range");
      const std::uint64_t node_first = index << level, node_end = std::min((index + 1) << level, n_blocks);
      if (node_first != cursor || node_end <= node_first)
        fail(at, "covers blocks from " + std::to_string(node_first) + ", the nodes before end at " +
                     std::to_string(cursor));
      samples_ = std::min(node_end * block_size, n_samples) - node_first * block_size;
      if (!nodes[k].contains("value")) fail(at, "has no value");
      value(nodes[k].at("value"), at + ".value");
      cursor = node_end;
    }
    if (cursor != end)
      fail("nodes", "cover blocks [" + std::to_string(first) + ", " + std::to_string(cursor) +
                        "), not up to end_block " + std::to_string(end));
  }

 private:
  [[noreturn]] void fail(const std::string& at, const std::string& what) const {
    throw InvalidInput(where_, -1, "partial" + (at.empty() ? "" : "." + at) + ": " + what);
  }
  std::string join(const std::string& at, const std::string& key) const { return at.empty() ? key : at + "." + key; }

  std::uint64_t count(const json& o, const char* key, const std::string& at) const {
    if (!o.is_object() || !o.contains(key) || !o.at(key).is_number_unsigned())
      fail(join(at, key), "must be a whole number >= 0");
    return o.at(key).get<std::uint64_t>();
  }
  double number(const json& v, const std::string& at) const {
    if (!v.is_number()) fail(at, "must be a number");
    return v.get<double>();
  }
  const json& array(const json& o, const char* key, const std::string& at) const {
    if (!o.contains(key) || !o.at(key).is_array()) fail(join(at, key), "must be an array");
    return o.at(key);
  }
  // a + b, or a failure naming `at` when the sum does not fit.
  std::uint64_t add(std::uint64_t a, std::uint64_t b, const std::string& at) const {
    if (a > UINT64_MAX - b) fail(at, "counts overflow");
    return a + b;
  }

  // Every number an accumulator's reader converts to an integer must be one: a float beyond the
  // integer's range would be undefined behaviour there.
  void numbers(const json& o, const char* key, const std::string& at, bool whole) const {
    for (const json& x : array(o, key, at))
      if (!(whole ? x.is_number_unsigned() : x.is_number() || x.is_null()))
        fail(join(at, key), whole ? "must hold whole numbers >= 0" : "must hold numbers");
  }

  // Any accumulator inside a node's value: summaries and Sobol sums are recognised by any of their
  // keys (then all of them are required), everything else is walked into, so accumulators added
  // later are checked alike.
  void value(const json& v, const std::string& at) {
    const auto has_any = [&v](std::initializer_list<const char*> keys) {
      for (const char* k : keys)
        if (v.contains(k)) return true;
      return false;
    };
    if (v.is_object() && has_any({"n_finite", "moments", "histograms", "quantiles"})) return summary(v, at);
    if (v.is_object() && has_any({"n_factors", "n_resamples", "weight", "comoment"})) return sobol(v, at);
    if (v.is_object())
      for (const auto& [key, child] : v.items()) value(child, at + "." + key);
    if (v.is_array())
      for (std::size_t i = 0; i < v.size(); ++i) value(v[i], at + "[" + std::to_string(i) + "]");
  }

  void summary(const json& s, const std::string& at) const {
    const std::uint64_t finite = count(s, "n_finite", at);
    const std::uint64_t total = add(finite, count(s, "n_non_finite", at), at);
    if (total != samples_)
      fail(at, "n_finite + n_non_finite = " + std::to_string(total) + ", but its blocks hold " +
                   std::to_string(samples_) + " samples");
    if (!s.contains("moments") || !s.at("moments").is_object()) fail(at + ".moments", "must be an object");
    const json& m = s.at("moments");
    count(m, "dim", at + ".moments");
    numbers(m, "comoment", at + ".moments", false);
    if (!m.contains("weight")) fail(at + ".moments", "must hold the weight");
    const double weight = number(m.at("weight"), at + ".moments.weight");
    if (weight != static_cast<double>(finite))
      fail(at + ".moments.weight", "is " + json(weight).dump() + ", not the " + std::to_string(finite) +
                                       " finite samples of its blocks (n_finite)");
    const json &mean = array(m, "mean", at + ".moments"), &min = array(s, "min", at), &max = array(s, "max", at);
    if (finite > 0) {
      if (min.size() != mean.size() || max.size() != mean.size())
        fail(at, "min, max and moments.mean differ in length");
      for (std::size_t i = 0; i < mean.size(); ++i) {
        const std::string output = "[" + std::to_string(i) + "]";
        const double lo = number(min[i], at + ".min" + output), hi = number(max[i], at + ".max" + output);
        const double mu = number(mean[i], at + ".moments.mean" + output);
        // The mean is a convex combination computed with rounding: a few ulps outside is not an edit.
        const double slack = 1e-12 * std::max(std::fabs(lo), std::fabs(hi));
        if (!(lo <= hi && mu >= lo - slack && mu <= hi + slack))
          fail(at, "output " + std::to_string(i) + ": min <= mean <= max fails (" + json(lo).dump() + ", " +
                       json(mu).dump() + ", " + json(hi).dump() + ")");
      }
    }
    const json& histograms = array(s, "histograms", at);
    for (std::size_t i = 0; i < histograms.size(); ++i) {
      const std::string h = at + ".histograms[" + std::to_string(i) + "]";
      if (!histograms[i].is_object() || !histograms[i].contains("low") || !histograms[i].contains("high"))
        fail(h, "needs low and high");
      number(histograms[i].at("low"), h + ".low");
      number(histograms[i].at("high"), h + ".high");
      std::uint64_t sum = add(count(histograms[i], "below", h), count(histograms[i], "above", h), h);
      const json& counts = array(histograms[i], "counts", h);
      for (std::size_t b = 0; b < counts.size(); ++b) {
        if (!counts[b].is_number_unsigned()) fail(h + ".counts", "must be whole numbers >= 0");
        sum = add(sum, counts[b].get<std::uint64_t>(), h);
      }
      if (sum != finite)
        fail(h, "counts (with below and above) add up to " + std::to_string(sum) + ", not the " +
                    std::to_string(finite) + " finite samples (n_finite)");
    }
    const json& quantiles = array(s, "quantiles", at);
    for (std::size_t i = 0; i < quantiles.size(); ++i) {
      const std::string q = at + ".quantiles[" + std::to_string(i) + "]";
      const std::uint64_t n = count(quantiles[i], "count", q);
      count(quantiles[i], "mantissa_bits", q);
      std::uint64_t sum = 0;
      for (const json& bucket : array(quantiles[i], "buckets", q)) {
        if (!bucket.is_array() || bucket.size() != 2 || !bucket[0].is_number_unsigned() ||
            !bucket[1].is_number_unsigned())
          fail(q + ".buckets", "must be [key, count] pairs of whole numbers");
        sum = add(sum, bucket[1].get<std::uint64_t>(), q);
      }
      if (n != finite || sum != n)
        fail(q, "count " + std::to_string(n) + " (buckets " + std::to_string(sum) + ") is not the " +
                    std::to_string(finite) + " finite samples (n_finite)");
    }
  }

  // Replicate 0 weighs every finite sample 1 in each of its n_factors + 1 sets; bootstrap weights
  // are counts too.
  void sobol(const json& s, const std::string& at) const {
    const std::uint64_t factors = count(s, "n_factors", at), non_finite = count(s, "n_non_finite", at);
    count(s, "seed", at);
    count(s, "n_resamples", at);
    numbers(s, "mean", at, false);
    numbers(s, "comoment", at, false);
    const json& weights = array(s, "weight", at);
    if (weights.size() <= factors) fail(at + ".weight", "has fewer than n_factors + 1 entries");
    for (std::size_t i = 0; i < weights.size(); ++i) {
      const double w = number(weights[i], at + ".weight[" + std::to_string(i) + "]");
      if (!(w >= 0.0 && std::isfinite(w))) fail(at + ".weight[" + std::to_string(i) + "]", "must be finite and >= 0");
      if (i <= factors && w + static_cast<double>(non_finite) != static_cast<double>(samples_))
        fail(at + ".weight[" + std::to_string(i) + "]", "is " + json(w).dump() + ": with n_non_finite " +
                                                            std::to_string(non_finite) + " it is not the " +
                                                            std::to_string(samples_) + " samples of its blocks");
    }
  }

  std::string where_;
  std::uint64_t samples_ = 0;  // of the node being walked
};

// What summary_json and a merge read of the header, against the accumulators it describes: a
// resealed header that disagrees with them is refused here, not met as an out-of-range index.
std::string header_mismatch(const StudyResult& r) {
  const json& h = r.header;
  for (const char* key : {"model", "config", "samples", "seed", "sobol", "sampling", "parameters", "nominal", "options",
                          "param_names", "objectives"})
    if (!h.contains(key)) return std::string("its header has no \"") + key + "\"";
  const json &names = h.at("param_names"), &parameters = h.at("parameters"), &objectives = h.at("objectives");
  if (!names.is_array() || !parameters.is_object() || !objectives.is_array() || !h.at("sobol").is_boolean())
    return "its header's param_names, parameters, objectives or sobol have the wrong type";
  int factors = 0;
  for (const json& name : names) {
    if (!name.is_string() || !parameters.contains(name.get<std::string>()))
      return "its header's param_names and parameters disagree";
    const json& d = parameters.at(name.get<std::string>());
    factors += d.is_object() && d.contains("dist");
  }
  for (const json& o : objectives)
    if (!o.is_object() || !o.contains("name") || !o.at("name").is_string()) return "its header's objectives need names";
  for (const TreeNode<StudyAccumulator>& node : r.partial.nodes) {
    const StudyAccumulator& acc = node.value;
    if (acc.outcomes().input_width() != 3 || !acc.outcomes().has_histograms())
      return "its outcomes are not status, event count and topology change with histograms";
    if (acc.objectives().size() != objectives.size())
      return "it holds " + std::to_string(acc.objectives().size()) + " objectives, its header " +
             std::to_string(objectives.size());
    if (acc.sobol().size() != (h.at("sobol").get<bool>() ? objectives.size() : 0))
      return "its Sobol sums do not match the header's sobol and objectives";
    for (const SobolAccumulator& sums : acc.sobol())
      if (sums.n_factors() != factors)
        return "its Sobol sums have " + std::to_string(sums.n_factors()) + " factors, the header " +
               std::to_string(factors) + " sampled parameters";
  }
  return "";
}

}  // namespace

PartialHashes partial_hashes(const json& result_json) {
  const json& header = result_json.at("header");
  return {fnv1a64(header.dump()), fnv1a64(json{{"header", header}, {"partial", result_json.at("partial")}}.dump())};
}

json seal_partial(const StudyResult& result, const json& provenance) {
  json j = result_to_json(result);
  const PartialHashes h = partial_hashes(j);
  j["provenance"] = provenance;
  j["header_hash"] = h.header_hash;
  j["checksum"] = h.checksum;
  return j;
}

void check_partial_invariants(const json& partial, const std::string& where) { InvariantWalk(where).partial(partial); }

PartialFile read_partial_file(const std::string& path) {
  json j;
  try {
    j = io::read_json_file(path);
  } catch (const InvalidInput& e) {
    throw InvalidInput(path, -1, "not a whole JSON file (truncated?): " + bare(e));
  }
  return parse_partial(j, path);
}

PartialFile parse_partial(const json& j, const std::string& path) {
  auto fail = [&path](const std::string& what) { return InvalidInput(path, -1, what); };
  if (!j.is_object() || !j.contains("header") || !j.contains("partial")) {
    if (j.is_object() && j.contains("statuses") && j.contains("objectives"))
      throw fail("is a summary.json, not a shard's partial: give the shard's output folder (its partial.json)");
    throw fail("is not a partial written by saltation sweep (no \"header\" and \"partial\")");
  }
  if (!j.contains("checksum") || !j.contains("header_hash") || !j.at("checksum").is_string() ||
      !j.at("header_hash").is_string())
    throw fail("has no checksum (written by an older saltation, or edited): rerun its shard");
  const PartialHashes h = partial_hashes(j);
  if (j.at("header_hash") != h.header_hash)
    throw fail("header_hash " + j.at("header_hash").get<std::string>() + " is not its header's (" + h.header_hash +
               "): the header was edited; rerun its shard");
  if (j.at("checksum") != h.checksum)
    throw fail("checksum " + j.at("checksum").get<std::string>() + " does not match its content (" + h.checksum +
               "): the file was edited or damaged; rerun its shard");
  check_partial_invariants(j.at("partial"), path);
  PartialFile f;
  f.path = path;
  f.header_hash = h.header_hash;
  try {
    f.result = result_from_json(j);
  } catch (const InvalidInput& e) {
    throw fail(bare(e));
  }
  const json& header = f.result.header;
  if (!header.is_object() || header.value("samples", json()) != json(f.result.partial.layout.n_samples) ||
      header.value("block_size", json()) != json(f.result.partial.layout.block_size))
    throw fail("its header's samples and block_size are not the partial's n_samples and block_size");
  const std::string mismatch = header_mismatch(f.result);
  if (!mismatch.empty()) throw fail(mismatch);
  f.provenance = j.value("provenance", json::object());
  if (!f.provenance.is_object()) throw fail("provenance must be an object");
  const json seconds = f.provenance.value("wall_seconds", json(0.0));
  if (!seconds.is_number() || !(seconds.get<double>() >= 0.0))
    throw fail("provenance.wall_seconds must be a number >= 0");
  if (!f.provenance.value("backend", json("")).is_string()) throw fail("provenance.backend must be a string");
  return f;
}

}  // namespace saltation::sweep
