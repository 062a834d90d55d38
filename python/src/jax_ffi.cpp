// saltation.jax's XLA FFI targets (jax.ffi), handed to Python as capsules:
//   saltation_solve                     theta in; the chosen result arrays out, in XLA's buffers
//   saltation_jacobian_times            J t   over the library's SoA layout
//   saltation_jacobian_transpose_times  u^T J over the same layout
// Every array crosses in the library's own layout, trajectories last ([*S][n] for a value,
// [*S][P][n] for its derivative), so nothing is transposed: the solve's arrays are copied into
// XLA's buffers as they are, and the two products read J row by row, contiguously.
#include <xla/ffi/api/ffi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "bridge.hpp"
#include "saltation/errors.hpp"
#include "saltation/io/solve_io.hpp"

namespace ffi = xla::ffi;

namespace saltation::python {
namespace {

// The native solves run by saltation_solve: how many, and the library's time of the latest.
struct SolveStats {
  std::atomic<long long> count{0};
  std::atomic<double> last_seconds{0.0};
};
SolveStats& solve_stats() {
  static SolveStats stats;
  return stats;
}

std::vector<std::string> split_names(std::string_view list) {
  std::vector<std::string> names;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    names.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return names;
}

std::size_t product(ffi::AnyBuffer::Dimensions dims, std::size_t from, std::size_t to) {
  std::size_t p = 1;
  for (std::size_t d = from; d < to; ++d) p *= static_cast<std::size_t>(dims[d]);
  return p;
}

// Copies a column of the library's SoA table, [W][groups * n], into `out` as [groups][W][n]:
// under jax.vmap, theta is (*groups, n, P) and every output gets the vmapped axes first.
ffi::Error copy_column(const io::Column& column, std::size_t groups, std::size_t n, ffi::AnyBuffer out) {
  const bool f64 = column.dtype == io::DType::F64;
  if (out.element_type() != (f64 ? ffi::DataType::F64 : ffi::DataType::S32))
    return ffi::Error::InvalidArgument("saltation_solve: output " + column.name + " has the wrong element type");
  const std::size_t width = static_cast<std::size_t>(column.inner_size()), bytes = io::dtype_size(column.dtype);
  if (out.element_count() != groups * width * n)
    return ffi::Error::InvalidArgument("saltation_solve: output " + column.name + " has the wrong size");
  const char* from = static_cast<const char*>(column.data);
  char* to = static_cast<char*>(out.untyped_data());
  for (std::size_t g = 0; g < groups; ++g)
    for (std::size_t w = 0; w < width; ++w)
      std::memcpy(to + ((g * width + w) * n) * bytes, from + (w * groups * n + g * n) * bytes, n * bytes);
  return ffi::Error::Success();
}

// The library's errors as the FFI's: JAX raises them as JaxRuntimeError with the same message.
template <class F>
ffi::Error guarded(F&& f) {
  try {
    return f();
  } catch (const InvalidInput& e) {
    return ffi::Error::InvalidArgument(e.what());
  } catch (const std::exception& e) {
    return ffi::Error::Internal(e.what());
  }
}

// theta (*groups, n, P), float64; `model`: the model as JSON text (model_from_json: a built-in
// model's name or a model file's form); `columns`: result-table names, one per output, in order;
// `options`: the solve options as JSON text (sensitivities on when a derivative is asked for).
ffi::Error solve_to_buffers(std::string_view model, std::string_view config, std::string_view options,
                            std::string_view backend, std::string_view columns, ffi::Buffer<ffi::F64> theta,
                            ffi::RemainingRets outputs) {
  return guarded([&]() -> ffi::Error {
    const auto dims = theta.dimensions();
    if (dims.size() < 2) return ffi::Error::InvalidArgument("saltation_solve: theta must be (..., n, P)");
    const std::size_t P = static_cast<std::size_t>(dims[dims.size() - 1]);
    const std::size_t n = static_cast<std::size_t>(dims[dims.size() - 2]);
    const std::size_t groups = product(dims, 0, dims.size() - 2);
    const SolveSetup setup =
        solve_setup(std::string(model), std::string(config), std::string(options), std::string(backend));
    const Batch batch =
        batch_from_rows(theta.typed_data(), groups * n, static_cast<int>(P), static_cast<std::int64_t>(P), 1);
    const auto start = std::chrono::steady_clock::now();
    Result result = setup.model.solve(batch, setup.options, setup.backend);
    solve_stats().last_seconds.store(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    ++solve_stats().count;
    // Unreached event slots: values NaN, derivatives the library's 0 (an unreached event moves
    // nowhere, and a masked NaN value then leaves no NaN in a gradient).
    mark_unreached_events(result, false);
    const io::ArrayTable table =
        io::result_table(setup.model.info(), result, io::provenance(setup.model.info(), setup.options, setup.backend));
    const std::vector<std::string> names = split_names(columns);
    if (names.size() != outputs.size())
      return ffi::Error::InvalidArgument("saltation_solve: " + std::to_string(names.size()) + " columns named for " +
                                         std::to_string(outputs.size()) + " outputs");
    for (std::size_t k = 0; k < names.size(); ++k) {
      const io::Column* column = table.find(names[k]);
      if (!column) return ffi::Error::InvalidArgument("saltation_solve: the result has no array " + names[k]);
      auto out = outputs.get<ffi::AnyBuffer>(k);
      if (!out.has_value()) return out.error();
      if (ffi::Error copied = copy_column(*column, groups, n, **out); copied.failure()) return copied;
    }
    return ffi::Error::Success();
  });
}

// The shapes both products share: J (*GJ, K, P, n) and x (*GJ, *M, X, n), where X is P (J t) or
// K (u^T J). J's leading axes are a prefix of x's: each J serves M consecutive x's (jax.jacfwd
// and jax.jacrev batch the tangents or cotangents of one J).
struct ProductShape {
  std::size_t GJ, M, K, P, n;
};

ffi::ErrorOr<ProductShape> product_shape(const ffi::Buffer<ffi::F64>& J, const ffi::Buffer<ffi::F64>& x, bool x_has_P) {
  const auto dims = J.dimensions();
  if (dims.size() < 3) return ffi::Unexpected(ffi::Error::InvalidArgument("J must be (..., K, P, n)"));
  ProductShape s{product(dims, 0, dims.size() - 3), 0, static_cast<std::size_t>(dims[dims.size() - 3]),
                 static_cast<std::size_t>(dims[dims.size() - 2]), static_cast<std::size_t>(dims[dims.size() - 1])};
  const std::size_t per_x = (x_has_P ? s.P : s.K) * s.n;
  const std::size_t x_count = x.element_count();
  if (per_x == 0 || x_count % (s.GJ * per_x) != 0)
    return ffi::Unexpected(ffi::Error::InvalidArgument("the operand's shape does not fit J's"));
  s.M = x_count / (s.GJ * per_x);
  return s;
}

// y[k] = sum_p J[k][p] * t[p], each a row of n.
ffi::Error jacobian_times(ffi::Buffer<ffi::F64> J, ffi::Buffer<ffi::F64> t, ffi::ResultBuffer<ffi::F64> y) {
  const auto shape = product_shape(J, t, true);
  if (!shape.has_value()) return shape.error();
  const auto [GJ, M, K, P, n] = *shape;
  if (y->element_count() != GJ * M * K * n) return ffi::Error::InvalidArgument("J t has the wrong size");
  for (std::size_t g = 0; g < GJ; ++g)
    for (std::size_t m = 0; m < M; ++m) {
      const double* tg = t.typed_data() + (g * M + m) * P * n;
      double* yg = y->typed_data() + (g * M + m) * K * n;
      for (std::size_t k = 0; k < K; ++k) {
        const double* Jk = J.typed_data() + (g * K + k) * P * n;
        double* yk = yg + k * n;
        std::fill(yk, yk + n, 0.0);
        for (std::size_t p = 0; p < P; ++p)
          for (std::size_t i = 0; i < n; ++i) yk[i] += Jk[p * n + i] * tg[p * n + i];
      }
    }
  return ffi::Error::Success();
}

// v[p] = sum_k J[k][p] * u[k], each a row of n.
ffi::Error jacobian_transpose_times(ffi::Buffer<ffi::F64> J, ffi::Buffer<ffi::F64> u, ffi::ResultBuffer<ffi::F64> v) {
  const auto shape = product_shape(J, u, false);
  if (!shape.has_value()) return shape.error();
  const auto [GJ, M, K, P, n] = *shape;
  if (v->element_count() != GJ * M * P * n) return ffi::Error::InvalidArgument("u^T J has the wrong size");
  for (std::size_t g = 0; g < GJ; ++g)
    for (std::size_t m = 0; m < M; ++m) {
      const double* ug = u.typed_data() + (g * M + m) * K * n;
      double* vg = v->typed_data() + (g * M + m) * P * n;
      std::fill(vg, vg + P * n, 0.0);
      for (std::size_t k = 0; k < K; ++k) {
        const double* Jk = J.typed_data() + (g * K + k) * P * n;
        const double* uk = ug + k * n;
        for (std::size_t p = 0; p < P; ++p)
          for (std::size_t i = 0; i < n; ++i) vg[p * n + i] += Jk[p * n + i] * uk[i];
      }
    }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(saltation_solve_handler, solve_to_buffers,
                              ffi::Ffi::Bind()
                                  .Attr<std::string_view>("model")
                                  .Attr<std::string_view>("config")
                                  .Attr<std::string_view>("options")
                                  .Attr<std::string_view>("backend")
                                  .Attr<std::string_view>("columns")
                                  .Arg<ffi::Buffer<ffi::F64>>()
                                  .RemainingRets());
XLA_FFI_DEFINE_HANDLER_SYMBOL(
    saltation_jacobian_times_handler, jacobian_times,
    ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F64>>().Arg<ffi::Buffer<ffi::F64>>().Ret<ffi::Buffer<ffi::F64>>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(
    saltation_jacobian_transpose_times_handler, jacobian_transpose_times,
    ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F64>>().Arg<ffi::Buffer<ffi::F64>>().Ret<ffi::Buffer<ffi::F64>>());

void bind_jax_ffi(nb::module_& m) {
  m.def(
      "jax_ffi_targets",
      [] {
        nb::dict targets;
        targets["saltation_solve"] = nb::capsule(reinterpret_cast<void*>(&saltation_solve_handler));
        targets["saltation_jacobian_times"] = nb::capsule(reinterpret_cast<void*>(&saltation_jacobian_times_handler));
        targets["saltation_jacobian_transpose_times"] =
            nb::capsule(reinterpret_cast<void*>(&saltation_jacobian_transpose_times_handler));
        return targets;
      },
      "The XLA FFI targets of saltation.jax: name -> capsule of the handler");
  m.def(
      "jax_solve_stats", [] { return nb::make_tuple(solve_stats().count.load(), solve_stats().last_seconds.load()); },
      "(native solves run by saltation_solve so far, the library's seconds in the latest)");
}

}  // namespace saltation::python
