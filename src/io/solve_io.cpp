#include "saltation/io/solve_io.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <type_traits>
#include <utility>

#include "saltation/errors.hpp"
#include "saltation/io/files.hpp"
#include "saltation/status.hpp"
#include "saltation/version.hpp"

namespace saltation::io {

using nlohmann::json;

ModelChoice parse_model_choice(const json& request, const std::string& base_dir) {
  const JsonObject top(request, "");
  ModelChoice c;
  if (top.has("config")) c.config = top.raw("config");
  const json& model = top.raw("model");
  if (model.is_string()) {
    c.name = model.get<std::string>();
    return c;
  }
  if (!model.is_object())
    throw InvalidInput("model", -1,
                       "must be a built-in model's name, {\"file\": \"model.json\"} or {\"define\": {...}}");
  const JsonObject m(model, "model");
  if (m.has("file") == m.has("define"))
    throw InvalidInput("model", -1, "needs one of \"file\" (a model file) and \"define\" (the model itself)");
  if (m.has("define")) {
    c.definition =
        std::make_shared<const user_model::ModelSpec>(user_model::parse_model_spec(m.raw("define"), "model.define"));
  } else {
    const std::filesystem::path file = m.string("file");
    const std::filesystem::path path =
        file.is_absolute() || base_dir.empty() ? file : std::filesystem::path(base_dir) / file;
    c.definition = std::make_shared<const user_model::ModelSpec>(read_model_file(path.string()));
  }
  m.reject_unknown("model");
  c.name = c.definition->name;
  return c;
}

user_model::ModelSpec read_model_file(const std::string& path) {
  try {
    return user_model::parse_model_spec(read_json_file(path), "model");
  } catch (const InvalidInput& e) {  // a syntax error or a bad model: both name the file
    throw InvalidInput(e.parameter(), e.row(), e.line(), e.column(), e.message() + " (model file " + path + ")");
  }
}

Options options_from_json(const JsonObject& j, Options o) {
  for_each_option(
      [&](const char* name, const char*, auto& member) {
        using T = std::decay_t<decltype(member)>;
        if constexpr (std::is_same_v<T, bool>) member = j.boolean(name, member);
        else if constexpr (std::is_same_v<T, int>) member = j.integer(name, member);
        else if constexpr (std::is_same_v<T, long long>) member = j.integer64(name, member);
        else if constexpr (std::is_same_v<T, Method>)
          member = method_from_name(j.string(name, method_name(member)), std::string("options.") + name);
        else if constexpr (std::is_same_v<T, AbsoluteTolerance>) {
          if (!j.has(name)) return;
          member = j.raw(name).is_array() ? atol_from_list(j.numbers(name), j.path(name))
                                          : AbsoluteTolerance(j.number(name));
        } else member = j.number(name, member);
      },
      o);
  j.reject_unknown("options (see docs/schema.md)");
  return o;
}

json options_to_json(const Options& options) {
  json out = json::object();
  for_each_option(
      [&](const char* name, const char*, const auto& member) {
        using T = std::decay_t<decltype(member)>;
        if constexpr (std::is_same_v<T, Method>) out[name] = method_name(member);
        else if constexpr (std::is_same_v<T, AbsoluteTolerance>) {
          if (member.states == 0) out[name] = member.value[0];
          else out[name] = atol_entries(member);
        } else out[name] = member;
      },
      options);
  return out;
}

SolveRequest parse_solve_request(const json& request, const ModelInfo& info) {
  const JsonObject top(request, "");
  top.raw("model");
  if (top.has("config")) top.raw("config");
  SolveRequest r;
  r.options = options_from_json(top.object("options"));
  if (top.has("backend")) r.backend = parse_backend(top.string("backend"));
  const json& rows = top.raw("theta");
  if (!rows.is_array() || rows.empty()) throw InvalidInput("theta", -1, "must be a non-empty array of parameter rows");
  top.reject_unknown("a solve request (model, config, options, backend, theta)");
  r.batch = Batch(rows.size(), info.P);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& row = rows[i];
    if (!row.is_array() || static_cast<int>(row.size()) != info.P)
      throw InvalidInput("theta", static_cast<long>(i),
                         "must be an array of " + std::to_string(info.P) + " numbers for " + info.name);
    for (int p = 0; p < info.P; ++p) {
      if (!row[p].is_number())
        throw InvalidInput(info.param_names[p], static_cast<long>(i),
                           "theta[" + std::to_string(p) + "] must be a number");
      r.batch.at(i, p) = row[p].get<double>();
    }
  }
  return r;
}

