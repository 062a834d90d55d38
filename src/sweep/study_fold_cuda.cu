// A study chunk's whole blocks folded on the CUDA device.
//
// Per block, each OutputSummary (the outcomes', each objective's) and each Sobol replicate is
// built by one thread that runs the host's add arithmetic over the block's samples in index order:
// comoments_add, sobol_add_replicate, histogram_slot, sketch_key are the very functions the host's
// add calls, and this file is compiled with -fmad=false, so no product is fused into a sum where
// the host rounds twice. The quantile sketches' keys (one per sample and output, tagged with their
// block and output in the high 32 bits) are sorted and counted with CUB: DeviceRadixSort, then
// DeviceRunLengthEncode. Each block's accumulator is therefore bit for bit what
// StudyAccumulator::add would have built on the host (test_sweep_cuda checks it), and the block
// tree above it is the same on every backend.
//
// Why one thread per (block, part) and not a parallel tree inside a block: a block's value is
// defined as add() in index order; a parallel reduction would change its rounding, so summaries
// would depend on the backend. The blocks, parts and replicates give the parallelism: a chunk of
// 65,536 samples is 16 blocks; a Sobol study with 100 bootstrap replicates runs 16 x 101 threads per
// objective, where the host spent most of its fold time.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "saltation/sweep/study.hpp"

namespace saltation::sweep {

namespace {

// The low 32 bits of a skipped sample's key. Finite doubles never reach it: the largest,
// sketch_key(DBL_MAX, 20), is 0xffefffff.
constexpr std::uint64_t no_key = 0xffffffffu;

// One OutputSummary: its columns in a sample's values and where its state lives in a block's arrays.
struct SummaryPart {
  int dim;             // D
  int column;          // its first value in a sample's row
  int mantissa_bits;   // of its quantile sketches
  int first_range;     // its outputs' histogram ranges at ranges[first_range ..]; -1 without histograms
  int first_segment;   // its outputs' key segments, counted within a block
  std::size_t reals;   // weight, mean[D], comoment[D x D], min[D], max[D]
  std::size_t counts;  // n_finite, n_non_finite, then per output its n_bins + 2 slots
  std::size_t n_slots;
};

// One SobolAccumulator.
struct SobolPart {
  int n_factors;  // k
  int column;
  std::uint64_t seed;
  std::size_t reals;   // weight[(R + 1)(k + 1)], mean[2 ...], comoment[4 ...]: SobolAccumulator's layout
  std::size_t counts;  // n_non_finite
};

struct FoldLayout {
  std::uint64_t first_index, n_samples, block_size;  // samples, relative to first_index, in rows of n_samples
  int n_blocks;
  std::size_t reals_per_block, counts_per_block;
  int segments_per_block;
  int scratch_width;  // doubles of row scratch per thread
};

__device__ void load_row(const double* outputs, const FoldLayout& l, int column, int n, std::uint64_t i, double* row) {
  for (int r = 0; r < n; ++r) row[r] = outputs[static_cast<std::size_t>(column + r) * l.n_samples + i];
}

__device__ bool all_finite(const double* row, int n) {
  for (int r = 0; r < n; ++r)
    if (!isfinite(row[r])) return false;
  return true;
}

// Thread t folds summary part t % n_parts of block t / n_parts (OutputSummary::add's arithmetic).
__global__ void fold_summaries(FoldLayout l, const double* outputs, const SummaryPart* parts, int n_parts,
                               const HistogramRange* ranges, double* reals, std::uint64_t* counts, std::uint64_t* keys,
                               double* scratch) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= l.n_blocks * n_parts) return;
  const int b = t / n_parts;
  const SummaryPart part = parts[t % n_parts];
  const int D = part.dim;
  double* weight = reals + b * l.reals_per_block + part.reals;
  double *mean = weight + 1, *comoment = mean + D, *min = comoment + D * D, *max = min + D;
  *weight = 0.0;
  for (int r = 0; r < D; ++r) mean[r] = 0.0, min[r] = HUGE_VAL, max[r] = -HUGE_VAL;
  for (int k = 0; k < D * D; ++k) comoment[k] = 0.0;
  std::uint64_t* n_finite = counts + b * l.counts_per_block + part.counts;  // then n_non_finite, slots
  std::uint64_t* slots = n_finite + 2;
  double* x = scratch + static_cast<std::size_t>(t) * l.scratch_width;
  std::uint64_t* block_keys = keys + static_cast<std::size_t>(b) * l.segments_per_block * l.block_size;
  const std::uint64_t first = b * l.block_size,
                      last = first + l.block_size < l.n_samples ? first + l.block_size : l.n_samples;
  for (std::uint64_t i = first; i < first + l.block_size; ++i) {
    const bool sample = i < last;
    if (sample) load_row(outputs, l, part.column, D, i, x);
    const bool finite = sample && all_finite(x, D);
    for (int r = 0; r < D; ++r) {
      const std::uint64_t segment = static_cast<std::uint64_t>(b) * l.segments_per_block + part.first_segment + r;
      block_keys[static_cast<std::size_t>(part.first_segment + r) * l.block_size + (i - first)] =
          (segment << 32) | (finite ? sketch_key(x[r], part.mantissa_bits) : no_key);
    }
    if (!sample) continue;
    if (!finite) {
      ++n_finite[1];
      continue;
    }
    ++n_finite[0];
    comoments_add(*weight, mean, comoment, D, x, 1.0);
    std::size_t slot = 0;
    for (int r = 0; r < D; ++r) {
      min[r] = x[r] < min[r] ? x[r] : min[r];  // std::min(min, x) and std::max(max, x), as the host
      max[r] = max[r] < x[r] ? x[r] : max[r];
      if (part.first_range >= 0) {
        const HistogramRange range = ranges[part.first_range + r];
        ++slots[slot + histogram_slot(range, x[r])];
        slot += range.n_bins + 2;
      }
    }
  }
}

