// saltation.solve: a model (built-in or a model file's), theta rows and options in; the result table's arrays out as
// NumPy views of the Result (no copy), plus the derivative products of products.hpp.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "bridge.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/products.hpp"

namespace saltation::python {
namespace {

using Rows = nb::ndarray<const double, nb::ndim<2>, nb::device::cpu>;

// A solved batch: what the NumPy views point into, and what the products read.
struct Solved {
  ModelInfo info;
  Result result;
  std::unique_ptr<io::ArrayTable> table;
};

std::tuple<std::shared_ptr<Solved>, nb::dict, std::string> solve(const std::string& model_json,
                                                                 const std::string& config_json, const Rows& theta,
                                                                 const std::string& options_json,
                                                                 const std::string& backend, nb::object progress) {
  const SolveSetup setup = solve_setup(model_json, config_json, options_json, backend);
  const Batch batch = batch_from_rows(theta, setup.model.info().P);
  PythonProgress bridge(std::move(progress));
  auto solved = std::make_shared<Solved>();
  solved->info = setup.model.info();
  double seconds = 0.0;
  solved->result = bridge.run([&] {
    const auto start = std::chrono::steady_clock::now();
    Result r = setup.model.solve(batch, setup.options, setup.backend, bridge.hook());
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // An unreached event must not pass for one at t = 0: NaN, derivatives too, in the arrays
    // handed to Python. The products never read those slots.
    mark_unreached_events(r, true);
    return r;
  });
  solved->table = std::make_unique<io::ArrayTable>(
      io::result_table(solved->info, solved->result, io::provenance(solved->info, setup.options, setup.backend)));
  // The library's solve alone, for measuring what the binding adds (bench/python_overhead.py).
  solved->table->meta["solve_seconds"] = seconds;
  nb::dict arrays = table_arrays(*solved->table, solved);
  return {solved, arrays, solved->table->meta.dump()};
}

}  // namespace

void mark_unreached_events(Result& r, bool derivatives_too) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Trajectories innermost: each SoA row is written in address order.
  auto mark = [&](HostArray<double>& soa, std::size_t rows_per_slot) {
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
  if (r.sensitivities && derivatives_too) {
    mark(r.ev_dt, P);
    mark(r.ev_dq, N * P);
  }
}

void bind_solve(nb::module_& m) {
  nb::class_<Solved>(m, "Solved", "A solved batch (the arrays' owner) and its derivative products")
      .def_prop_ro(
          "output_size", [](const Solved& s) { return output_size(s.result); },
          "R = N + C (1 + N): y = [qf, then per event slot: t_e, q-_e]")
      .def(
          "outputs", [](const Solved& s) { return soa_array(outputs(s.result), s.result.n, {output_size(s.result)}); },
          "y, (n, R); unreached event slots 0")
      .def(
          "jacobian",
          [](const Solved& s) {
            return soa_array(jacobian(s.result), s.result.n, {output_size(s.result), s.result.P});
          },
          "dy/dtheta, (n, R, P)")
      .def(
          "jvp",
          [](const Solved& s, const Rows& v) {
            return soa_array(jvp(s.result, soa_from_rows(v, s.result.P, "v")), s.result.n, {output_size(s.result)});
          },
          nb::arg("v"), "J v for tangents v (n, P): (n, R)")
      .def(
          "vjp",
          [](const Solved& s, const Rows& w) {
            return soa_array(vjp(s.result, soa_from_rows(w, output_size(s.result), "w")), s.result.n, {s.result.P});
          },
          nb::arg("w"), "w^T J for cotangents w (n, R): (n, P)")
      .def(
          "landing",
          [](const Solved& s, int impact, int coordinate, double target, std::vector<double> qf_weights,
             std::vector<double> qf_target) {
            const ObjectiveValues v = evaluate(
                LandingObjective{impact, coordinate, target, std::move(qf_weights), std::move(qf_target)}, s.result);
            return nb::make_tuple(soa_array(v.value, s.result.n, {}), soa_array(v.gradient, s.result.n, {s.result.P}));
          },
          nb::arg("impact"), nb::arg("coordinate"), nb::arg("target"), nb::arg("qf_weights"), nb::arg("qf_target"),
          "products.hpp's LandingObjective: (value (n,), gradient (n, P))");
  m.def("solve", &solve, nb::arg("model_json"), nb::arg("config_json"), nb::arg("theta"), nb::arg("options_json"),
        nb::arg("backend"), nb::arg("progress").none(), "Solve theta rows (n, P); returns (Solved, arrays, meta JSON)");
}

}  // namespace saltation::python
