#include "saltation/backend.hpp"

#include <cmath>
#include <string>

#include "saltation/batch.hpp"
#include "saltation/config.hpp"
#include "saltation/errors.hpp"
#include "saltation/options.hpp"
#include "saltation/result.hpp"
#include "saltation/version.hpp"

#ifndef SALTATION_GIT_HASH
#define SALTATION_GIT_HASH "unknown"
#endif

namespace saltation {
namespace detail {
int cuda_device_count();  // cuda_builtin_models.cu or cuda_unavailable.cpp
}

const char* version() { return SALTATION_VERSION_STRING; }
const char* git_hash() { return SALTATION_GIT_HASH; }

Backend parse_backend(const std::string& name) {
  if (name == "cpu") return Backend::Cpu;
  if (name == "cuda") return Backend::Cuda;
  if (name == "auto") return Backend::Auto;
  throw InvalidInput("backend", -1, "\"" + name + "\" is not one of \"cpu\", \"cuda\", \"auto\"");
}

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
    case Backend::Auto: return "auto";
  }
  return "?";
}

bool cuda_compiled() {
#ifdef SALTATION_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

bool cuda_device_available() { return detail::cuda_device_count() > 0; }

Backend resolve_backend(Backend b) {
  if (b == Backend::Auto) return cuda_device_available() ? Backend::Cuda : Backend::Cpu;
  if (b == Backend::Cuda && !cuda_device_available())
    throw CudaError(cuda_compiled() ? "backend \"cuda\" was requested but no CUDA device is available"
                                    : "backend \"cuda\" was requested but this build has no CUDA backend",
                    __FILE__, __LINE__);
  return b;
}

const char* status_name(Status s) {
  switch (s) {
    case Status::Finished: return "finished";
    case Status::EventCapacity: return "event_capacity";
    case Status::Settled: return "settled";
    case Status::NonFinite: return "non_finite";
    case Status::InvalidInput: return "invalid_input";
    case Status::Zeno: return "zeno";
  }
  return "unknown";
}

Options normalize_options(const Options& in) {
  Options o = in;
  auto positive = [](double x) { return std::isfinite(x) && x > 0.0; };
  if (!positive(o.dt)) throw InvalidInput("options.dt", -1, "must be finite and > 0");
  if (!(std::isfinite(o.t_final) && o.t_final >= 0.0))
    throw InvalidInput("options.t_final", -1, "must be finite and >= 0");
  if (!(std::isfinite(o.v_stop) && o.v_stop >= 0.0)) throw InvalidInput("options.v_stop", -1, "must be finite and >= 0");
  if (o.event_capacity < 0) throw InvalidInput("options.event_capacity", -1, "must be >= 0");
  if (o.probes < 0 || o.probes > 64) throw InvalidInput("options.probes", -1, "must be in [0, 64]");
  if (!positive(o.time_tol)) throw InvalidInput("options.time_tol", -1, "must be finite and > 0");
  if (!(std::isfinite(o.graze_tol) && o.graze_tol >= 0.0))
    throw InvalidInput("options.graze_tol", -1, "must be finite and >= 0");
  if (o.zeno_events < 2) throw InvalidInput("options.zeno_events", -1, "must be >= 2");
  if (!(std::isfinite(o.zeno_window) && o.zeno_window >= 0.0))
    throw InvalidInput("options.zeno_window", -1, "must be finite and >= 0 (0 means one step)");
  if (o.threads < 0) throw InvalidInput("options.threads", -1, "must be >= 0 (0: OpenMP default)");
  // Enough halvings of one probe interval to reach time_tol; the same on every lane.
  const double bracket = o.dt / (o.probes + 1);
  o.bisect_iterations = bracket > o.time_tol ? static_cast<int>(std::ceil(std::log2(bracket / o.time_tol))) : 0;
  if (o.bisect_iterations > 80) o.bisect_iterations = 80;
  return o;
}

Batch Batch::from_rows(const std::vector<std::vector<double>>& rows, int P) {
  Batch b(rows.size(), P);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (static_cast<int>(rows[i].size()) != P)
      throw InvalidInput("theta", static_cast<long>(i),
                         "has " + std::to_string(rows[i].size()) + " entries, expected " + std::to_string(P));
    for (int p = 0; p < P; ++p) b.at(i, p) = rows[i][p];
  }
  return b;
}

Result::Result(std::size_t n_, int N_, int P_, int C_, bool sens)
    : n(n_), N(N_), P(P_), C(C_), sensitivities(sens), status(n_, 0), n_events(n_, 0),
      ev_guard(n_ * C_, -1), ev_flags(n_ * C_, 0), t_end(n_, 0.0), qf(n_ * N_, 0.0), ev_t(n_ * C_, 0.0),
      ev_q(n_ * C_ * N_, 0.0), ev_q_plus(n_ * C_ * N_, 0.0), dqf(sens ? n_ * N_ * P_ : 0, 0.0),
      ev_dt(sens ? n_ * C_ * P_ : 0, 0.0), ev_dq(sens ? n_ * C_ * N_ * P_ : 0, 0.0) {}

ResultView Result::shape() const {
  ResultView v;
  v.n = n;
  v.N = N;
  v.P = P;
  v.C = C;
  v.sensitivities = sensitivities;
  return v;
}

ResultView Result::view() {
  ResultView v = shape();
  zip_arrays(*this, v, [](auto& array, auto& pointer) { pointer = array.data(); });
  return v;
}

}  // namespace saltation
