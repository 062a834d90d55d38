#pragma once
// The one merge algebra: a fixed reduction tree over blocks of the global sample index, so that a
// summary is bitwise identical whatever the chunk size, thread count or shard split.
//
// The samples 0 .. n-1 are cut into blocks of `block_size` consecutive indices (the last may be
// short). A block's accumulator is built by add() in index order. Above the blocks sits a binary
// tree fixed by the block count alone: node (level l, index k) covers blocks
// [k 2^l, (k+1) 2^l) clipped to the block count, and its value is merge(left child, right child),
// or the left child unchanged when the right one lies wholly past the end. The root covers
// everything. Every node's value is therefore a function of its index range only.
//
// Chunks, threads and shards only decide who computes which block: each worker takes a
// contiguous run of whole blocks and keeps the tree nodes it can complete (a stack, at most one
// node per level, like a binary counter); runs are then pushed in index order into the same stack
// discipline. Only siblings are ever merged, so the arithmetic is the tree's, in the tree's order.
// A shard's Partial is its list of completed nodes; merge_partials() of contiguous shards
// completes the same tree, bit for bit the unsharded result.
//
// An accumulator type Acc provides:
//   int input_width() const;                          values per sample
//   void add(std::uint64_t index, const double* v);   one sample (v: input_width() values)
//   void merge(const Acc& later);                     later covers indices after this one's
//   nlohmann::json to_json() const; static Acc from_json(const nlohmann::json&);
// (OutputSummary and SobolAccumulator are the two in this library.)
#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "saltation/errors.hpp"

namespace saltation::sweep {

struct BlockLayout {
  std::uint64_t n_samples = 0;
  std::uint64_t block_size = 4096;
  std::uint64_t n_blocks() const { return (n_samples + block_size - 1) / block_size; }
};

// Blocks [first, end).
struct BlockRange {
  std::uint64_t first = 0, end = 0;
};

// How a run is executed; none of it changes a result. `fill` is called with at most chunk_size
// samples at a time, from up to n_threads OpenMP threads at once; the whole blocks of a chunk are
// folded by up to fold_threads threads (fold_blocks_on_host).
struct ExecutionPlan {
  std::uint64_t chunk_size = 4096;
  int n_threads = 1;
  int fold_threads = 1;
};

template <class Acc>
struct TreeNode {
  std::uint32_t level = 0;
  std::uint64_t index = 0;
  Acc value;
};

// The completed tree nodes of a run over whole blocks, in index order. A run over all blocks has
// exactly one node: the root.
template <class Acc>
struct Partial {
  BlockLayout layout;
  BlockRange blocks;
  std::vector<TreeNode<Acc>> nodes;

