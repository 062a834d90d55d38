#pragma once
// Owners of CUDA resources whose destructors never throw: device arrays (DeviceBuffer, from the
// device's stream-ordered pool), pinned host staging arrays (PinnedBuffer, kept by PinnedCache)
// and non-blocking streams (Stream). Shared by every CUDA
// driver. After a device fault (an illegal address, say) the context is lost and every later
// cudaFree fails too; a destructor that threw then would run during the unwinding of the first
// CudaError, call std::terminate and lose that error. So a release failure is dropped here (and
// cleared from the runtime's last-error slot, so a later check does not report it as its own),
// and the first error, with its file and line, reaches the caller.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cuda_check.cuh"
#include "saltation/errors.hpp"

namespace saltation::cuda {

// A size in MiB from the environment variable `name`, strictly a whole number; `fallback` when unset.
inline std::size_t mib_from_environment(const char* name, std::size_t fallback, const std::string& what_zero_means) {
  const char* value = std::getenv(name);
  if (value == nullptr) return fallback;
  const std::string text(value);
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  // strtoull gives ULLONG_MAX on overflow, which the size check refuses too.
  const unsigned long long mib = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
  if (!digits || mib > (std::numeric_limits<std::size_t>::max() >> 20))
    throw InvalidInput(name, -1, "must be a whole number of MiB (0 " + what_zero_means + "), got \"" + text + "\"");
  return static_cast<std::size_t>(mib) << 20;
}

// Whether the current device has stream-ordered memory pools (every device of compute capability
// 6.0 or later under a recent driver; not, for example, some virtualised ones). False also where
// the runtime cannot say (a lost context): the cudaMalloc or cudaFree that follows reports it.
inline bool device_pools_supported() noexcept {
  int device = 0, supported = 0;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) == cudaSuccess)
    return supported != 0;
  (void)cudaGetLastError();
  return false;
}

// Device memory from the device's default stream-ordered pool (cudaMallocAsync). cudaFree waits
// for the whole device, and memory allocated anew is mapped anew; the pool keeps what a solve
// freed, up to its release threshold (keep_device_memory), for the next solve's arrays. Taken and
// given back in the legacy default stream; the non-blocking streams that use the arrays (Stream)
// are synchronised before the arrays are freed, by their owners' order of declaration. A device
// without pools gets cudaMalloc and cudaFree.
struct DeviceMemory {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    if (!device_pools_supported()) {
      SALTATION_CUDA_CHECK(cudaMalloc(&p, bytes));
      return p;
    }
    if (cudaMallocAsync(&p, bytes, 0) != cudaSuccess) {
      // Memory the pool keeps for reuse never makes an allocation fail that would fit without it.
      (void)cudaGetLastError();
      cudaMemPool_t pool = nullptr;
      int device = 0;
      SALTATION_CUDA_CHECK(cudaGetDevice(&device));
      SALTATION_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
      SALTATION_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
      SALTATION_CUDA_CHECK(cudaMallocAsync(&p, bytes, 0));
    }
    // The array is used in other streams: the allocation must have happened first.
    SALTATION_CUDA_CHECK(cudaStreamSynchronize(0));
    return p;
  }
  static cudaError_t release(void* p) noexcept { return device_pools_supported() ? cudaFreeAsync(p, 0) : cudaFree(p); }
};

// What the current device's default pool keeps of freed memory: SALTATION_DEVICE_CACHE_MIB, or
// kDeviceKeptBytes, two chunk slots of solve.cuh at their largest. Set at every solve (the
// setting does not survive a cudaDeviceReset). Returns the bytes the pool holds unused, which a
// solve may count as free (DeviceMemory trims the pool when it needs them).
constexpr std::size_t kDeviceKeptBytes = std::size_t(2) << 30;
inline std::size_t keep_device_memory() {
  static const std::size_t bound =
      mib_from_environment("SALTATION_DEVICE_CACHE_MIB", kDeviceKeptBytes, "keeps no device memory between solves");
  if (!device_pools_supported()) return 0;
  int device = 0;
  cudaMemPool_t pool = nullptr;
  SALTATION_CUDA_CHECK(cudaGetDevice(&device));
  SALTATION_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t threshold = bound, reserved = 0, used = 0;  // the attributes are 64-bit
  SALTATION_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  SALTATION_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  SALTATION_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  return reserved > used ? static_cast<std::size_t>(reserved - used) : 0;
}

// Page-locked host memory, kept for reuse. Pinning is dear: pinning a solve's staging anew each
// time cost more than its copies and its kernel (bench/README.md, "Pinned staging"). A released
// block stays here, up to a bound in all (kDefaultBytes unless set), for the next solve (a
// sweep's next chunk, the next call of a served or JAX program) to take.
class PinnedCache {
 public:
  // By default two chunk slots of solve.cuh at their largest (kStagingBytesPerSlot each);
  // SALTATION_PINNED_CACHE_MIB sets another bound (0: every block is unpinned when released).
  static constexpr std::size_t kDefaultBytes = std::size_t(2) << 30;

