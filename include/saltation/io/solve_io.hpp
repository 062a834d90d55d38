#pragma once
// The solve request and its results in the I/O layer's terms (schema: docs/schema.md). The
// request is read in two steps so that the reader never looks a model up: first the model's
// name and config (the caller turns them into a model, e.g. with the registry), then the rest
// of the request against that model's description.
#include <nlohmann/json.hpp>

#include <string>

#include "saltation/backend.hpp"
#include "saltation/batch.hpp"
#include "saltation/io/json_object.hpp"
#include "saltation/io/table.hpp"
#include "saltation/model_info.hpp"
#include "saltation/options.hpp"
#include "saltation/result.hpp"

namespace saltation::io {

struct ModelChoice {
  std::string name;
  nlohmann::json config = nlohmann::json::object();
};
ModelChoice parse_model_choice(const nlohmann::json& request);

struct SolveRequest {
  Options options;
  Backend backend = Backend::Auto;
  Batch batch;
};
// Reads "options", "backend" and "theta" (rows of info.P numbers); any top-level key other than
// these and "model"/"config" is InvalidInput. Errors name the key, and the row for theta.
SolveRequest parse_solve_request(const nlohmann::json& request, const ModelInfo& info);

// Every option of for_each_option, read over `base` / written out.
Options options_from_json(const JsonObject& options, Options base = Options{});
nlohmann::json options_to_json(const Options& options);

// Version, git hash, backend used, model and config in force, and the normalised options.
nlohmann::json provenance(const ModelInfo& info, const Options& normalized, Backend used);

// The result arrays, trajectory-major, named as docs/schema.md lists them; meta holds the
// model's names, the status names and `provenance`. The table views `result`.
ArrayTable result_table(const ModelInfo& info, const Result& result, nlohmann::json provenance);

}  // namespace saltation::io