// Thread t folds replicate t % R' of Sobol part (t / R') % n_parts of block t / (R' n_parts),
// R' = n_replicates (SobolAccumulator::add's arithmetic, one replicate at a time).
__global__ void fold_sobol(FoldLayout l, const double* outputs, const SobolPart* parts, int n_parts, int n_replicates,
                           double* reals, std::uint64_t* counts, double* scratch) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= l.n_blocks * n_parts * n_replicates) return;
  const int r = t % n_replicates, o = (t / n_replicates) % n_parts, b = t / (n_replicates * n_parts);
  const SobolPart part = parts[o];
  const int sets = part.n_factors + 1;
  const std::size_t all_sets = static_cast<std::size_t>(n_replicates) * sets;
  double* base = reals + b * l.reals_per_block + part.reals;
  double* weight = base + static_cast<std::size_t>(r) * sets;
  double* mean = base + all_sets + static_cast<std::size_t>(r) * sets * 2;
  double* comoment = base + 3 * all_sets + static_cast<std::size_t>(r) * sets * 4;
  for (int s = 0; s < sets; ++s) weight[s] = 0.0;
  for (int s = 0; s < 2 * sets; ++s) mean[s] = 0.0;
  for (int s = 0; s < 4 * sets; ++s) comoment[s] = 0.0;
  std::uint64_t* n_non_finite = counts + b * l.counts_per_block + part.counts;
  double* row = scratch + static_cast<std::size_t>(t) * l.scratch_width;
  const int width = part.n_factors + 2;
  const std::uint64_t first = b * l.block_size,
                      last = first + l.block_size < l.n_samples ? first + l.block_size : l.n_samples;
  for (std::uint64_t i = first; i < last; ++i) {
    load_row(outputs, l, part.column, width, i, row);
    if (!all_finite(row, width)) {
      if (r == 0) ++*n_non_finite;
      continue;
    }
    sobol_add_replicate(weight, mean, comoment, part.n_factors, part.seed, l.first_index + i, r, row);
  }
}

