#pragma once
// The CUDA driver: a thin kernel (one thread per trajectory, running the same core::Trajectory
// as the CPU backend, stepped so that a warp's lanes localise their events together) and its
// launch code: the per-thread stack limit, a device-memory plan, and a loop over chunks that fit
// it, staged through pinned host memory on two streams so one chunk's copies overlap the next
// chunk's kernel. docs/gpu.md explains the figures, docs/warp_events.md the warp loop. Include
// from a .cu file.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "launch_shape.hpp"
#include "saltation/core/columns.hpp"
#include "saltation/core/warp.hpp"
#include "saltation/cuda.hpp"
#include "saltation/host_arrays.hpp"
#include "saltation/interrupt.hpp"

namespace saltation::cuda {
namespace detail {

// The lanes of this thread's warp that exist: all 32, or fewer in the last warp of a block whose
// size is not a multiple of 32. Taken from the block's shape, not from __activemask(), which
// names only the lanes that happen to be converged at the call.
__device__ inline unsigned warp_lanes() {
  const unsigned warp_first = threadIdx.x & ~31u;
  const unsigned count = blockDim.x - warp_first;
  return count >= 32 ? 0xffffffffu : (1u << count) - 1u;
}

// Where a sensitivity kernel's lanes record their parameter columns (core/columns.hpp).
template <class Output, class Model>
using Records = core::ColumnRecords<Model, typename Output::ColumnNote>;

// Upper bound on the block size handed to the occupancy calculator. A block holds its SM slot
// until its slowest trajectory ends, and trajectories differ in length, so smaller blocks let the
// scheduler refill SMs sooner. The cap costs no occupancy: an SM holds up to 32 blocks, so the
// calculator reaches the warp count the kernel's registers allow with smaller blocks when it must.
constexpr int kMaxBlock = 256;

// Refill (docs/warp_events.md, "Refill"): a launch may have fewer threads than rows. Each thread
// starts on the row of its index; rows past the launch's own go to lanes as their trajectories end.
// The lanes of a warp that want a row claim the next ones together, with one atomicAdd on the
// chunk's counter (`claimed`, zero at launch), in lane order. A claim past the batch's end means
// every row is taken: that lane stops asking. Returns the row claimed for this lane, meaningful
// only where `wants`.
__device__ inline std::size_t claim_row(unsigned lanes, bool wants, std::size_t launched, unsigned long long* claimed) {
  const unsigned wanting = __ballot_sync(lanes, wants);
  if (wanting == 0) return launched;
  const unsigned lane_id = threadIdx.x & 31u;
  const int leader = __ffs(wanting) - 1;
  unsigned long long first = 0;
  if (lane_id == static_cast<unsigned>(leader))
    first = atomicAdd(claimed, static_cast<unsigned long long>(__popc(wanting)));
  first = __shfl_sync(lanes, first, leader);
  return launched + first + __popc(wanting & ((1u << lane_id) - 1u));
}

// One chunk of out.n trajectories; theta and every result array have stride out.n. One thread per
// trajectory at a time, as core::integrate_one on the CPU, but stepped through core::WarpLane's
// phases so that the warp's lanes localise their events together (docs/warp_events.md). Every
// lane of the warp stays in the loop, past the batch's end or finished, until all have ended and
// no row is left to claim: the votes name the same lanes every time. With `deferral` off, a lane
// localises in the step that found its crossing, as run() does. `Output` is what each trajectory
// keeps (docs/architecture.md, "Outputs"); `Stepping` how it steps (options.method): with dopri5
// each lane keeps its own step size.
// With `ColumnsApart` (sensitivities only) the lanes record each event's map into `records`
// instead of jumping the parameter columns, and compose_kernel forms the columns afterwards
// (core/columns.hpp; docs/gpu.md, "Parameter columns apart").
// The forward kernels are held to 128 registers (two blocks of kMaxBlock per SM), their rule in
// scripts/ptxas-check; the sensitivity kernels are not bounded (docs/gpu.md, "Block size").
template <bool Sens, Method Stepping, bool ColumnsApart, class Output, class Model>
__global__ void __launch_bounds__(kMaxBlock, Sens ? 1 : 2)
    integrate_kernel(Model model, Options options, const double* theta, typename Output::View out,
                     Records<Output, Model> records, core::WarpDeferral deferral, unsigned long long* claimed) {
  static_assert(Sens || !ColumnsApart, "a forward run has no parameter columns");
  using LaneOutput = std::conditional_t<ColumnsApart, core::RecordingColumns<Model, Output>, Output>;
  typename LaneOutput::View lane_out;
  if constexpr (ColumnsApart) {
    lane_out = {out, records};
  } else {
    lane_out = out;
  }
  const std::size_t launched = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool in_batch = i < out.n;
  const unsigned lanes = warp_lanes();
  // A lane past the end reads no parameter: its row pointer only has to be a valid address.
  core::WarpLane<Model, RowParams, Sens, LaneOutput, Stepping> lane(
      model, options, RowParams{theta + (in_batch ? i : 0), out.n}, i, lane_out, in_batch);
  bool rows_left = launched < out.n;
  for (;;) {
    const std::size_t row = claim_row(lanes, rows_left && lane.ended(), launched, claimed);
    if (rows_left && lane.ended()) {
      if (row < out.n) lane.take_row(RowParams{theta + row, out.n}, row);
      else rows_left = false;
    }
    if (!__any_sync(lanes, !lane.ended() || rows_left)) break;
    lane.step_phase();
    const int pending = __popc(__ballot_sync(lanes, lane.pending()));
    const int stepping = __popc(__ballot_sync(lanes, lane.stepping()));
    const bool expired = __any_sync(lanes, lane.expired(deferral));
    lane.localise_phase(deferral.localise_now(pending, stepping, expired));
  }
}

// The parameter columns of every row and chunk of kChunk columns from the rows' records: one
// thread per row and chunk, the rows of a chunk on consecutive threads. The bound of one block
// per SM lets ptxas take the registers it needs: without it, it took 40-80 and spilled.
template <class Output, class Model>
__global__ void __launch_bounds__(kMaxBlock, 1)
    compose_kernel(Model model, const double* theta, typename Output::View out, Records<Output, Model> records) {
  constexpr int kChunks = (Model::P + core::kChunk - 1) / core::kChunk;
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (thread >= out.n * kChunks) return;
  const std::size_t i = thread % out.n;
  const int chunk = static_cast<int>(thread / out.n);
  core::compose_columns<Output>(model, RowParams{theta + i, out.n}, i, out, records, chunk * core::kChunk);
}

template <class Output, class Model>
using Kernel = void (*)(Model, Options, const double*, typename Output::View, Records<Output, Model>,
                        core::WarpDeferral, unsigned long long*);

// The kernel for the options' method, with or without sensitivities, with the parameter columns
// jumped in the lanes or composed apart.
template <class Output, class Model>
Kernel<Output, Model> kernel_for(const Options& options, bool columns_apart) {
  const auto pick = [&](auto stepping) -> Kernel<Output, Model> {
    constexpr Method kStepping = decltype(stepping)::value;
    if (!options.sensitivities) return &integrate_kernel<false, kStepping, false, Output, Model>;
    return columns_apart ? &integrate_kernel<true, kStepping, true, Output, Model>
                         : &integrate_kernel<true, kStepping, false, Output, Model>;
  };
  return options.method == Method::Dopri5 ? pick(std::integral_constant<Method, Method::Dopri5>{})
                                          : pick(std::integral_constant<Method, Method::Rk4>{});
}

// The launch choices, each on unless its environment variable reads "0", so that one device run
// can measure each before and after on the same card (scripts/gpu-check; docs/gpu.md,
// "Switches"). The results are the same either way.
inline bool switched_on(const char* variable) {
  const char* value = std::getenv(variable);
  return value == nullptr || std::string(value) != "0";
}

struct LaunchSwitches {
  core::WarpDeferral deferral;  // SALTATION_WARP_DEFER: lanes localise their events together
  bool refill;                  // SALTATION_CUDA_REFILL: lanes take the next row as theirs end
  bool spread;                  // SALTATION_CUDA_SPREAD: smaller blocks where a chunk leaves SMs idle
  bool pipeline;                // SALTATION_CUDA_PIPELINE: a large batch in chunks that overlap
  bool keep_stack;              // SALTATION_CUDA_KEEP_STACK: the stack limit kept between solves
  bool columns_apart;           // SALTATION_CUDA_COLUMNS_APART: parameter columns composed by a second kernel

