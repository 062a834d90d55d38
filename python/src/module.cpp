// saltation._saltation: the nanobind module under the `saltation` package. A thin adapter over
// the library: the registry, the request readers (dicts arrive as JSON text, so every key is
// checked by the same readers as the CLI's), the solvers and the result tables.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <exception>
#include <string>

#include "bridge.hpp"
#include "saltation/backend.hpp"
#include "saltation/errors.hpp"
#include "saltation/interrupt.hpp"
#include "saltation/io/files.hpp"
#include "saltation/options.hpp"
#include "saltation/registry.hpp"
#include "saltation/status.hpp"
#include "saltation/user_model/user_model.hpp"
#include "saltation/version.hpp"

namespace saltation::python {
namespace {

// The Python classes of saltation's errors (python/saltation/_errors.py), handed over at import.
struct ErrorTypes {
  nb::object invalid_input, io_error, cuda_error, compile_error;
};
ErrorTypes& error_types() {
  static ErrorTypes* types = new ErrorTypes();  // never destroyed: no Python calls at exit
  return *types;
}

void raise(const nb::object& type, nb::object instance) { PyErr_SetObject(type.ptr(), instance.ptr()); }

void translate_error(const std::exception_ptr& error, void*) {
  const ErrorTypes& t = error_types();
  try {
    std::rethrow_exception(error);
  } catch (const InvalidInput& e) {
    raise(t.invalid_input, t.invalid_input(e.what(), e.parameter(), e.row()));
  } catch (const IoError& e) {
    raise(t.io_error, t.io_error(e.what(), e.path()));
  } catch (const CudaError& e) {
    raise(t.cuda_error, t.cuda_error(e.what()));
  } catch (const user_model::ToolchainError& e) {
    raise(t.compile_error, t.compile_error(e.what()));
  } catch (const Interrupted& e) {
    PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
  }
}

nb::list models() {
  nb::list all;
  for (const RegisteredModel& m : builtin_models()) {
    // Parameters depend on the variant: describe the default one (as `saltation models` does).
    const ModelInfo info = configure_builtin_model(m.name, nullptr).info();
    nb::list parameters;
    for (int p = 0; p < info.P; ++p) {
      nb::dict parameter;
      parameter["name"] = info.param_names[p];
      parameter["domain"] = info.param_domains[p];
      parameters.append(parameter);
    }
    nb::dict config;
    for (const ConfigKey& k : m.config) {
      nb::dict key;
      key["default"] = nb::module_::import_("json").attr("loads")(k.fallback.dump());
      key["meaning"] = k.meaning;
      if (!k.choices.empty()) key["choices"] = k.choices;
      config[k.key.c_str()] = key;
    }
    nb::dict entry;
    entry["name"] = m.name;
    entry["states"] = m.state_names;
    entry["guards"] = m.M;
    entry["parameters"] = parameters;
    entry["config"] = config;
    if (!m.variant_key.empty()) {
      nb::dict variants;
      variants["key"] = m.variant_key;
      variants["values"] = m.variants;
      entry["variants"] = variants;
    }
    all.append(entry);
  }
  return all;
}

// Every solve option (options.hpp's for_each_option): name, meaning, default.
nb::list options() {
  nb::list all;
  Options defaults;
  for_each_option(
      [&](const char* name, const char* meaning, const auto& member) {
        if constexpr (std::is_same_v<std::decay_t<decltype(member)>, Method>)
          all.append(nb::make_tuple(name, meaning, method_name(member)));
        else if constexpr (std::is_same_v<std::decay_t<decltype(member)>, AbsoluteTolerance>)
          all.append(nb::make_tuple(name, meaning, member.value[0]));
        else all.append(nb::make_tuple(name, meaning, member));
      },
      defaults);
  return all;
}

// The model of `model_json` (model_from_json) configured by `config_json`: its sizes, names and
// the config in force. Nothing is compiled: a model file's library is built when it first runs.
nb::dict model_info(const std::string& model_json, const std::string& config_json) {
  const ModelInfo info = model_from_json(model_json, config_json).info();
  nb::dict d;
  d["name"] = info.name;
  d["N"] = info.N;
  d["P"] = info.P;
  d["M"] = info.M;
  d["state_names"] = info.state_names;
  d["param_names"] = info.param_names;
  d["param_domains"] = info.param_domains;
  d["guard_names"] = info.guard_names;
  d["config"] = nb::module_::import_("json").attr("loads")(info.config.dump());
  return d;
}

nb::dict status_names() {
  nb::dict names;
  for (int s = 0; s < status_count; ++s) names[nb::int_(s)] = status_name(static_cast<Status>(s));
  return names;
}

}  // namespace
}  // namespace saltation::python

NB_MODULE(_saltation, m) {
  using namespace saltation::python;
  m.doc() = "saltation's native module; use the `saltation` package";
  m.def("_set_error_types",
        [](nb::object invalid_input, nb::object io_error, nb::object cuda_error, nb::object compile_error) {
          error_types() = ErrorTypes{std::move(invalid_input), std::move(io_error), std::move(cuda_error),
                                     std::move(compile_error)};
        });
  m.def("_set_include_dir", &saltation::user_model::set_include_dir, nb::arg("dir"),
        "Where model files are compiled against saltation's headers (the package's own copy)");
  nb::register_exception_translator(translate_error);
  m.def("models", &models,
        "The built-in models: name, states, guards, parameters (name, domain), config keys, variants");
  m.def("model_info", &model_info, nb::arg("model_json"), nb::arg("config_json"),
        "A configured model: name, N, P, M, state_names, param_names, param_domains, guard_names, config");
  m.def("options", &options, "Every solve option as (name, meaning, default)");
  m.def("status_names", &status_names, "Status code -> name");
  m.def("version", [] { return std::string(saltation::version()); });
  m.def("git_hash", [] { return std::string(saltation::git_hash()); });
  m.def("cuda_compiled", &saltation::cuda_compiled, "Whether this build has the CUDA backend");
  m.def("cuda_device_available", &saltation::cuda_device_available);
  bind_solve(m);
  bind_studies(m);
#ifdef SALTATION_PYTHON_XLA_FFI
  bind_jax_ffi(m);
#endif
}
