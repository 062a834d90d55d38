// The C API: the same request reader, registry and result table as `saltation solve`.
#include "saltation/c_api.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "saltation/errors.hpp"
#include "saltation/io/files.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/io/writers.hpp"
#include "saltation/registry.hpp"
#include "saltation/status.hpp"
#include "saltation/user_model/user_model.hpp"
#include "saltation/version.hpp"

namespace {

char* copy_out(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

int fail(int code, const std::string& message, char** error_message) {
  if (error_message) *error_message = copy_out(message);
  return code;
}

}  // namespace

extern "C" int saltation_solve_json(const char* request_json, char** result_json, char** error_message) {
  using namespace saltation;
  if (result_json) *result_json = nullptr;
  if (error_message) *error_message = nullptr;
  try {
    if (!request_json) throw InvalidInput("request_json", -1, "is NULL");
    const nlohmann::json request = io::parse_json(request_json);
    const AnyModel model = configure_model(io::parse_model_choice(request));
    const io::SolveRequest req = io::parse_solve_request(request, model.info());
    const Options options = normalize_options(req.options);
    const Backend used = model.backend_for(req.backend, options);
    const nlohmann::json provenance = io::provenance(model.info(), options, used);
    io::refuse_large_text_output(io::result_shape(model.info(), options, provenance), req.batch.n, "result_json",
                                 "the result JSON",
                                 "solve the rows in smaller requests, record fewer events (options.event_capacity) "
                                 "or use `saltation solve --format npy`, which streams any size");
    const Result r = model.solve(req.batch, options, used);
    const io::ArrayTable table = io::result_table(model.info(), r, provenance);
    if (result_json) *result_json = copy_out(io::table_to_json(table).dump());
    return SALTATION_OK;
  } catch (const saltation::InvalidInput& e) {
    return fail(SALTATION_INVALID_INPUT, e.what(), error_message);
  } catch (const saltation::CudaError& e) {
    return fail(SALTATION_CUDA_ERROR, e.what(), error_message);
  } catch (const saltation::IoError& e) {
    return fail(SALTATION_IO_ERROR, e.what(), error_message);
  } catch (const saltation::user_model::ToolchainError& e) {
    return fail(SALTATION_COMPILE_ERROR, e.what(), error_message);
  } catch (const std::exception& e) {
    return fail(SALTATION_ERROR, e.what(), error_message);
  } catch (...) {
    return fail(SALTATION_ERROR, "unknown error", error_message);
  }
}

extern "C" const char* saltation_status_name(int status) {
  if (status < 0 || status >= saltation::status_count) return "unknown";
  return saltation::status_name(static_cast<saltation::Status>(status));
}

extern "C" const char* saltation_code_name(int code) {
  switch (code) {
    case SALTATION_OK: return "ok";
    case SALTATION_INVALID_INPUT: return "invalid input";
    case SALTATION_CUDA_ERROR: return "CUDA error";
    case SALTATION_ERROR: return "error";
    case SALTATION_IO_ERROR: return "I/O error";
    case SALTATION_COMPILE_ERROR: return "compile error";
  }
  return "unknown";
}

extern "C" const char* saltation_version(void) { return saltation::version(); }

extern "C" void saltation_free(char* text) { std::free(text); }
