#pragma once
// Parameter views that seed dual-number slots (the plain view, RowParams, is in params.hpp).
#include <cstddef>
#include <type_traits>
#include <utility>

#include "saltation/config.hpp"
#include "saltation/dual.hpp"
#include "saltation/params.hpp"

namespace saltation::core {

// Every parameter as a constant of scalar type S (derivatives with respect to q only).
template <class S, class Base>
struct ConstantParams {
  Base base;
  SALTATION_HD S operator[](int k) const { return S(base[k]); }
};

// Parameters [first, first + D) seeded in slots 0..D-1; the rest constant.
template <int D, class Base>
struct ChunkSeededParams {
  Base base;
  int first;
  SALTATION_HD Dual<D> operator[](int k) const {
    Dual<D> r(base[k]);
    const int slot = k - first;
    if (slot >= 0 && slot < D) r.d[slot] = 1.0;
    return r;
  }
};

// The model's flow parameters seeded in slots First..First+F-1 (by default after the N slots
// that belong to q); duals of what the base holds (doubles, or lane vectors).
template <class Model, class Base, int First = Model::N>
struct FlowSeededParams {
  using Value = std::decay_t<decltype(std::declval<const Base&>()[0])>;
  Base base;
  SALTATION_HD Dual<First + Model::F, Value> operator[](int k) const {
    Dual<First + Model::F, Value> r(base[k]);
    for (int f = 0; f < Model::F; ++f)
      if (Model::flow_param(f) == k) r.d[First + f] = 1.0;
    return r;
  }
};

}  // namespace saltation::core
