#pragma once
// The JSON form of a solve request and of its results (schema: docs/schema.md).
#include <nlohmann/json.hpp>

#include <string>

#include "saltation/backend.hpp"
#include "saltation/batch.hpp"
#include "saltation/builtin.hpp"
#include "saltation/options.hpp"
#include "saltation/result.hpp"

namespace saltation {

struct SolveRequest {
  std::string model;
  nlohmann::json config = nlohmann::json::object();
  Options options;
  Backend backend = Backend::Auto;
  Batch batch;
};

// Throws InvalidInput naming the offending key (and row for theta).
Options options_from_json(const nlohmann::json& j, Options base = Options{});
nlohmann::json options_to_json(const Options& o);
SolveRequest parse_solve_request(const nlohmann::json& j);

nlohmann::json result_to_json(const SolveRequest& request, const ModelInfo& info, const Result& result,
                              Backend used);

// Reads and parses a JSON file ("-": standard input). Throws InvalidInput("input", ...) when the
// file cannot be read or is not JSON (NaN and Inf are not JSON numbers).
nlohmann::json read_json_input(const std::string& path);

// Writes text to `path` atomically (a temporary file renamed into place): a failure never
// leaves a half-written file. Throws std::runtime_error.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace saltation