  bool complete() const { return blocks.first == 0 && blocks.end == layout.n_blocks(); }
  const Acc& total() const {
    if (!complete() || nodes.size() != 1)
      throw InvalidInput("partial", -1,
                         "covers blocks " + std::to_string(blocks.first) + ".." + std::to_string(blocks.end) + " of " +
                             std::to_string(layout.n_blocks()) + ", not all of them");
    return nodes.front().value;
  }
};

namespace detail {

inline void check_layout(const BlockLayout& layout) {
  if (layout.n_samples == 0) throw InvalidInput("n_samples", -1, "must be positive");
  if (layout.block_size == 0) throw InvalidInput("block_size", -1, "must be positive");
}

// Pushes the next node (in index order) and merges while the top of the stack completes a parent.
template <class Acc>
void push_node(std::vector<TreeNode<Acc>>& stack, TreeNode<Acc> node, std::uint64_t n_blocks) {
  stack.push_back(std::move(node));
  for (;;) {
    TreeNode<Acc>& top = stack.back();
    if (top.index == 0 && (std::uint64_t(1) << top.level) >= n_blocks) return;  // the root
    if (top.index % 2 == 0) {
      // A left child whose sibling lies wholly past the last block is its parent already.
      if (((top.index + 1) << top.level) < n_blocks) return;
      ++top.level;
      top.index /= 2;
      continue;
    }
    if (stack.size() < 2) return;
    TreeNode<Acc>& left = stack[stack.size() - 2];
    if (left.level != top.level || left.index + 1 != top.index) return;
    left.value.merge(top.value);
    stack.pop_back();
    ++left.level;
    left.index /= 2;
  }
}

// The end of the blocks covered by nodes pushed in index order from block `first_block` on.
template <class Acc>
std::uint64_t covered_end(const std::vector<TreeNode<Acc>>& stack, std::uint64_t first_block, std::uint64_t n_blocks) {
  if (stack.empty()) return first_block;
  const TreeNode<Acc>& last = stack.back();
  return std::min((last.index + 1) << last.level, n_blocks);
}

// Blocks [first_block, end_block) by one worker into `stack`: fill chunk by chunk; a chunk's whole
// blocks go to fold_blocks at once, a block split across chunks is added sample by sample in index
// order. Either way each block's value is add() over its samples in order, so the result is the
// same. When fill or fold_blocks throws, `stack` keeps the blocks completed before.
template <class Acc, class Fill, class FoldBlocks>
void reduce_run(const Acc& empty, const BlockLayout& layout, std::uint64_t first_block, std::uint64_t end_block,
                std::uint64_t chunk_size, Fill& fill, FoldBlocks& fold_blocks, std::vector<TreeNode<Acc>>& stack) {
  const std::uint64_t n_blocks = layout.n_blocks(), bs = layout.block_size;
  const int width = empty.input_width();
  const std::uint64_t begin = first_block * bs;
  const std::uint64_t end = std::min(end_block * bs, layout.n_samples);
  std::vector<double> outputs(static_cast<std::size_t>(std::min(chunk_size, end - begin)) * width);
  std::vector<double> row(width);
  TreeNode<Acc> open{0, first_block, empty};  // the block being added to sample by sample
  for (std::uint64_t start = begin; start < end;) {
    const std::uint64_t count = std::min(chunk_size, end - start);
    fill(start, count, outputs.data());
    for (std::uint64_t i = 0; i < count;) {
      const std::uint64_t index = start + i, block = index / bs;
      const std::uint64_t block_end = std::min((block + 1) * bs, layout.n_samples);
      if (index == block * bs && block_end <= start + count) {
        std::uint64_t whole_end = block_end;  // the run of whole blocks that starts here
        while (whole_end < start + count && std::min(whole_end + bs, layout.n_samples) <= start + count)
          whole_end = std::min(whole_end + bs, layout.n_samples);
        std::vector<Acc> folded = fold_blocks(empty, index, whole_end - index, bs, outputs.data() + i, count);
        for (std::size_t k = 0; k < folded.size(); ++k)
          push_node(stack, TreeNode<Acc>{0, block + k, std::move(folded[k])}, n_blocks);
        i += whole_end - index;
        continue;
      }
      if (index == block * bs) open = TreeNode<Acc>{0, block, empty};
      for (int r = 0; r < width; ++r) row[r] = outputs[r * count + i];
      open.value.add(index, row.data());
      if (index + 1 == block_end) push_node(stack, std::move(open), n_blocks);
      ++i;
    }
    start += count;
  }
}

}  // namespace detail

// The whole blocks of samples [first_index, first_index + n_samples) (first_index a block start),
// each built by add() in index order, in parallel over blocks: one accumulator per block. `outputs`
// holds value r of sample first_index + i at outputs[r * stride + i].
template <class Acc>
std::vector<Acc> fold_blocks_on_host(const Acc& empty, std::uint64_t first_index, std::uint64_t n_samples,
                                     std::uint64_t block_size, const double* outputs, std::uint64_t stride,
                                     int n_threads) {
  const std::int64_t n = static_cast<std::int64_t>((n_samples + block_size - 1) / block_size);
  const int width = empty.input_width();
  std::vector<Acc> blocks(static_cast<std::size_t>(n), empty);
#pragma omp parallel for schedule(dynamic, 1) num_threads(n_threads)
  for (std::int64_t k = 0; k < n; ++k) {
    std::vector<double> row(width);
    const std::uint64_t first = k * block_size, last = std::min(first + block_size, n_samples);
    for (std::uint64_t i = first; i < last; ++i) {
      for (int r = 0; r < width; ++r) row[r] = outputs[r * stride + i];
      blocks[k].add(first_index + i, row.data());
    }
  }
  return blocks;
}

// Runs blocks `blocks` of `layout` and returns their partial. fill(first_index, count, outputs)
// writes the input_width() values of samples first_index .. first_index + count - 1 in SoA order
// (value r of sample first_index + i at outputs[r * count + i]); it must be safe to call from
// several threads at once. fold_blocks(empty, first_index, n_samples, block_size, outputs, stride)
// returns the accumulators of the whole blocks in that range, each equal to add() over its samples
// in order (fold_blocks_on_host, or a device's fold). Exceptions propagate (the first one); when
// `completed` is given, it is set first to the partial of the blocks completed before the failure
// from blocks.first on without a gap (blocks.end == blocks.first when none), so that a stopped run
// can keep them (an interrupt, a CUDA failure) and a later run over the rest completes the tree.
template <class Acc, class Fill, class FoldBlocks>
Partial<Acc> reduce_blocks(const Acc& empty, const BlockLayout& layout, const BlockRange& blocks,
                           const ExecutionPlan& plan, Fill&& fill, FoldBlocks&& fold_blocks,
                           Partial<Acc>* completed = nullptr) {
  detail::check_layout(layout);
  if (plan.chunk_size == 0) throw InvalidInput("chunk_size", -1, "must be positive");
  if (plan.n_threads < 1) throw InvalidInput("n_threads", -1, "must be at least 1");
  if (blocks.first >= blocks.end || blocks.end > layout.n_blocks())
    throw InvalidInput("blocks", -1, "need first < end <= " + std::to_string(layout.n_blocks()));
  // A few runs per thread balance uneven sample costs; how many never changes the result.
  const std::uint64_t n_range = blocks.end - blocks.first;
  const std::int64_t n_runs = static_cast<std::int64_t>(std::min<std::uint64_t>(n_range, 4u * plan.n_threads));
  std::vector<std::vector<TreeNode<Acc>>> runs(n_runs);
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1) num_threads(plan.n_threads)
  for (std::int64_t k = 0; k < n_runs; ++k) {
    try {
      const std::uint64_t first = blocks.first + n_range * k / n_runs;
      const std::uint64_t end = blocks.first + n_range * (k + 1) / n_runs;
      detail::reduce_run(empty, layout, first, end, plan.chunk_size, fill, fold_blocks, runs[k]);
    } catch (...) {
#pragma omp critical(saltation_sweep_error)
      if (!error) error = std::current_exception();
    }
  }
  Partial<Acc> partial{layout, blocks, {}};
  for (std::int64_t k = 0; k < n_runs; ++k) {
    for (auto& node : runs[k]) detail::push_node(partial.nodes, std::move(node), layout.n_blocks());
    if (!error) continue;
    // Runs are consecutive ranges: the completed blocks end at the first run that did not finish.
    partial.blocks.end = detail::covered_end(partial.nodes, blocks.first, layout.n_blocks());
    if (partial.blocks.end < blocks.first + n_range * (k + 1) / n_runs) break;
  }
  if (error) {
    if (completed) *completed = std::move(partial);
    std::rethrow_exception(error);
  }
  return partial;
}

