// libFuzzer target: a shard's partial.json as `saltation merge` and `sweep --resume` read it
// (sweep/partial_file.hpp). The input is sealed first (its hashes recomputed), so that the fuzzer
// gets past them to the invariant walk, the accumulators' readers, the header's checks and the
// merge. (The summary reads the header as the study wrote it: a resealed forgery is not its input.)
#include <cstddef>
#include <cstdint>

#include "fuzz_json.hpp"
#include "saltation/sweep/partial_file.hpp"
#include "saltation/sweep/study.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace saltation;
  return fuzz::with_parsed_json(data, size, [](nlohmann::json j) {
    if (j.is_object() && j.contains("header") && j.contains("partial")) {
      const sweep::PartialHashes h = sweep::partial_hashes(j);
      j["header_hash"] = h.header_hash;
      j["checksum"] = h.checksum;
    }
    const sweep::PartialFile f = sweep::parse_partial(j, "partial.json");
    const sweep::StudyResult merged = sweep::merge_results({f.result});
    sweep::seal_partial(merged, f.provenance);
  });
}
