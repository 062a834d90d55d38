// The block tree: summaries bitwise identical for any chunk size, thread count and shard split;
// the tree's arithmetic is the documented one; partials survive bytes; bad merges are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

#include "saltation/errors.hpp"
#include "saltation/sweep/block_reduction.hpp"
#include "saltation/sweep/distributions.hpp"
#include "saltation/sweep/sobol.hpp"
#include "saltation/sweep/summary.hpp"

using namespace saltation::sweep;

namespace {

constexpr double g = 9.81;
const std::vector<Distribution> parameters = {Distribution::uniform(1.0, 2.0), Distribution::uniform(0.5, 0.9),
                                              Distribution::normal(0.0, 1.0)};
constexpr std::uint64_t seed = 424242;

// The second impact time of a dropped ball, its gradient, and a heavy-tailed third output: a
// stand-in for solver outputs, written in SoA like a result batch.
void fill_outputs(std::uint64_t first, std::uint64_t count, double* out) {
  for (std::uint64_t i = 0; i < count; ++i) {
    double theta[3];
    sample_parameters(parameters.data(), 3, seed, first + i, theta);
    const double t1 = std::sqrt(2.0 * theta[0] / g);
    out[0 * count + i] = t1 * (1.0 + 2.0 * theta[1]);                   // t2
    out[1 * count + i] = t1 * (1.0 + 2.0 * theta[1]) / (2 * theta[0]);  // dt2/dh0
    out[2 * count + i] = 2.0 * t1;                                      // dt2/de
    out[3 * count + i] = theta[2] * theta[2] * theta[2];
  }
}

OutputSummary empty_summary() {
  SummaryOptions options;
  options.n_outputs = 4;
  options.histograms = {{0.5, 2.0, 30}, {0.0, 1.0, 30}, {0.8, 1.4, 30}, {-5.0, 5.0, 40}};
  return OutputSummary(options);
}

const BlockLayout layout{50000, 4096};  // 13 blocks, the last one short

std::vector<std::uint8_t> run_bytes(const BlockRange& blocks, const ExecutionPlan& plan) {
  return partial_to_bytes(reduce_blocks(empty_summary(), layout, blocks, plan, fill_outputs));
}

}  // namespace

TEST(SweepReduction, BitwiseIdenticalForAnyChunkSizeAndThreadCount) {
  const BlockRange all{0, layout.n_blocks()};
  const std::vector<std::uint8_t> reference = run_bytes(all, {4096, 1});
  for (std::uint64_t chunk : {1000u, 4096u, 7777u})
    for (int threads : {1, 2}) EXPECT_EQ(run_bytes(all, {chunk, threads}), reference) << chunk << " x " << threads;
  // Not vacuous: a different reduction tree (another block size) changes the low bits somewhere.
  const auto other_tree = reduce_all(empty_summary(), BlockLayout{50000, 1000}, {4096, 1}, fill_outputs);
  const auto total = partial_from_bytes<OutputSummary>(reference).total();
  EXPECT_NE(other_tree.moments().to_json(), total.moments().to_json());
  EXPECT_NEAR(other_tree.moments().mean(0), total.moments().mean(0), 1e-14);
}

TEST(SweepReduction, ShardsMergedInAnyOrderEqualOneRunBitwise) {
  const std::vector<std::uint8_t> reference = run_bytes({0, layout.n_blocks()}, {4096, 2});
  // Three shards, each run differently, through bytes, handed over out of order.
  std::vector<Partial<OutputSummary>> shards;
  shards.push_back(partial_from_bytes<OutputSummary>(run_bytes({6, 13}, {999, 2})));
  shards.push_back(partial_from_bytes<OutputSummary>(run_bytes({0, 5}, {4096, 1})));
  shards.push_back(partial_from_bytes<OutputSummary>(run_bytes({5, 6}, {10000, 1})));
  const Partial<OutputSummary> merged = merge_partials(shards);
  EXPECT_TRUE(merged.complete());
  EXPECT_EQ(partial_to_bytes(merged), reference);
  // Merging shards pairwise first, then the rest, is the same.
  const Partial<OutputSummary> left = merge_partials(std::vector<Partial<OutputSummary>>{shards[1], shards[2]});
  EXPECT_FALSE(left.complete());
  EXPECT_EQ(partial_to_bytes(merge_partials(std::vector<Partial<OutputSummary>>{shards[0], left})), reference);
  // The JSON text form is exact as well.
  const auto json_text = partial_to_json(merged).dump();
  EXPECT_EQ(partial_to_bytes(partial_from_json<OutputSummary>(nlohmann::json::parse(json_text))), reference);
}

TEST(SweepReduction, TreeIsTheDocumentedOne) {
  // The reference tree written out recursively: node (l, k) covers blocks [k 2^l, (k+1) 2^l)
  // clipped to the block count; leaves add in index order; a right child past the end is absent.
  const std::uint64_t n_blocks = layout.n_blocks();
  std::vector<double> outputs(4 * layout.n_samples);
  fill_outputs(0, layout.n_samples, outputs.data());
  const auto leaf = [&](std::uint64_t b) {
    OutputSummary s = empty_summary();
    for (std::uint64_t i = b * layout.block_size; i < std::min((b + 1) * layout.block_size, layout.n_samples); ++i) {
      const double row[4] = {outputs[i], outputs[layout.n_samples + i], outputs[2 * layout.n_samples + i],
                             outputs[3 * layout.n_samples + i]};
      s.add(i, row);
    }
    return s;
  };
  std::function<OutputSummary(int, std::uint64_t)> node = [&](int level, std::uint64_t k) {
    if (level == 0) return leaf(k);
    OutputSummary left = node(level - 1, 2 * k);
    if (((2 * k + 1) << (level - 1)) < n_blocks) left.merge(node(level - 1, 2 * k + 1));
    return left;
  };
  const OutputSummary expected = node(4, 0);  // 2^4 = 16 >= 13 blocks
  const OutputSummary total = reduce_all(empty_summary(), layout, {3000, 2}, fill_outputs);
  EXPECT_EQ(nlohmann::json::to_cbor(total.to_json()), nlohmann::json::to_cbor(expected.to_json()));
  EXPECT_EQ(total.n_samples(), layout.n_samples);
}