  // Never destroyed: at exit the CUDA runtime may be torn down before a static destructor ran,
  // and the operating system takes the pages back anyway.
  static PinnedCache& instance() {
    static PinnedCache* cache = new PinnedCache(bound_from_environment());
    return *cache;
  }

  static std::size_t bound_from_environment() {
    return mib_from_environment("SALTATION_PINNED_CACHE_MIB", kDefaultBytes, "keeps no pinned staging between solves");
  }

  explicit PinnedCache(std::size_t bound) : bound_(bound) {}

  // A block of at least `bytes`: a held one no larger than 4 x `bytes` (so a small request does
  // not keep a large block from the large request after it), or a new one.
  void* take(std::size_t bytes) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      auto best = held_.end();
      for (auto it = held_.begin(); it != held_.end(); ++it)
        if (it->second >= bytes && it->second / 4 <= bytes && (best == held_.end() || it->second < best->second))
          best = it;
      if (best != held_.end()) {
        const auto block = *best;
        held_.erase(best);
        held_bytes_ -= block.second;
        // A block pinned before a cudaDeviceReset is no longer page-locked host memory: dropped.
        cudaPointerAttributes attributes{};
        if (cudaPointerGetAttributes(&attributes, block.first) == cudaSuccess &&
            attributes.type == cudaMemoryTypeHost) {
          in_use_.emplace(block.first, block.second);
          return block.first;
        }
        (void)cudaGetLastError();
      }
    }
    void* p = nullptr;
    SALTATION_CUDA_CHECK(cudaMallocHost(&p, bytes));
    const std::lock_guard<std::mutex> lock(mutex_);
    in_use_.emplace(p, bytes);
    return p;
  }

  // Keeps the block while the cache has room, else unpins it.
  cudaError_t give(void* p) noexcept {
    std::size_t bytes = 0;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      const auto it = in_use_.find(p);
      if (it != in_use_.end()) {
        bytes = it->second;
        in_use_.erase(it);
        if (held_bytes_ + bytes <= bound_) {
          try {
            held_.emplace_back(p, bytes);
            held_bytes_ += bytes;
            return cudaSuccess;
          } catch (...) {  // no memory to remember it: unpinned below
          }
        }
      }
    }
    return cudaFreeHost(p);
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<void*, std::size_t>> held_;  // free blocks and their sizes
  std::size_t held_bytes_ = 0;
  std::unordered_map<void*, std::size_t> in_use_;  // blocks handed out: their true sizes
  std::size_t bound_;
};

// Page-locked host memory: the only host memory an async copy really overlaps with.
struct PinnedHostMemory {
  static void* allocate(std::size_t bytes) { return PinnedCache::instance().take(bytes); }
  static cudaError_t release(void* p) noexcept { return PinnedCache::instance().give(p); }
};

// `count` elements of T in `Memory`, uninitialized; move-only. An empty buffer holds no memory
// and its data() is null.
template <class T, class Memory>
class CudaBuffer {
 public:
  CudaBuffer() = default;
  explicit CudaBuffer(std::size_t count)
      : data_(count ? static_cast<T*>(Memory::allocate(count * sizeof(T))) : nullptr), size_(count) {}
  CudaBuffer(CudaBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  CudaBuffer& operator=(CudaBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  ~CudaBuffer() { release(); }

  T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  void release() noexcept {
    if (data_ && Memory::release(data_) != cudaSuccess) (void)cudaGetLastError();  // see the file comment
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
};

template <class T>
using DeviceBuffer = CudaBuffer<T, DeviceMemory>;
template <class T>
using PinnedBuffer = CudaBuffer<T, PinnedHostMemory>;

// A stream that does not synchronize with the legacy default stream; move-only. Its destructor
// waits for the stream's work before destroying it, so a stream declared after the buffers its
// work uses (destroyed first) never leaves a copy or kernel running on freed memory.
class Stream {
 public:
  Stream() { SALTATION_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  Stream& operator=(Stream&& other) noexcept {
    if (this != &other) {
      release();
      stream_ = std::exchange(other.stream_, nullptr);
    }
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { release(); }

  cudaStream_t get() const { return stream_; }
  void synchronize() const { SALTATION_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  void release() noexcept {
    if (!stream_) return;
    const bool failed = cudaStreamSynchronize(stream_) != cudaSuccess;
    if (cudaStreamDestroy(stream_) != cudaSuccess || failed) (void)cudaGetLastError();  // see the file comment
    stream_ = nullptr;
  }

  cudaStream_t stream_ = nullptr;
};

}  // namespace saltation::cuda
