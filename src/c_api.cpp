#include "saltation/c_api.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "saltation/builtin.hpp"
#include "saltation/errors.hpp"
#include "saltation/json_io.hpp"
#include "saltation/result.hpp"
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
  if (result_json) *result_json = nullptr;
  if (error_message) *error_message = nullptr;
  try {
    if (!request_json) throw saltation::InvalidInput("request_json", -1, "is NULL");
    nlohmann::json request;
    try {
      request = nlohmann::json::parse(request_json);
    } catch (const nlohmann::json::parse_error& e) {
      throw saltation::InvalidInput("input", -1, std::string("not valid JSON: ") + e.what());
    }
    const saltation::SolveRequest req = saltation::parse_solve_request(request);
    const saltation::ModelInfo info = saltation::builtin_model_info(req.model, req.config);
    const saltation::Backend used = saltation::resolve_backend(req.backend);
    const saltation::Result r = saltation::solve_builtin(req.model, req.config, req.batch, req.options, used);
    if (result_json) *result_json = copy_out(saltation::result_to_json(req, info, r, used).dump());
    return SALTATION_OK;
  } catch (const saltation::InvalidInput& e) {
    return fail(SALTATION_INVALID_INPUT, e.what(), error_message);
  } catch (const saltation::CudaError& e) {
    return fail(SALTATION_CUDA_ERROR, e.what(), error_message);
  } catch (const std::exception& e) {
    return fail(SALTATION_ERROR, e.what(), error_message);
  } catch (...) {
    return fail(SALTATION_ERROR, "unknown error", error_message);
  }
}

extern "C" const char* saltation_status_name(int status) {
  if (status < 0 || status > static_cast<int>(saltation::Status::Zeno)) return "unknown";
  return saltation::status_name(static_cast<saltation::Status>(status));
}

extern "C" const char* saltation_code_name(int code) {
  switch (code) {
    case SALTATION_OK: return "ok";
    case SALTATION_INVALID_INPUT: return "invalid input";
    case SALTATION_CUDA_ERROR: return "CUDA error";
    case SALTATION_ERROR: return "error";
  }
  return "unknown";
}

extern "C" const char* saltation_version(void) { return saltation::version(); }

extern "C" void saltation_free(char* text) { std::free(text); }
