#pragma once
// A shard's partial.json, sealed: the study result (result_to_json: header and block-tree nodes),
// the run's provenance, and two hashes that `saltation merge` and `sweep --resume` verify, so that
// an edited, truncated or mixed-up file is refused instead of merged into a plausible summary:
//   "header_hash": of the header's JSON text: which study the partial belongs to;
//   "checksum":    of the header's and the partial's JSON text: the whole content.
// Both are FNV-1a 64 in 16 hex digits: they catch accidents and hand edits, not forgeries, and
// leave the provenance (wall time, backend) out, so reruns of a shard carry the same ones.
#include <nlohmann/json.hpp>

#include <string>

#include "saltation/sweep/study.hpp"

namespace saltation::sweep {

// The two hashes of a study result's JSON (result_to_json): {header_hash, checksum}.
struct PartialHashes {
  std::string header_hash, checksum;
};
PartialHashes partial_hashes(const nlohmann::json& result_json);

// The sealed partial.json: result_to_json(result), "provenance", and the two hashes.
nlohmann::json seal_partial(const StudyResult& result, const nlohmann::json& provenance);

struct PartialFile {
  std::string path;
  StudyResult result;
  nlohmann::json provenance;  // an object; empty when the file has none
  std::string header_hash;
};

// Reads a sealed partial from `path`. IoError when it cannot be read; InvalidInput whose parameter
// is `path` for anything else: not JSON (truncated), not a sealed partial (a summary.json), a hash
// that does not match, a value of the wrong type, or a broken invariant (check_partial_invariants).
PartialFile read_partial_file(const std::string& path);
// The same for a partial already parsed, `path` naming it in errors.
PartialFile parse_partial(const nlohmann::json& j, const std::string& path);

// What every partial's numbers must satisfy, walked over its "partial" JSON (partial_to_json): the
// nodes cover [first_block, end_block) in order; in every accumulator of a node (objects with
// n_finite and moments, or Sobol sums) the finite and non-finite counts add up to the samples of
// the node's blocks, the moments' weight is the finite count, min <= mean <= max, and histogram
// and quantile-sketch totals equal the finite count. InvalidInput(`where`, ...) names the first
// broken one by its JSON path.
void check_partial_invariants(const nlohmann::json& partial, const std::string& where);

}  // namespace saltation::sweep
