// NumPy views of SoA arrays, rows into SoA, and the Progress bridge (bridge.hpp).
#include <csignal>
#include <string>
#include <utility>

#include "bridge.hpp"
#include "saltation/errors.hpp"
#include "saltation/interrupt.hpp"
#include "saltation/io/files.hpp"
#include "saltation/io/json_object.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/registry.hpp"

namespace saltation::python {

Array soa_view(const void* data, io::DType dtype, std::size_t rows, const std::vector<long>& inner, nb::handle owner) {
  std::vector<std::size_t> shape{rows};
  std::vector<std::int64_t> strides{1};  // in elements: consecutive trajectories are adjacent
  std::int64_t stride = static_cast<std::int64_t>(rows);
  for (long extent : inner) shape.push_back(static_cast<std::size_t>(extent));
  strides.resize(shape.size());
  for (std::size_t d = shape.size(); d-- > 1;) {
    strides[d] = stride;
    stride *= static_cast<std::int64_t>(shape[d]);
  }
  const nb::dlpack::dtype type = dtype == io::DType::F64 ? nb::dtype<double>() : nb::dtype<int>();
  return Array(const_cast<void*>(data), shape.size(), shape.data(), owner, strides.data(), type);
}

namespace {
// The vector moved to the heap, and a capsule that frees it with the last array over it.
std::pair<const double*, nb::capsule> keep(std::vector<double> values) {
  auto* owned = new std::vector<double>(std::move(values));
  return {owned->data(), nb::capsule(owned, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); })};
}
}  // namespace

Array soa_array(std::vector<double> soa, std::size_t rows, const std::vector<long>& inner) {
  auto [data, owner] = keep(std::move(soa));
  return soa_view(data, io::DType::F64, rows, inner, owner);
}

nb::dict table_arrays(const io::ArrayTable& table, std::shared_ptr<const void> owner) {
  // One capsule for all columns: it holds a reference to the owner until the last view goes.
  auto* keep = new std::shared_ptr<const void>(std::move(owner));
  nb::capsule capsule(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<const void>*>(p); });
  nb::dict arrays;
  for (const io::Column& c : table.columns())
    arrays[c.name.c_str()] = soa_view(c.data, c.dtype, table.rows(), c.inner, capsule);
  return arrays;
}

namespace {
void check_width(long actual, long width, const char* name) {
  if (actual != width)
    throw InvalidInput(name, -1, "rows have " + std::to_string(actual) + " entries, expected " + std::to_string(width));
}

std::vector<double> soa_from_strided(const double* rows, std::size_t n, long width, std::int64_t row_stride,
                                     std::int64_t column_stride) {
  std::vector<double> soa(n * static_cast<std::size_t>(width));
  for (long p = 0; p < width; ++p)
    for (std::size_t i = 0; i < n; ++i)
      soa[static_cast<std::size_t>(p) * n + i] = rows[static_cast<std::int64_t>(i) * row_stride + p * column_stride];
  return soa;
}
}  // namespace

std::vector<double> soa_from_rows(const nb::ndarray<const double, nb::ndim<2>, nb::device::cpu>& rows, long width,
                                  const char* name) {
  check_width(static_cast<long>(rows.shape(1)), width, name);
  return soa_from_strided(rows.data(), rows.shape(0), width, rows.stride(0), rows.stride(1));
}

Batch batch_from_rows(const double* rows, std::size_t n, int P, std::int64_t row_stride, std::int64_t column_stride) {
  if (n == 0) throw InvalidInput("theta", -1, "must hold at least one parameter row");
  Batch batch;
  batch.n = n;
  batch.P = P;
  batch.theta = soa_from_strided(rows, n, P, row_stride, column_stride);
  return batch;
}

Batch batch_from_rows(const nb::ndarray<const double, nb::ndim<2>, nb::device::cpu>& theta, int P) {
  check_width(static_cast<long>(theta.shape(1)), P, "theta");
  return batch_from_rows(theta.data(), theta.shape(0), P, theta.stride(0), theta.stride(1));
}

AnyModel model_from_json(const std::string& model_json, const std::string& config_json) {
  nlohmann::json request = nlohmann::json::object();
  request["model"] = io::parse_json(model_json);
  request["config"] = io::parse_json(config_json);
  return configure_model(io::parse_model_choice(request));
}

SolveSetup solve_setup(const std::string& model_json, const std::string& config_json, const std::string& options_json,
                       const std::string& backend) {
  AnyModel model = model_from_json(model_json, config_json);
  const Options options =
      normalize_options(io::options_from_json(io::JsonObject(io::parse_json(options_json), "options")));
  const Backend used = model.backend_for(parse_backend(backend), options);
  return {std::move(model), options, used};
}

Progress PythonProgress::hook() {
  return [this](std::size_t done, std::size_t total) {
    if (error_) return;
    nb::gil_scoped_acquire gil;
    try {
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
      if (!callback_.is_none()) callback_(done, total);
    } catch (nb::python_error& e) {
      error_.emplace(std::move(e));
      request_interrupt(SIGINT);  // the drivers stop at the next trajectory or chunk
    }
  };
}

bool PythonProgress::stopped_by_python() { return error_.has_value(); }

void PythonProgress::rethrow_python_error() {
  if (!error_) return;
  interrupt_request().store(0);
  nb::python_error error = std::move(*error_);
  error_.reset();
  throw error;
}

}  // namespace saltation::python
