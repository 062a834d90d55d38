#pragma once
// A batch's host arrays (Result, Observation): vectors whose elements start uninitialized, filled
// and copied by every OpenMP thread. A batch's results are hundreds of megabytes; the first write
// to each page faults it in, and one thread doing that and then the copy took longer than the
// GPU's kernel (bench/README.md, "The host's share of a GPU solve").
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace saltation {

// std::allocator, except that an element constructed with no value is left uninitialized.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {  // NOLINT(readability-identifier-naming): the name the allocator interface asks for
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <class T>
using HostArray = std::vector<T, UninitializedAllocator<T>>;

// Below this many bytes one thread does the work: waking a team costs more.
constexpr std::size_t kParallelBytes = std::size_t(1) << 20;
// The pieces the threads take: whole pages, large enough that a piece's start-up is negligible.
constexpr std::size_t kPieceBytes = std::size_t(1) << 18;

// One copy of `bytes` bytes, of the list a copy_in_parallel call makes.
struct HostCopy {
  void* to;
  const void* from;
  std::size_t bytes;
};

// Every copy of `copies` (none overlapping another), cut into pieces that all threads share.
inline void copy_in_parallel(const std::vector<HostCopy>& copies) {
  std::vector<HostCopy> pieces;
  std::size_t total = 0;
  for (const HostCopy& c : copies) {
    total += c.bytes;
    for (std::size_t at = 0; at < c.bytes; at += kPieceBytes)
      pieces.push_back(
          {static_cast<char*>(c.to) + at, static_cast<const char*>(c.from) + at, std::min(kPieceBytes, c.bytes - at)});
  }
  const long long count = static_cast<long long>(pieces.size());
#pragma omp parallel for schedule(dynamic) if (total >= kParallelBytes)
  for (long long k = 0; k < count; ++k) std::memcpy(pieces[k].to, pieces[k].from, pieces[k].bytes);
}

// Copies trajectories [first, first + count) of `arrays` arrays of doubles (structure of arrays,
// each `n` long, one after another) into `chunk`, each then `count` long: a chunk's parameter rows
// for the device.
inline void pack_chunk(const double* soa, std::size_t n, int arrays, std::size_t first, std::size_t count,
                       double* chunk) {
  std::vector<HostCopy> rows;
  for (int a = 0; a < arrays; ++a) rows.push_back({chunk + a * count, soa + a * n + first, count * sizeof(double)});
  copy_in_parallel(rows);
}

// Sets every element of `array` to `value`, the pages shared among all threads.
template <class T>
void fill_in_parallel(HostArray<T>& array, T value) {
  const long long n = static_cast<long long>(array.size());
  const long long piece = static_cast<long long>(kPieceBytes / sizeof(T));
  T* data = array.data();
#pragma omp parallel for schedule(dynamic) if (n * sizeof(T) >= kParallelBytes)
  for (long long first = 0; first < n; first += piece)
    std::fill(data + first, data + std::min(n, first + piece), value);
}

}  // namespace saltation