  static LaunchSwitches from_environment() {
    return {switched_on("SALTATION_WARP_DEFER") ? core::WarpDeferral::standard() : core::WarpDeferral::off(),
            switched_on("SALTATION_CUDA_REFILL"),
            switched_on("SALTATION_CUDA_SPREAD"),
            switched_on("SALTATION_CUDA_PIPELINE"),
            switched_on("SALTATION_CUDA_KEEP_STACK"),
            switched_on("SALTATION_CUDA_COLUMNS_APART")};
  }
};

// Pinned host memory per chunk slot. Pinned pages are taken from the host's physical memory,
// so the staging stays bounded however large the batch or the device.
constexpr std::size_t kStagingBytesPerSlot = std::size_t(1) << 30;
// With a progress callback, the batch is cut into about this many chunks.
constexpr std::size_t kProgressChunks = 20;
// The CUDA runtime's default per-thread stack limit.
constexpr std::size_t kDefaultStackBytes = 1024;

inline std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// The arrays of a host output (Result or Observation) in one kind of buffer, named as in the host
// type so that Host::zip pairs them, each with room for `capacity` trajectories of those `out`
// holds and none for those it leaves empty (event arrays without event capacity, derivative
// arrays without sensitivities); fill_byte is the byte an array starts from before the kernel.
template <class Host, template <class> class Buffer>
struct OutputArrays;

// Sizes each buffer of `arrays` for `capacity` trajectories of the matching array of `out`.
template <class Arrays, class Host>
void allocate(Arrays& arrays, const Host& out, std::size_t capacity) {
  Host::zip(arrays, out, [&](auto& buffer, const auto& host) {
    buffer = std::decay_t<decltype(buffer)>(host.size() / out.n * capacity);
  });
}

template <template <class> class Buffer>
struct OutputArrays<Result, Buffer> {
  Buffer<int> status, n_events, ev_guard, ev_flags;
  Buffer<double> t_end, qf, ev_t, ev_q, ev_q_plus, dqf, ev_dt, ev_dq;

