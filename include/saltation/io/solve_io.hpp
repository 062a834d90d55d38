#pragma once
// The solve request and its results in the I/O layer's terms (schema: docs/schema.md). The
// request is read in two steps so that the reader never looks a model up: first the model's
// name and config (the caller turns them into a model, e.g. with the registry), then the rest
// of the request against that model's description.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "saltation/backend.hpp"
#include "saltation/batch.hpp"
#include "saltation/io/json_object.hpp"
#include "saltation/io/table.hpp"
#include "saltation/model_info.hpp"
#include "saltation/options.hpp"
#include "saltation/result.hpp"
#include "saltation/user_model/spec.hpp"

namespace saltation::io {

// A request's "model": a built-in model's name, {"file": PATH} (relative to `base_dir`, the folder
// of the request that names it) or {"define": {...}} (docs/models.md), and its "config".
struct ModelChoice {
  std::string name;
  std::shared_ptr<const user_model::ModelSpec> definition;  // a model file's; null for a built-in model
  nlohmann::json config = nlohmann::json::object();
};
ModelChoice parse_model_choice(const nlohmann::json& request, const std::string& base_dir = "");
// A model file (docs/models.md): errors name the JSON path under "model" and the file.
user_model::ModelSpec read_model_file(const std::string& path);

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
// The result table's columns and meta for a solve with these (normalised) options, with no rows:
// what result_table gives for every chunk of that solve (for NpyTableWriter and size estimates).
ArrayTable result_shape(const ModelInfo& info, const Options& normalized,
                        nlohmann::json provenance = nlohmann::json::object());

// Memory budgets of batches solved in chunks (saltation solve --format npy, saltation sweep).
// The default: 1 GiB on the CPU, a quarter of the first device's memory on CUDA.
std::uint64_t default_memory_budget(Backend backend);
// Bytes one trajectory of a chunk takes, on the host and on the device: its theta row and its
// Result arrays.
std::uint64_t bytes_per_trajectory(const ModelInfo& info, const Options& normalized);
// The rows `budget` bytes hold, at least one; InvalidInput("memory-budget") when not even one fits.
std::size_t chunk_rows(std::uint64_t budget, std::uint64_t bytes_per_row);
// Rows [first, first + count) of a batch, as a batch of their own.
Batch batch_rows(const Batch& batch, std::size_t first, std::size_t count);

}  // namespace saltation::io