// The same with the whole blocks folded on the host by plan.fold_threads threads.
template <class Acc, class Fill>
Partial<Acc> reduce_blocks(const Acc& empty, const BlockLayout& layout, const BlockRange& blocks,
                           const ExecutionPlan& plan, Fill&& fill, Partial<Acc>* completed = nullptr) {
  return reduce_blocks(
      empty, layout, blocks, plan, fill,
      [&plan](const Acc& e, std::uint64_t first_index, std::uint64_t n_samples, std::uint64_t block_size,
              const double* outputs, std::uint64_t stride) {
        return fold_blocks_on_host(e, first_index, n_samples, block_size, outputs, stride, plan.fold_threads);
      },
      completed);
}

// All samples of `layout`: the root of the tree.
template <class Acc, class Fill>
Acc reduce_all(const Acc& empty, const BlockLayout& layout, const ExecutionPlan& plan, Fill&& fill) {
  detail::check_layout(layout);
  return reduce_blocks(empty, layout, BlockRange{0, layout.n_blocks()}, plan, fill).total();
}

// Shard partials of one study (same layout), given in any order, that together cover a
// contiguous range of blocks without overlap: their partial over that range.
template <class Acc>
Partial<Acc> merge_partials(std::vector<Partial<Acc>> partials) {
  if (partials.empty()) throw InvalidInput("partials", -1, "nothing to merge");
  std::sort(partials.begin(), partials.end(),
            [](const Partial<Acc>& x, const Partial<Acc>& y) { return x.blocks.first < y.blocks.first; });
  const BlockLayout layout = partials.front().layout;
  for (std::size_t s = 0; s < partials.size(); ++s) {
    if (partials[s].layout.n_samples != layout.n_samples || partials[s].layout.block_size != layout.block_size)
      throw InvalidInput("partials", static_cast<long>(s), "n_samples or block_size differs from the others'");
    if (s > 0 && partials[s].blocks.first != partials[s - 1].blocks.end)
      throw InvalidInput("partials", static_cast<long>(s),
                         "starts at block " + std::to_string(partials[s].blocks.first) +
                             " but the previous one ends at " + std::to_string(partials[s - 1].blocks.end) +
                             " (gap or overlap)");
  }
  Partial<Acc> merged{layout, {partials.front().blocks.first, partials.back().blocks.end}, {}};
  for (auto& partial : partials)
    for (auto& node : partial.nodes) detail::push_node(merged.nodes, std::move(node), layout.n_blocks());
  return merged;
}