  OutputArrays(const Result& out, std::size_t capacity) { allocate(*this, out, capacity); }
  // The defaults Result starts from, so slots a trajectory never writes read the same on both
  // backends: zero bits (0, 0.0) everywhere but in ev_guard, whose -1 has every bit set.
  int fill_byte(const void* buffer) const { return buffer == static_cast<const void*>(&ev_guard) ? 0xFF : 0; }
};

// Every trajectory writes every entry of its observation: the fill only keeps the bytes defined.
template <template <class> class Buffer>
struct OutputArrays<Observation, Buffer> {
  Buffer<int> status, n_events;
  Buffer<double> values;

  OutputArrays(const Observation& out, std::size_t capacity) { allocate(*this, out, capacity); }
  int fill_byte(const void*) const { return 0; }
};

// What the kernel reads besides theta, on the device, and the view that points at it: nothing
// for a Result; the objective and design lists for an Observation.
template <class Host>
struct OutputInputs;

template <>
struct OutputInputs<Result> {
  explicit OutputInputs(const Result&) {}
  ResultView shape(const Result& out) const { return out.shape(); }
};

template <>
struct OutputInputs<Observation> {
  DeviceBuffer<ObjectiveSpec> objectives;
  DeviceBuffer<int> design;

  explicit OutputInputs(const Observation& out) : objectives(out.objectives.size()), design(out.design.size()) {
    if (!objectives.empty())
      SALTATION_CUDA_CHECK(cudaMemcpy(objectives.data(), out.objectives.data(),
                                      objectives.size() * sizeof(ObjectiveSpec), cudaMemcpyHostToDevice));
    if (!design.empty())
      SALTATION_CUDA_CHECK(
          cudaMemcpy(design.data(), out.design.data(), design.size() * sizeof(int), cudaMemcpyHostToDevice));
  }
  ObservationView shape(const Observation& out) const {
    ObservationView v = out.shape();
    v.objectives = objectives.data();
    v.design = design.data();
    return v;
  }
};

// Device bytes per trajectory: its parameter row, its share of each array `out` holds and, with
// the parameter columns apart, its records (`record_jumps` per row; 0: none).
template <class Output, class Model, class Host>
std::size_t bytes_per_trajectory(const Host& out, int record_jumps) {
  std::size_t bytes = static_cast<std::size_t>(Model::P) * sizeof(double);
  Host::zip(out, out, [&](const auto& host, const auto&) {
    bytes += host.size() / out.n * sizeof(typename std::decay_t<decltype(host)>::value_type);
  });
  if (record_jumps > 0)
    bytes += static_cast<std::size_t>(record_jumps) * sizeof(core::EventRecord<Model, typename Output::ColumnNote>) +
             Records<Output, Model>::kTangentSize * sizeof(double) + sizeof(int) + sizeof(core::ColumnsEnd);
  return bytes;
}

// Device memory of one solve (docs/gpu.md):
//   stack_reservation = stack_bytes x resident_threads  (the driver reserves the per-thread stack
//                                                         for every thread the device can hold)
//   chunk arrays      = slots x chunk x bytes_per_trajectory
//   stack_reservation + chunk arrays <= available
//   available         = free + pool's kept + current stack limit x resident_threads - total / 32
// The current limit's reservation is given back when the new limit replaces it, and what the
// device pool keeps for reuse is handed out again (DeviceMemory); total / 32 is headroom for
// allocation granularity (2 MiB pages per array), the runtime's own buffers and other users of
// the device.
struct MemoryPlan {
  int sms = 0;  // the device's multiprocessors
  std::size_t stack_bytes = 0;
  std::size_t resident_threads = 0;
  std::size_t stack_reservation = 0;
  std::size_t bytes_per_trajectory = 0;
  std::size_t available = 0;
  std::size_t chunk = 0;  // trajectories per chunk
  int slots = 1;          // chunks in flight: 2 overlap one chunk's copies with the next one's kernel
};

// The solve runs under a stack limit of `stack_bytes` per thread (StackLimit). Throws CudaError
// when not even one trajectory fits beside the stack reservation.
inline MemoryPlan plan_memory(const std::string& model_name, std::size_t n, std::size_t stack_bytes,
                              std::size_t bytes_per_trajectory, bool progress, bool pipeline) {
  int device = 0, sms = 0, threads_per_sm = 0;
  SALTATION_CUDA_CHECK(cudaGetDevice(&device));
  SALTATION_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  SALTATION_CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  std::size_t free = 0, total = 0, current_stack = 0;
  SALTATION_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  SALTATION_CUDA_CHECK(cudaDeviceGetLimit(&current_stack, cudaLimitStackSize));
  const std::size_t kept = keep_device_memory();

  MemoryPlan plan;
  plan.sms = sms;
  plan.stack_bytes = stack_bytes;
  plan.resident_threads = static_cast<std::size_t>(sms) * static_cast<std::size_t>(threads_per_sm);
  plan.stack_reservation = stack_bytes * plan.resident_threads;
  plan.bytes_per_trajectory = bytes_per_trajectory;
  const std::size_t usable = free + kept + current_stack * plan.resident_threads;
  const std::size_t headroom = total / 32;
  plan.available = usable > headroom ? usable - headroom : 0;
  if (plan.available < plan.stack_reservation + bytes_per_trajectory)
    throw CudaError("one trajectory of " + model_name + " does not fit on the device: it needs " +
                        std::to_string(bytes_per_trajectory) + " bytes of arrays beside the stack reservation of " +
                        std::to_string(stack_bytes) + " bytes per thread x " + std::to_string(plan.resident_threads) +
                        " resident threads = " + mib(plan.stack_reservation) + ", and the device has " +
                        mib(plan.available) + " for both (" + mib(free) + " free + " + mib(kept) +
                        " kept by the device pool + " + mib(current_stack * plan.resident_threads) +
                        " of the current stack reservation - " + mib(headroom) + " headroom)",
                    __FILE__, __LINE__);

  const std::size_t fit = (plan.available - plan.stack_reservation) / bytes_per_trajectory;
  const std::size_t staging_fit = std::max<std::size_t>(kStagingBytesPerSlot / bytes_per_trajectory, 1);
  const std::size_t progress_chunk = progress ? (n + kProgressChunks - 1) / kProgressChunks : n;
  plan.chunk = std::min({n, fit, staging_fit, progress_chunk, pipeline ? pipeline_chunk(n) : n});
  if (plan.chunk < n && fit >= 2) {
    plan.slots = 2;
    plan.chunk = std::min(plan.chunk, fit / 2);
  }
  return plan;
}

// The per-thread stack limit of a solve: the kernel's need, or with `keep` the current limit
// where that is larger. Set only when it differs from the current limit (setting it waits for the
// device and reallocates the reservation), before the arrays are allocated: the driver reserves the
// stack for every resident thread at once, and a kernel launched above the limit would make it
// grow the reservation behind the plan's back. With `keep` the limit stays for later solves (a
// sweep's chunks, a served model), which then set nothing; without, the previous limit is
// restored after the solve, and a failure to restore is dropped (device_buffer.cuh).
inline std::size_t stack_limit_for(std::size_t needed, bool keep) {
  std::size_t current = 0;
  SALTATION_CUDA_CHECK(cudaDeviceGetLimit(&current, cudaLimitStackSize));
  return keep ? std::max(needed, current) : needed;
}

class StackLimit {
 public:
  StackLimit(std::size_t bytes, bool keep) {
    SALTATION_CUDA_CHECK(cudaDeviceGetLimit(&previous_, cudaLimitStackSize));
    if (previous_ == bytes) return;
    restore_ = !keep;
    SALTATION_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitStackSize, bytes));
    std::size_t now = 0;
    SALTATION_CUDA_CHECK(cudaDeviceGetLimit(&now, cudaLimitStackSize));
    if (now < bytes)
      throw CudaError("the per-thread stack limit reads " + std::to_string(now) + " bytes after setting it to " +
                          std::to_string(bytes),
                      __FILE__, __LINE__);
  }
  StackLimit(const StackLimit&) = delete;
  StackLimit& operator=(const StackLimit&) = delete;
  ~StackLimit() {
    if (restore_ && cudaDeviceSetLimit(cudaLimitStackSize, previous_) != cudaSuccess) (void)cudaGetLastError();
  }

