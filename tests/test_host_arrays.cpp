// Host arrays (host_arrays.hpp) and the packing and unpacking of a device chunk, checked without a
// device: copies cut into pieces land byte for byte as one memcpy each; a new Result starts at its
// defaults, or uninitialized with Fill::None until fill_defaults(); a chunk unpacked at an offset
// lands in its rows of every array and nowhere else; a chunk of parameter rows packs from its place
// in each array.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <vector>

#include "saltation/result.hpp"

using saltation::copy_in_parallel;
using saltation::Fill;
using saltation::HostCopy;
using saltation::kParallelBytes;
using saltation::kPieceBytes;
using saltation::Result;

TEST(HostArrays, CopiesInPiecesLandAsOneMemcpy) {
  // Sizes around the piece size, empty and odd ones, more bytes in all than one thread copies.
  const std::vector<std::size_t> sizes = {
      0, 1, 7, kPieceBytes - 1, kPieceBytes, kPieceBytes + 3, 3 * kPieceBytes + 5, kParallelBytes + 11};
  std::vector<std::vector<unsigned char>> from, to, expected;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    from.emplace_back(sizes[k]);
    for (std::size_t b = 0; b < sizes[k]; ++b) from.back()[b] = static_cast<unsigned char>(b * 31 + k);
    to.emplace_back(sizes[k] + 2, 0xAB);  // a guard byte at either end
    expected.push_back(to.back());
    if (sizes[k] > 0) std::memcpy(expected.back().data() + 1, from.back().data(), sizes[k]);
  }
  std::vector<HostCopy> copies;
  for (std::size_t k = 0; k < sizes.size(); ++k) copies.push_back({to[k].data() + 1, from[k].data(), sizes[k]});
  for (const int threads : {1, 3}) {
    omp_set_num_threads(threads);
    for (auto& t : to) std::fill(t.begin() + 1, t.end() - 1, 0);
    copy_in_parallel(copies);
    for (std::size_t k = 0; k < sizes.size(); ++k) EXPECT_EQ(to[k], expected[k]) << sizes[k] << " bytes";
  }
}

TEST(HostArrays, ResultsStartAtTheirDefaults) {
  const std::size_t n = 70000;  // past kParallelBytes in the larger arrays
  Result filled(n, 4, 14, 3, true);
  for (int g : filled.ev_guard) ASSERT_EQ(g, -1);
  for (int s : filled.status) ASSERT_EQ(s, 0);
  for (double d : filled.ev_dq) ASSERT_EQ(d, 0.0);
  Result unfilled(n, 4, 14, 3, true, Fill::None);
  std::fill(unfilled.ev_guard.begin(), unfilled.ev_guard.end(), 5);
  std::fill(unfilled.dqf.begin(), unfilled.dqf.end(), 2.5);
  unfilled.fill_defaults();
  EXPECT_EQ(unfilled.ev_guard, filled.ev_guard);
  EXPECT_EQ(unfilled.dqf, filled.dqf);
  EXPECT_EQ(unfilled.qf, filled.qf);
}

TEST(HostArrays, AChunkUnpacksIntoItsRows) {
  const std::size_t n = 50000, first = 12345, count = 20000;
  Result out(n, 3, 5, 2, true);
  Result chunk(count, 3, 5, 2, true, Fill::None);
  double value = 1.0;
  saltation::zip_arrays(chunk, chunk, [&](auto& array, auto&) {
    for (auto& x : array) x = static_cast<std::decay_t<decltype(x)>>(value++);
  });
  const Result defaults = out;
  saltation::unpack_chunk(out, chunk, first, count);
  saltation::zip_arrays(out, chunk, [&](const auto& host, const auto& part) {
    const std::size_t per_trajectory = host.size() / n;
    ASSERT_EQ(part.size(), per_trajectory * count);
    for (std::size_t r = 0; r < per_trajectory; ++r)
      for (std::size_t i = first; i < first + count; ++i) {
        ASSERT_EQ(host[r * n + i], part[r * count + i - first]) << "entry " << r << " of row " << i;
      }
  });
  // Rows outside the chunk keep their defaults.
  for (std::size_t i = 0; i < n; ++i) {
    if (i >= first && i < first + count) continue;
    ASSERT_EQ(out.status[i], defaults.status[i]);
    ASSERT_EQ(out.ev_guard[i], defaults.ev_guard[i]);
    ASSERT_EQ(out.dqf[i], defaults.dqf[i]);
  }
}

TEST(HostArrays, AChunkOfParameterRowsPacks) {
  const std::size_t n = 40000, first = 777, count = 30000;
  const int arrays = 5;
  std::vector<double> soa(arrays * n), chunk(arrays * count, -1.0);
  for (std::size_t e = 0; e < soa.size(); ++e) soa[e] = static_cast<double>(e);
  saltation::pack_chunk(soa.data(), n, arrays, first, count, chunk.data());
  for (int a = 0; a < arrays; ++a)
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(chunk[a * count + i], soa[a * n + first + i]) << a << ", " << i;
}