TEST(SweepReduction, SobolAccumulatorIsReproducibleToo) {
  const auto fill = [](std::uint64_t first, std::uint64_t count, double* out) {
    for (std::uint64_t i = 0; i < count; ++i)
      for (std::uint32_t m = 0; m < 5; ++m) {
        double theta[3];
        saltelli_parameters(parameters.data(), 3, seed, first + i, m, theta);
        out[m * count + i] = std::sqrt(2 * theta[0] / g) * (1 + 2 * theta[1]) + 0.1 * theta[2];
      }
  };
  const SobolAccumulator empty(3, seed, 20);
  const BlockLayout sobol_layout{9000, 4096};
  const auto a = reduce_all(empty, sobol_layout, {4096, 1}, fill);
  const auto b = reduce_all(empty, sobol_layout, {777, 2}, fill);
  EXPECT_EQ(nlohmann::json::to_cbor(a.to_json()), nlohmann::json::to_cbor(b.to_json()));
  std::vector<Partial<SobolAccumulator>> shards = {reduce_blocks(empty, sobol_layout, {2, 3}, {100, 1}, fill),
                                                   reduce_blocks(empty, sobol_layout, {0, 2}, {5000, 2}, fill)};
  EXPECT_EQ(nlohmann::json::to_cbor(merge_partials(shards).total().to_json()), nlohmann::json::to_cbor(a.to_json()));
}

TEST(SweepReduction, RefusesBadPlansAndMerges) {
  const auto empty = empty_summary();
  EXPECT_THROW(reduce_blocks(empty, layout, {3, 3}, {}, fill_outputs), saltation::InvalidInput);
  EXPECT_THROW(reduce_blocks(empty, layout, {0, 14}, {}, fill_outputs), saltation::InvalidInput);
  EXPECT_THROW(reduce_blocks(empty, layout, {0, 1}, {0, 1}, fill_outputs), saltation::InvalidInput);
  EXPECT_THROW(reduce_all(empty, BlockLayout{0, 4096}, {}, fill_outputs), saltation::InvalidInput);
  const auto a = reduce_blocks(empty, layout, {0, 2}, {}, fill_outputs);
  const auto b = reduce_blocks(empty, layout, {3, 5}, {}, fill_outputs);
  const auto c = reduce_blocks(empty, layout, {1, 4}, {}, fill_outputs);
  EXPECT_THROW(merge_partials(std::vector<Partial<OutputSummary>>{a, b}), saltation::InvalidInput);  // gap
  EXPECT_THROW(merge_partials(std::vector<Partial<OutputSummary>>{a, c}), saltation::InvalidInput);  // overlap
  auto other_layout = b;
  other_layout.layout.n_samples = 60000;
  other_layout.blocks = {2, 5};
  EXPECT_THROW(merge_partials(std::vector<Partial<OutputSummary>>{a, other_layout}), saltation::InvalidInput);
  EXPECT_THROW(a.total(), saltation::InvalidInput);
  EXPECT_THROW(partial_from_json<OutputSummary>(nlohmann::json{{"format", "other"}}), saltation::InvalidInput);
  auto truncated = partial_to_bytes(a);
  truncated.resize(truncated.size() / 2);
  EXPECT_THROW(partial_from_bytes<OutputSummary>(truncated), saltation::InvalidInput);
}

TEST(SweepReduction, ExceptionsFromFillPropagate) {
  const auto failing = [](std::uint64_t first, std::uint64_t count, double* out) {
    if (first + count > 30000) throw std::runtime_error("solver failed");
    fill_outputs(first, count, out);
  };
  EXPECT_THROW(reduce_all(empty_summary(), layout, {1000, 2}, failing), std::runtime_error);
}

TEST(SweepReduction, FailedRunHandsOverItsCompletedPrefixAndTheRestCompletesIt) {
  const std::vector<std::uint8_t> reference = run_bytes({0, layout.n_blocks()}, {4096, 1});
  // Samples from 30000 on fail (inside block 7): with 1 to 3 workers, each over consecutive runs of
  // blocks, the prefix handed over ends at or before block 7, never past a block not completed.
  for (int threads : {1, 2, 3}) {
    const auto failing = [](std::uint64_t first, std::uint64_t count, double* out) {
      if (first + count > 30000) throw std::runtime_error("solver failed");
      fill_outputs(first, count, out);
    };
    Partial<OutputSummary> completed;
    EXPECT_THROW(reduce_blocks(empty_summary(), layout, {0, layout.n_blocks()}, {1000, threads}, failing, &completed),
                 std::runtime_error);
    EXPECT_EQ(completed.blocks.first, 0u);
    EXPECT_LE(completed.blocks.end, 7u) << threads << " threads";
    if (threads == 1) {
      EXPECT_EQ(completed.blocks.end, 7u) << "one worker completes every block before the failure";
    }
    const Partial<OutputSummary> rest =
        partial_from_bytes<OutputSummary>(run_bytes({completed.blocks.end, layout.n_blocks()}, {2500, 2}));
    EXPECT_EQ(partial_to_bytes(merge_partials(std::vector<Partial<OutputSummary>>{completed, rest})), reference)
        << threads << " threads";
  }
}