 private:
  std::size_t previous_ = 0;
  bool restore_ = false;
};

// The buffers of one chunk in flight. The stream is declared last, so it is destroyed (after
// waiting for its work) before the buffers that work uses.
template <class Output, class Model, class Host>
struct ChunkSlot {
  std::size_t capacity;  // trajectories
  DeviceBuffer<double> theta;
  PinnedBuffer<double> theta_staging;
  OutputArrays<Host, DeviceBuffer> result;
  OutputArrays<Host, PinnedBuffer> result_staging;
  // The lanes' records of their parameter columns: none unless the columns are composed apart.
  core::ColumnRecordArrays<Model, typename Output::ColumnNote, DeviceBuffer> records;
  DeviceBuffer<unsigned long long> claimed;  // rows the refilling lanes took (claim_row)
  Stream stream;
  std::size_t first = 0, count = 0;  // the chunk in flight; count 0: none

  ChunkSlot(const Host& out, std::size_t capacity_, int record_jumps)
      : capacity(capacity_),
        theta(static_cast<std::size_t>(Model::P) * capacity_),
        theta_staging(static_cast<std::size_t>(Model::P) * capacity_),
        result(out, capacity_),
        result_staging(out, capacity_),
        records(record_jumps > 0 ? capacity_ : 0, record_jumps),
        claimed(1) {}
};