json provenance(const ModelInfo& info, const Options& normalized, Backend used) {
  return json{{"version", version()}, {"git_hash", git_hash()}, {"backend", backend_name(used)},
              {"model", info.name},   {"config", info.config},  {"options", options_to_json(normalized)}};
}

ArrayTable result_table(const ModelInfo& info, const Result& r, json provenance) {
  ArrayTable t("trajectory", r.n);
  json status_names = json::object();
  for (int s = 0; s < status_count; ++s) status_names[std::to_string(s)] = status_name(static_cast<Status>(s));
  t.meta = json{{"model", info.name},
                {"state_names", info.state_names},
                {"param_names", info.param_names},
                {"status_names", status_names},
                {"provenance", std::move(provenance)}};
  const long N = r.N, P = r.P, C = r.C;
  t.add("status", r.status, {}, "how the trajectory ended (status_names)");
  t.add("t_end", r.t_end, {}, "time at which it ended");
  t.add("qf", r.qf, {N}, "final state (see status)");
  t.add("n_events", r.n_events, {}, "events recorded");
  t.add("events_t", r.ev_t, {C}, "event times", "n_events");
  t.add("events_guard", r.ev_guard, {C}, "guard of each event", "n_events");
  t.add("events_flags", r.ev_flags, {C}, "event flags (1: grazing)", "n_events");
  t.add("events_q", r.ev_q, {C, N}, "pre-event states", "n_events");
  t.add("events_q_plus", r.ev_q_plus, {C, N}, "post-event states", "n_events");
  if (r.sensitivities) {
    t.add("dqf_dtheta", r.dqf, {N, P}, "total derivative of qf");
    t.add("events_dt_dtheta", r.ev_dt, {C, P}, "event-time derivatives", "n_events");
    t.add("events_dq_dtheta", r.ev_dq, {C, N, P}, "total derivatives of the pre-event states", "n_events");
  }
  return t;
}

ArrayTable result_shape(const ModelInfo& info, const Options& normalized, json provenance) {
  // No rows: the table's views of this empty Result are never read.
  const Result empty(0, info.N, info.P, normalized.event_capacity, normalized.sensitivities);
  return result_table(info, empty, std::move(provenance));
}

std::uint64_t default_memory_budget(Backend backend) {
  if (backend == Backend::Cuda) {
    const CudaDevices d = query_cuda_devices();
    if (!d.devices.empty()) return d.devices.front().memory / 4;
  }
  return std::uint64_t(1) << 30;
}

std::uint64_t bytes_per_trajectory(const ModelInfo& info, const Options& normalized) {
  return sizeof(double) * static_cast<std::uint64_t>(info.P) + result_shape(info, normalized).row_bytes();
}

std::size_t chunk_rows(std::uint64_t budget, std::uint64_t bytes_per_row) {
  if (bytes_per_row > budget)
    throw InvalidInput("memory-budget", -1,
                       std::to_string(budget) + " bytes do not hold one trajectory (" + std::to_string(bytes_per_row) +
                           " bytes); raise --memory-budget (within the memory available), record fewer events "
                           "(options.event_capacity) or leave out sensitivities");
  return static_cast<std::size_t>(budget / bytes_per_row);
}

Batch batch_rows(const Batch& batch, std::size_t first, std::size_t count) {
  Batch rows(count, batch.P);
  for (int p = 0; p < batch.P; ++p)
    std::copy_n(batch.theta.begin() + static_cast<std::ptrdiff_t>(p * batch.n + first), count,
                rows.theta.begin() + static_cast<std::ptrdiff_t>(p * count));
  return rows;
}

}  // namespace saltation::io
