#pragma once
// What every binding of the module shares: NumPy views of the library's SoA arrays, and a
// Progress that calls back into Python while a solve runs with the GIL released.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "saltation/any_model.hpp"
#include "saltation/backend.hpp"
#include "saltation/batch.hpp"
#include "saltation/io/table.hpp"
#include "saltation/options.hpp"
#include "saltation/progress.hpp"
#include "saltation/result.hpp"

namespace saltation::python {

namespace nb = nanobind;
using Array = nb::ndarray<nb::numpy>;

// A NumPy view of an SoA array: element (i, r) at data[r * rows + i], r the row-major index
// into `inner`; shape (rows, *inner), strided, no copy. `owner` keeps the data alive.
Array soa_view(const void* data, io::DType dtype, std::size_t rows, const std::vector<long>& inner, nb::handle owner);
// The same over a vector the array then owns.
Array soa_array(std::vector<double> soa, std::size_t rows, const std::vector<long>& inner);

// Every column of `table` as a view, in column order; `owner` keeps what the table views alive.
nb::dict table_arrays(const io::ArrayTable& table, std::shared_ptr<const void> owner);

// Rows of a 2-D float64 array (n, width) into SoA ([width][n]); any strides. Throws
// InvalidInput naming `name` when the width is not `width`.
std::vector<double> soa_from_rows(const nb::ndarray<const double, nb::ndim<2>, nb::device::cpu>& rows, long width,
                                  const char* name);
// The same over n rows of P values, row i's entry p at rows[i * row_stride + p * column_stride].
Batch batch_from_rows(const double* rows, std::size_t n, int P, std::int64_t row_stride, std::int64_t column_stride);
Batch batch_from_rows(const nb::ndarray<const double, nb::ndim<2>, nb::device::cpu>& theta, int P);

// The model a Python call names, read as a request's "model" and "config" are (io::parse_model_choice,
// configure_model): `model_json` is the JSON text of a built-in model's name, {"file": PATH} (the
// Python side makes PATH absolute) or {"define": {...}} (docs/models.md); `config_json` an object.
AnyModel model_from_json(const std::string& model_json, const std::string& config_json);

// What a solve from Python is given, read by the library's own readers: the model of
// model_from_json, the options (JSON object text) normalized, the backend resolved.
struct SolveSetup {
  AnyModel model;
  Options options;
  Backend backend;
};
SolveSetup solve_setup(const std::string& model_json, const std::string& config_json, const std::string& options_json,
                       const std::string& backend);

// Sets the event slots a trajectory did not reach to NaN, in the event values (ev_t, ev_q,
// ev_q_plus) and, with `derivatives_too`, in ev_dt and ev_dq (else they keep the library's 0).
void mark_unreached_events(Result& r, bool derivatives_too);

// A Progress for a run with the GIL released: it takes the GIL, lets Python handle pending
// signals (Ctrl-C) and calls `callback(done, total)` when one was given. A Python exception
// there stops the run (through the library's interrupt request); run() then raises it.
class PythonProgress {
 public:
  explicit PythonProgress(nb::object callback) : callback_(std::move(callback)) {}
  Progress hook();
  // Runs f() with the GIL released and returns its value; re-raises a callback's exception.
  template <class F>
  auto run(F&& f) -> decltype(f()) {
    std::optional<decltype(f())> value;
    {
      nb::gil_scoped_release release;
      try {
        value.emplace(f());
      } catch (...) {
        if (!stopped_by_python()) throw;
      }
    }
    rethrow_python_error();
    return std::move(*value);
  }

 private:
  bool stopped_by_python();  // clears the interrupt request it made
  void rethrow_python_error();
  nb::object callback_;
  std::optional<nb::python_error> error_;
};

void bind_solve(nb::module_& m);
void bind_studies(nb::module_& m);
// Built where jaxlib's XLA FFI headers were found (SALTATION_PYTHON_XLA_FFI; jax_ffi.cpp).
void bind_jax_ffi(nb::module_& m);

}  // namespace saltation::python