// How a chunk is launched: the kernel, its block size, the most blocks the device holds at once
// (the grid of a refilling launch) and the deferral policy; with the parameter columns apart,
// the jumps each row records and the block size of compose_kernel.
template <class Output, class Model>
struct Launch {
  Kernel<Output, Model> kernel;
  int block;
  std::size_t resident_blocks;  // 0: one thread per row, no refill
  core::WarpDeferral deferral;
  int record_jumps;   // 0: the columns are jumped in the lanes
  int compose_block;  // compose_kernel's
};

// Packs the parameter rows of trajectories [first, first + count) into the slot's staging and
// queues on its stream: the upload, the result defaults, the kernel and the download.
template <class Output, class Model, class Host>
void start_chunk(ChunkSlot<Output, Model, Host>& slot, const Model& model, const Options& options,
                 const Launch<Output, Model>& launch, const double* theta, const Host& out,
                 const OutputInputs<Host>& inputs, std::size_t first, std::size_t count) {
  const cudaStream_t stream = slot.stream.get();
  pack_chunk(theta, out.n, Model::P, first, count, slot.theta_staging.data());
  SALTATION_CUDA_CHECK(cudaMemcpyAsync(slot.theta.data(), slot.theta_staging.data(), Model::P * count * sizeof(double),
                                       cudaMemcpyHostToDevice, stream));
  typename Output::View view = inputs.shape(out);
  view.n = count;
  Host::zip(slot.result, view, [&](auto& buffer, auto& pointer) {
    pointer = buffer.data();
    if (buffer.empty()) return;
    const std::size_t bytes = buffer.size() / slot.capacity * count * sizeof(*buffer.data());
    SALTATION_CUDA_CHECK(cudaMemsetAsync(buffer.data(), slot.result.fill_byte(&buffer), bytes, stream));
  });
  SALTATION_CUDA_CHECK(cudaMemsetAsync(slot.claimed.data(), 0, sizeof(unsigned long long), stream));
  const unsigned grid = launch_grid(count, launch.block, launch.resident_blocks);
  launch.kernel<<<grid, launch.block, 0, stream>>>(model, options, slot.theta.data(), view, slot.records.view(),
                                                   launch.deferral, slot.claimed.data());
  SALTATION_CUDA_CHECK(cudaGetLastError());  // launch errors now; execution errors at the stream's sync
  if (launch.record_jumps > 0) {
    constexpr std::size_t kChunks = (Model::P + core::kChunk - 1) / core::kChunk;
    const std::size_t threads = count * kChunks;
    const unsigned compose_grid = static_cast<unsigned>((threads + launch.compose_block - 1) / launch.compose_block);
    compose_kernel<Output, Model>
        <<<compose_grid, launch.compose_block, 0, stream>>>(model, slot.theta.data(), view, slot.records.view());
    SALTATION_CUDA_CHECK(cudaGetLastError());
  }
  Host::zip(slot.result_staging, slot.result, [&](auto& staging, const auto& device) {
    if (device.empty()) return;
    const std::size_t bytes = device.size() / slot.capacity * count * sizeof(*device.data());
    SALTATION_CUDA_CHECK(cudaMemcpyAsync(staging.data(), device.data(), bytes, cudaMemcpyDeviceToHost, stream));
  });
  slot.first = first;
  slot.count = count;
}