// A partial as JSON (numbers exact for finite values) and as bytes (CBOR of that JSON: doubles
// stored as their 8 bytes, so any value survives), for `saltation merge` of shards.
template <class Acc>
nlohmann::json partial_to_json(const Partial<Acc>& partial) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& node : partial.nodes)
    nodes.push_back({{"level", node.level}, {"index", node.index}, {"value", node.value.to_json()}});
  return {{"format", "saltation-sweep-partial"},
          {"version", 1},
          {"n_samples", partial.layout.n_samples},
          {"block_size", partial.layout.block_size},
          {"first_block", partial.blocks.first},
          {"end_block", partial.blocks.end},
          {"nodes", std::move(nodes)}};
}

template <class Acc>
Partial<Acc> partial_from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("format", "") != "saltation-sweep-partial" || j.value("version", 0) != 1)
    throw InvalidInput("partial", -1, "not a saltation-sweep-partial, version 1");
  try {
    Partial<Acc> partial;
    partial.layout = {j.at("n_samples").get<std::uint64_t>(), j.at("block_size").get<std::uint64_t>()};
    partial.blocks = {j.at("first_block").get<std::uint64_t>(), j.at("end_block").get<std::uint64_t>()};
    for (const auto& node : j.at("nodes"))
      partial.nodes.push_back({node.at("level").get<std::uint32_t>(), node.at("index").get<std::uint64_t>(),
                               Acc::from_json(node.at("value"))});
    return partial;
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput("partial", -1, e.what());
  }
}

template <class Acc>
std::vector<std::uint8_t> partial_to_bytes(const Partial<Acc>& partial) {
  return nlohmann::json::to_cbor(partial_to_json(partial));
}

template <class Acc>
Partial<Acc> partial_from_bytes(const std::vector<std::uint8_t>& bytes) {
  nlohmann::json j;
  try {
    j = nlohmann::json::from_cbor(bytes);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput("partial", -1, e.what());
  }
  return partial_from_json<Acc>(j);
}

}  // namespace saltation::sweep
