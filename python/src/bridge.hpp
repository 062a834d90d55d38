#pragma once
// What every binding of the module shares: NumPy views of the library's SoA arrays, and a
// Progress that calls back into Python while a solve runs with the GIL released.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "saltation/batch.hpp"
#include "saltation/io/table.hpp"
#include "saltation/progress.hpp"

namespace saltation::python {

namespace nb = nanobind;
using Array = nb::ndarray<nb::numpy>;

// A NumPy view of an SoA array: element (i, r) at data[r * rows + i], r the row-major index
// into `inner`; shape (rows, *inner), strided, no copy. `owner` keeps the data alive.
Array soa_view(const void* data, io::DType dtype, std::size_t rows, const std::vector<long>& inner, nb::handle owner);
// The same over a vector the array then owns.
Array soa_array(std::vector<double> soa, std::size_t rows, const std::vector<long>& inner);

// A row-major (C order) array of the given shape over a vector it owns.
Array owned_row_major(std::vector<double> values, const std::vector<long>& shape);

// Every column of `table` as a view, in column order; `owner` keeps what the table views alive.
nb::dict table_arrays(const io::ArrayTable& table, std::shared_ptr<const void> owner);

// Rows of a 2-D float64 array (n, width) into SoA ([width][n]); any strides. Throws
// InvalidInput naming `name` when the width is not `width`.
std::vector<double> soa_from_rows(const nb::ndarray<const double, nb::ndim<2>, nb::device::cpu>& rows, long width,
                                  const char* name);
Batch batch_from_rows(const nb::ndarray<const double, nb::ndim<2>, nb::device::cpu>& theta, int P);

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

}  // namespace saltation::python
