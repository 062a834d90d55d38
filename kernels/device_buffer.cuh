#pragma once
// Owners of CUDA resources whose destructors never throw: device arrays (DeviceBuffer), pinned
// host staging arrays (PinnedBuffer) and non-blocking streams (Stream). Shared by every CUDA
// driver. After a device fault (an illegal address, say) the context is lost and every later
// cudaFree fails too; a destructor that threw then would run during the unwinding of the first
// CudaError, call std::terminate and lose that error. So a release failure is dropped here (and
// cleared from the runtime's last-error slot, so a later check does not report it as its own),
// and the first error, with its file and line, reaches the caller.
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda_check.cuh"

namespace saltation::cuda {

// Device memory: cudaMalloc / cudaFree.
struct DeviceMemory {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    SALTATION_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  static cudaError_t release(void* p) noexcept { return cudaFree(p); }
};

// Page-locked host memory: the only host memory an async copy really overlaps with.
struct PinnedHostMemory {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    SALTATION_CUDA_CHECK(cudaMallocHost(&p, bytes));
    return p;
  }
  static cudaError_t release(void* p) noexcept { return cudaFreeHost(p); }
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
