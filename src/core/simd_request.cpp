#include <cstdlib>
#include <cstring>

#include "saltation/cpu_lanes.hpp"

namespace saltation::cpu {

SimdRequest simd_request() {
  const char* simd = std::getenv("SALTATION_SIMD");
  if (simd && std::strcmp(simd, "0") == 0) return SimdRequest::None;
  if (simd && std::strcmp(simd, "avx2") == 0) return SimdRequest::Avx2;
  return SimdRequest::Best;
}

}  // namespace saltation::cpu