// Waits for the slot's chunk and unpacks its results from the staging into `out`, on all host
// threads: `out` comes unfilled (Fill::None), so this is also its first touch.
template <class Output, class Model, class Host>
void finish_chunk(ChunkSlot<Output, Model, Host>& slot, Host& out) {
  slot.stream.synchronize();
  unpack_chunk(out, slot.result_staging, slot.first, slot.count);
  slot.count = 0;
}

// The chunked solve of every entry point: trajectories [0, n) through the Output policy into
// `out`, already sized and checked by the entry point.
template <class Output, class Model, class Host>
void run(const Model& model, const double* theta, std::size_t n, const Options& options, Host& out,
         const Progress* progress) {
  if (n == 0) return;
  const LaunchSwitches switches = LaunchSwitches::from_environment();
  const bool columns_apart = options.sensitivities && switches.columns_apart;
  Launch<Output, Model> launch{kernel_for<Output, Model>(options, columns_apart), 0, 0, switches.deferral, 0, 0};
  if (columns_apart) launch.record_jumps = core::jumps_per_row(options);
  // The kernels' local memory is their per-thread stack (no recursion, no device malloc). Never
  // below the CUDA default of 1 KiB: going lower frees little (276 MB on an H200) and 0 is not a
  // limit the runtime promises to accept.
  cudaFuncAttributes attributes{};
  SALTATION_CUDA_CHECK(cudaFuncGetAttributes(&attributes, launch.kernel));
  std::size_t local_bytes = attributes.localSizeBytes;
  if (columns_apart) {
    SALTATION_CUDA_CHECK(cudaFuncGetAttributes(&attributes, &compose_kernel<Output, Model>));
    local_bytes = std::max(local_bytes, attributes.localSizeBytes);
  }
  const std::size_t stack_bytes =
      stack_limit_for(std::max<std::size_t>(local_bytes, kDefaultStackBytes), switches.keep_stack);
  const MemoryPlan plan =
      plan_memory(Model::name, n, stack_bytes, bytes_per_trajectory<Output, Model>(out, launch.record_jumps),
                  progress != nullptr, switches.pipeline);
  const StackLimit stack_limit(plan.stack_bytes, switches.keep_stack);
  // The block size of highest occupancy for this kernel's registers (see kMaxBlock), smaller where a
  // chunk would leave SMs without a block (launch_shape.hpp); with refill, as many blocks as the
  // device holds at once.
  int min_grid = 0, blocks_per_sm = 0;
  SALTATION_CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &launch.block, launch.kernel, 0, kMaxBlock));
  if (switches.spread) launch.block = launch_block(plan.chunk, plan.sms, launch.block);
  SALTATION_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, launch.kernel, launch.block, 0));
  if (switches.refill) launch.resident_blocks = static_cast<std::size_t>(blocks_per_sm) * plan.sms;
  if (columns_apart)
    SALTATION_CUDA_CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &launch.compose_block,
                                                            &compose_kernel<Output, Model>, 0, kMaxBlock));

  const OutputInputs<Host> inputs(out);
  std::vector<ChunkSlot<Output, Model, Host>> slots;
  slots.reserve(plan.slots);
  for (int s = 0; s < plan.slots; ++s) slots.emplace_back(out, plan.chunk, launch.record_jumps);
  // A failure after some chunks names the rows whose results are already in `out`.
  run_reporting_completed_rows(n, [&](std::size_t& completed) {
    // The one place progress is reported: after a chunk's results are in `out`, in chunk order.
    auto collect = [&](ChunkSlot<Output, Model, Host>& slot) {
      if (slot.count == 0) return;
      const std::size_t done = slot.first + slot.count;
      finish_chunk(slot, out);
      completed = done;
      if (progress) (*progress)(done, n);
    };
    std::size_t chunks = 0;
    for (std::size_t first = 0; first < n; first += plan.chunk, ++chunks) {
      ChunkSlot<Output, Model, Host>& slot = slots[chunks % slots.size()];
      collect(slot);           // the chunk this slot held, two chunks back
      throw_if_interrupted();  // between chunks; the slots' destructors wait for the work in flight
      start_chunk(slot, model, options, launch, theta, out, inputs, first, std::min(plan.chunk, n - first));
    }
    for (std::size_t k = chunks; k < chunks + slots.size(); ++k) collect(slots[k % slots.size()]);
  });
}

}  // namespace detail

