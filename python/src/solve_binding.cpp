// saltation.solve: a built-in model, theta rows and options in; the result table's arrays out as
// NumPy views of the Result (no copy), plus the derivative products of products.hpp.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "bridge.hpp"
#include "saltation/io/files.hpp"
#include "saltation/io/json_object.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/products.hpp"
#include "saltation/registry.hpp"

namespace saltation::python {
namespace {

using Rows = nb::ndarray<const double, nb::ndim<2>, nb::device::cpu>;

// A solved batch: what the NumPy views point into, and what the products read.
struct Solved {
  ModelInfo info;
  Result result;
  std::unique_ptr<io::ArrayTable> table;
};

// Event slots a trajectory did not reach read NaN (values and derivatives), not the stored
// zeros, so that an unreached event cannot pass for one at t = 0. The products never read them.
void mark_unreached_events(Result& r) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Trajectories innermost: each SoA row is written in address order.
  auto mark = [&](std::vector<double>& soa, std::size_t rows_per_slot) {
    for (int c = 0; c < r.C; ++c)
      for (std::size_t row = 0; row < rows_per_slot; ++row) {
        double* values = soa.data() + (std::size_t(c) * rows_per_slot + row) * r.n;
        for (std::size_t i = 0; i < r.n; ++i)
          if (c >= r.n_events[i]) values[i] = nan;
      }
  };
  const std::size_t N = static_cast<std::size_t>(r.N), P = static_cast<std::size_t>(r.P);
  mark(r.ev_t, 1);
  mark(r.ev_q, N);
  mark(r.ev_q_plus, N);
  if (r.sensitivities) {
    mark(r.ev_dt, P);
    mark(r.ev_dq, N * P);
  }
}

std::tuple<std::shared_ptr<Solved>, nb::dict, std::string> solve(const std::string& model_name,
                                                                const std::string& config_json, const Rows& theta,
                                                                const std::string& options_json,
                                                                const std::string& backend, nb::object progress) {
  const AnyModel model = configure_builtin_model(model_name, io::parse_json(config_json));
  const Options options = normalize_options(io::options_from_json(io::JsonObject(io::parse_json(options_json), "options")));
  const Batch batch = batch_from_rows(theta, model.info().P);
  const Backend used = resolve_backend(parse_backend(backend));
  PythonProgress bridge(std::move(progress));
  auto solved = std::make_shared<Solved>();
  solved->info = model.info();
  double seconds = 0.0;
  solved->result = bridge.run([&] {
    const auto start = std::chrono::steady_clock::now();
    Result r = model.solve(batch, options, used, bridge.hook());
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    mark_unreached_events(r);
    return r;
  });
  solved->table = std::make_unique<io::ArrayTable>(
      io::result_table(solved->info, solved->result, io::provenance(solved->info, options, used)));
  // The library's solve alone, for measuring what the binding adds (bench/python_overhead.py).
  solved->table->meta["solve_seconds"] = seconds;
  nb::dict arrays = table_arrays(*solved->table, solved);
  return {solved, arrays, solved->table->meta.dump()};
}

// A float64 column of the table as a row-major copy, shape (n, *inner): what JAX takes. A blocked
// transpose of the SoA storage, since a plain one misses the cache on every element. With
// zero_unreached, the event slots past n_events (NaN in the result) read 0: as derivatives.
Array row_major(const Solved& s, const std::string& name, bool zero_unreached) {
  const io::Column* column = s.table->find(name);
  if (!column || column->dtype != io::DType::F64)
    throw InvalidInput("name", -1, "\"" + name + "\" is not a float64 array of this result");
  const std::size_t n = s.result.n, width = static_cast<std::size_t>(column->inner_size());
  const double* soa = static_cast<const double*>(column->data);
  std::vector<double> rows;
  {
    nb::gil_scoped_release release;
    rows.resize(n * width);
    constexpr std::size_t block = 32;
    for (std::size_t r0 = 0; r0 < width; r0 += block)
      for (std::size_t i0 = 0; i0 < n; i0 += block)
        for (std::size_t r = r0; r < std::min(r0 + block, width); ++r)
          for (std::size_t i = i0; i < std::min(i0 + block, n); ++i) rows[i * width + r] = soa[r * n + i];
    if (zero_unreached && !column->count.empty()) {
      // The first inner axis is the event slot.
      const std::size_t per_slot = width / static_cast<std::size_t>(column->inner.front());
      for (std::size_t i = 0; i < n; ++i)
        std::fill(rows.begin() + static_cast<std::ptrdiff_t>(i * width + s.result.n_events[i] * per_slot),
                  rows.begin() + static_cast<std::ptrdiff_t>((i + 1) * width), 0.0);
    }
  }
  std::vector<long> shape{static_cast<long>(n)};
  shape.insert(shape.end(), column->inner.begin(), column->inner.end());
  return owned_row_major(std::move(rows), shape);
}

}  // namespace

void bind_solve(nb::module_& m) {
  nb::class_<Solved>(m, "Solved", "A solved batch (the arrays' owner) and its derivative products")
      .def_prop_ro("output_size", [](const Solved& s) { return output_size(s.result); },
                   "R = N + C (1 + N): y = [qf, then per event slot: t_e, q-_e]")
      .def("outputs", [](const Solved& s) { return soa_array(outputs(s.result), s.result.n, {output_size(s.result)}); },
           "y, (n, R); unreached event slots 0")
      .def("jacobian",
           [](const Solved& s) {
             return soa_array(jacobian(s.result), s.result.n, {output_size(s.result), s.result.P});
           },
           "dy/dtheta, (n, R, P)")
      .def("jvp",
           [](const Solved& s, const Rows& v) {
             return soa_array(jvp(s.result, soa_from_rows(v, s.result.P, "v")), s.result.n, {output_size(s.result)});
           },
           nb::arg("v"), "J v for tangents v (n, P): (n, R)")
      .def("vjp",
           [](const Solved& s, const Rows& w) {
             return soa_array(vjp(s.result, soa_from_rows(w, output_size(s.result), "w")), s.result.n, {s.result.P});
           },
           nb::arg("w"), "w^T J for cotangents w (n, R): (n, P)")
      .def("row_major", &row_major, nb::arg("name"), nb::arg("zero_unreached"),
           "A float64 array as a row-major copy (n, *inner); zero_unreached: 0 in the event slots past n_events")
      .def("landing",
           [](const Solved& s, int impact, int coordinate, double target, std::vector<double> qf_weights,
              std::vector<double> qf_target) {
             const ObjectiveValues v =
                 evaluate(LandingObjective{impact, coordinate, target, std::move(qf_weights), std::move(qf_target)},
                          s.result);
             return nb::make_tuple(soa_array(v.value, s.result.n, {}), soa_array(v.gradient, s.result.n, {s.result.P}));
           },
           nb::arg("impact"), nb::arg("coordinate"), nb::arg("target"), nb::arg("qf_weights"), nb::arg("qf_target"),
           "products.hpp's LandingObjective: (value (n,), gradient (n, P))");
  m.def("solve", &solve, nb::arg("model"), nb::arg("config_json"), nb::arg("theta"), nb::arg("options_json"),
        nb::arg("backend"), nb::arg("progress").none(),
        "Solve theta rows (n, P); returns (Solved, arrays, meta JSON)");
}

}  // namespace saltation::python
