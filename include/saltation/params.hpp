#pragma once
// How a model reads its parameters: `th[p]` on a view whose operator[] returns the model's
// scalar type. RowParams is the plain view over one trajectory's parameters; core/params.hpp
// adds the views that seed dual-number slots.
#include <cstddef>

#include "saltation/config.hpp"

namespace saltation {

// Row i of an SoA batch (stride = batch size) or a contiguous row (stride = 1).
struct RowParams {
  const double* p;
  std::size_t stride;
  SALTATION_HD double operator[](int k) const { return p[static_cast<std::size_t>(k) * stride]; }
};

}  // namespace saltation