template <class Model>
void solve(const Model& model, const double* theta, std::size_t n, const Options& options, Result& out,
           const Progress* progress) {
  // The kernel writes wherever the options and the model say: a smaller `out` would be a device fault.
  if (out.n != n || out.N != Model::N || out.P != Model::P || out.C != options.event_capacity ||
      out.sensitivities != options.sensitivities)
    throw InvalidInput("out", -1, "is not sized for this batch (n, N, P, event capacity and sensitivities must match)");
  detail::run<core::FullRecord>(model, theta, n, options, out, progress);
}

template <class Model>
void solve_final_state(const Model& model, const double* theta, std::size_t n, const Options& options, Result& out,
                       const Progress* progress) {
  if (out.n != n || out.N != Model::N || out.P != Model::P || out.C != 0 || out.sensitivities != options.sensitivities)
    throw InvalidInput("out", -1,
                       "is not sized for this batch (n, N, P and sensitivities must match, event capacity 0)");
  detail::run<core::FinalState>(model, theta, n, options, out, progress);
}

template <class Model>
void observe(const Model& model, const double* theta, std::size_t n, const Options& options, Observation& out,
             const Progress* progress) {
  if (out.n != n) throw InvalidInput("out", -1, "is not sized for this batch (n must match)");
  detail::run<core::ObjectiveObserver>(model, theta, n, options, out, progress);
}

}  // namespace saltation::cuda
