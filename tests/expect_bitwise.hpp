#pragma once
// Two results of one batch compared bit for bit, array by array: what the SIMD lanes owe the
// scalar driver (tests/test_simd_lanes.cpp, tests/user_model/test_user_models.cpp).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "saltation/result.hpp"

namespace saltation::testing {

// Every element the same bits, except that a NaN matches any NaN: its sign bit is whatever the
// instruction that made it (or the operand order the compiler chose for it) gives, and means nothing.
template <class A, class B>
void expect_bitwise(A& a, B& b) {
  const auto same = [](const auto& x, const auto& y) {
    ASSERT_EQ(x.size(), y.size());
    std::size_t differing = 0;
    for (std::size_t k = 0; k < x.size(); ++k) {
      const bool both_nan = x[k] != x[k] && y[k] != y[k];
      if (!both_nan && std::memcmp(&x[k], &y[k], sizeof(x[k])) != 0) ++differing;
    }
    EXPECT_EQ(differing, 0u);
  };
  if constexpr (std::is_same_v<A, Observation>) Observation::zip(a, b, same);
  else zip_arrays(a, b, same);
}

}  // namespace saltation::testing
