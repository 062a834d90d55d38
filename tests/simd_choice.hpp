#pragma once
// SALTATION_SIMD (docs/simd_lanes.md) set for the scope of one check, and restored after it.
#include <cstdlib>
#include <string>

namespace saltation::testing {

class SimdChoice {
 public:
  explicit SimdChoice(const char* value) {
    if (const char* old = std::getenv("SALTATION_SIMD")) old_ = old, had_ = true;
    setenv("SALTATION_SIMD", value, 1);
  }
  ~SimdChoice() {
    if (had_) setenv("SALTATION_SIMD", old_.c_str(), 1);
    else unsetenv("SALTATION_SIMD");
  }
  SimdChoice(const SimdChoice&) = delete;
  SimdChoice& operator=(const SimdChoice&) = delete;

 private:
  std::string old_;
  bool had_ = false;
};

}  // namespace saltation::testing