template <class T>
std::vector<T> download(const cuda::DeviceBuffer<T>& device, std::size_t count) {
  std::vector<T> host(count);
  if (count) SALTATION_CUDA_CHECK(cudaMemcpy(host.data(), device.data(), count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

template <class T>
cuda::DeviceBuffer<T> upload(const std::vector<T>& host) {
  cuda::DeviceBuffer<T> device(host.size());
  if (!host.empty())
    SALTATION_CUDA_CHECK(cudaMemcpy(device.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

int blocks_for(long long threads) { return static_cast<int>((threads + 127) / 128); }

}  // namespace

std::vector<StudyAccumulator> fold_study_blocks_on_device(const StudyAccumulator& empty, std::uint64_t first_index,
                                                          std::uint64_t n_samples, std::uint64_t block_size,
                                                          const double* outputs, std::uint64_t stride) {
  FoldLayout l{first_index, n_samples, block_size, static_cast<int>((n_samples + block_size - 1) / block_size),
               0,           0,         0,          1};
  // The parts, in the order of a sample's values: summaries (outcomes, objectives, referee), then Sobol.
  std::vector<SummaryPart> summaries;
  std::vector<HistogramRange> ranges;
  std::vector<std::pair<int, int>> segment_owner;  // segment within a block -> (summary, output)
  int column = 0;
  for (std::size_t k = 0; k < empty.n_summaries(); ++k) {
    const OutputSummary& s = empty.summary(k);
    const int D = s.input_width();
    SummaryPart part{D,
                     column,
                     s.quantiles(0).mantissa_bits(),
                     s.has_histograms() ? static_cast<int>(ranges.size()) : -1,
                     l.segments_per_block,
                     l.reals_per_block,
                     l.counts_per_block,
                     0};
    for (int r = 0; r < D; ++r) {
      if (s.has_histograms()) {
        ranges.push_back(s.histogram(r).range());
        part.n_slots += s.histogram(r).range().n_bins + 2;
      }
      segment_owner.emplace_back(static_cast<int>(k), r);
    }
    l.reals_per_block += 1 + D + static_cast<std::size_t>(D) * D + 2 * D;
    l.counts_per_block += 2 + part.n_slots;
    l.segments_per_block += D;
    l.scratch_width = std::max(l.scratch_width, D);
    column += D;
    summaries.push_back(part);
  }
  std::vector<SobolPart> sobols;
  int n_replicates = 0;
  for (const SobolAccumulator& a : empty.sobol()) {
    n_replicates = a.n_resamples() + 1;  // the same for every objective of a study
    const std::size_t sets = static_cast<std::size_t>(n_replicates) * (a.n_factors() + 1);
    sobols.push_back({a.n_factors(), column, a.seed(), l.reals_per_block, l.counts_per_block});
    l.reals_per_block += 7 * sets;
    l.counts_per_block += 1;
    l.scratch_width = std::max(l.scratch_width, a.input_width());
    column += a.input_width();
  }
  if (column != empty.input_width())
    throw CudaError("device fold: the study's parts do not cover its values", __FILE__, __LINE__);

  // The chunk's rows for these blocks, packed to a pitch of n_samples.
  cuda::DeviceBuffer<double> d_outputs(static_cast<std::size_t>(column) * n_samples);
  SALTATION_CUDA_CHECK(cudaMemcpy2D(d_outputs.data(), n_samples * sizeof(double), outputs, stride * sizeof(double),
                                    n_samples * sizeof(double), column, cudaMemcpyHostToDevice));
  const std::size_t n_keys = static_cast<std::size_t>(l.n_blocks) * l.segments_per_block * block_size;
  if (n_keys > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw CudaError("device fold: " + std::to_string(n_keys) + " sketch keys in one chunk, more than CUB's int count",
                    __FILE__, __LINE__);
  const int n_summary_threads = l.n_blocks * static_cast<int>(summaries.size());
  const int n_sobol_threads = l.n_blocks * static_cast<int>(sobols.size()) * n_replicates;
  cuda::DeviceBuffer<double> d_reals(l.n_blocks * l.reals_per_block);
  cuda::DeviceBuffer<std::uint64_t> d_counts(l.n_blocks * l.counts_per_block);
  cuda::DeviceBuffer<std::uint64_t> d_keys(n_keys), d_sorted(n_keys), d_unique(n_keys), d_run_counts(n_keys);
  cuda::DeviceBuffer<int> d_n_runs(1);
  cuda::DeviceBuffer<double> d_scratch(static_cast<std::size_t>(std::max(n_summary_threads, n_sobol_threads)) *
                                       l.scratch_width);
  const cuda::DeviceBuffer<SummaryPart> d_summaries = upload(summaries);
  const cuda::DeviceBuffer<SobolPart> d_sobols = upload(sobols);
  const cuda::DeviceBuffer<HistogramRange> d_ranges = upload(ranges);
  SALTATION_CUDA_CHECK(cudaMemset(d_counts.data(), 0, d_counts.size() * sizeof(std::uint64_t)));

  fold_summaries<<<blocks_for(n_summary_threads), 128>>>(
      l, d_outputs.data(), d_summaries.data(), static_cast<int>(summaries.size()), d_ranges.data(), d_reals.data(),
      d_counts.data(), d_keys.data(), d_scratch.data());
  SALTATION_CUDA_CHECK_LAUNCH();
  if (n_sobol_threads > 0) {
    fold_sobol<<<blocks_for(n_sobol_threads), 128>>>(l, d_outputs.data(), d_sobols.data(),
                                                     static_cast<int>(sobols.size()), n_replicates, d_reals.data(),
                                                     d_counts.data(), d_scratch.data());
    SALTATION_CUDA_CHECK_LAUNCH();
  }

  // The sketches: sort the tagged keys (segment above, key below), count the runs.
  int end_bit = 32;
  while ((std::uint64_t(1) << (end_bit - 32)) < static_cast<std::uint64_t>(l.n_blocks) * l.segments_per_block)
    ++end_bit;
  const int n = static_cast<int>(n_keys);
  std::size_t sort_bytes = 0, encode_bytes = 0;
  SALTATION_CUDA_CHECK(
      cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, d_keys.data(), d_sorted.data(), n, 0, end_bit));
  SALTATION_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, encode_bytes, d_sorted.data(), d_unique.data(),
                                                          d_run_counts.data(), d_n_runs.data(), n));
  cuda::DeviceBuffer<unsigned char> d_temp(std::max(sort_bytes, encode_bytes));
  SALTATION_CUDA_CHECK(
      cub::DeviceRadixSort::SortKeys(d_temp.data(), sort_bytes, d_keys.data(), d_sorted.data(), n, 0, end_bit));
  SALTATION_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(d_temp.data(), encode_bytes, d_sorted.data(), d_unique.data(),
                                                          d_run_counts.data(), d_n_runs.data(), n));
  SALTATION_CUDA_CHECK(cudaDeviceSynchronize());

  const std::vector<double> reals = download(d_reals, d_reals.size());
  const std::vector<std::uint64_t> counts = download(d_counts, d_counts.size());
  const std::size_t n_runs = static_cast<std::size_t>(download(d_n_runs, 1)[0]);
  const std::vector<std::uint64_t> unique = download(d_unique, n_runs), run_counts = download(d_run_counts, n_runs);

  // Each block's accumulator from its slices of the arrays.
  std::vector<StudyAccumulator> blocks(static_cast<std::size_t>(l.n_blocks), empty);
  std::vector<SummaryState> states(summaries.size());
  std::size_t run = 0;
  for (int b = 0; b < l.n_blocks; ++b) {
    const double* block_reals = reals.data() + b * l.reals_per_block;
    const std::uint64_t* block_counts = counts.data() + b * l.counts_per_block;
    for (std::size_t k = 0; k < summaries.size(); ++k) {
      const SummaryPart& part = summaries[k];
      const int D = part.dim;
      const double* weight = block_reals + part.reals;
      SummaryState& st = states[k];
      st.n_finite = block_counts[part.counts];
      st.n_non_finite = block_counts[part.counts + 1];
      st.weight = *weight;
      st.mean.assign(weight + 1, weight + 1 + D);
      st.comoment.assign(weight + 1 + D, weight + 1 + D + D * D);
      st.min.assign(weight + 1 + D + D * D, weight + 1 + 2 * D + D * D);
      st.max.assign(weight + 1 + 2 * D + D * D, weight + 1 + 3 * D + D * D);
      st.slots.assign(block_counts + part.counts + 2, block_counts + part.counts + 2 + part.n_slots);
      st.buckets.assign(D, {});
    }
    // This block's runs: segments b * segments_per_block .. (b + 1) * segments_per_block - 1.
    for (; run < n_runs && (unique[run] >> 32) < static_cast<std::uint64_t>(b + 1) * l.segments_per_block; ++run) {
      if ((unique[run] & 0xffffffffu) == no_key) continue;
      const auto [k, r] = segment_owner[(unique[run] >> 32) - static_cast<std::uint64_t>(b) * l.segments_per_block];
      states[k].buckets[r].emplace_back(unique[run] & 0xffffffffu, run_counts[run]);
    }
    for (std::size_t k = 0; k < summaries.size(); ++k) blocks[b].summary(k).assign(states[k]);
    for (std::size_t o = 0; o < sobols.size(); ++o) {
      const std::size_t sets = static_cast<std::size_t>(n_replicates) * (sobols[o].n_factors + 1);
      const double* base = block_reals + sobols[o].reals;
      blocks[b].sobol(o).assign(block_counts[sobols[o].counts], base, base + sets, base + 3 * sets);
    }
  }
  return blocks;
}

}  // namespace saltation::sweep
