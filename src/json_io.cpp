#include "saltation/json_io.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "saltation/config.hpp"
#include "saltation/errors.hpp"
#include "saltation/version.hpp"


namespace saltation {

using nlohmann::json;

namespace {

double get_number(const json& v, const std::string& key) {
  if (!v.is_number()) throw InvalidInput(key, -1, "must be a number");
  return v.get<double>();
}
int get_int(const json& v, const std::string& key) {
  if (!v.is_number_integer()) throw InvalidInput(key, -1, "must be an integer");
  return v.get<int>();
}
bool get_bool(const json& v, const std::string& key) {
  if (!v.is_boolean()) throw InvalidInput(key, -1, "must be true or false");
  return v.get<bool>();
}

json vector_json(const double* x, int count, std::size_t stride) {
  json a = json::array();
  for (int k = 0; k < count; ++k) a.push_back(x[k * stride]);
  return a;
}

}  // namespace

Options options_from_json(const json& j, Options o) {
  if (j.is_null()) return o;
  if (!j.is_object()) throw InvalidInput("options", -1, "must be a JSON object");
  for (const auto& item : j.items()) {
    const std::string& k = item.key();
    const json& v = item.value();
    const std::string key = "options." + k;
    if (k == "t_final") o.t_final = get_number(v, key);
    else if (k == "dt") o.dt = get_number(v, key);
    else if (k == "v_stop") o.v_stop = get_number(v, key);
    else if (k == "event_capacity") o.event_capacity = get_int(v, key);
    else if (k == "probes") o.probes = get_int(v, key);
    else if (k == "time_tol") o.time_tol = get_number(v, key);
    else if (k == "graze_tol") o.graze_tol = get_number(v, key);
    else if (k == "zeno_events") o.zeno_events = get_int(v, key);
    else if (k == "zeno_window") o.zeno_window = get_number(v, key);
    else if (k == "sensitivities") o.sensitivities = get_bool(v, key);
    else if (k == "threads") o.threads = get_int(v, key);
    else if (k == "mark_invalid_rows") o.mark_invalid_rows = get_bool(v, key);
    else throw InvalidInput(key, -1, "is not an option (see docs/schema.md)");
  }
  return o;
}

json options_to_json(const Options& o) {
  return json{{"t_final", o.t_final},
              {"dt", o.dt},
              {"v_stop", o.v_stop},
              {"event_capacity", o.event_capacity},
              {"probes", o.probes},
              {"time_tol", o.time_tol},
              {"graze_tol", o.graze_tol},
              {"zeno_events", o.zeno_events},
              {"zeno_window", o.zeno_window},
              {"sensitivities", o.sensitivities},
              {"threads", o.threads},
              {"mark_invalid_rows", o.mark_invalid_rows}};
}

SolveRequest parse_solve_request(const json& j) {
  if (!j.is_object()) throw InvalidInput("input", -1, "must be a JSON object");
  for (const auto& item : j.items())
    if (item.key() != "model" && item.key() != "config" && item.key() != "options" && item.key() != "theta" &&
        item.key() != "backend")
      throw InvalidInput(item.key(), -1, "is not a top-level key (model, config, options, theta, backend)");
  SolveRequest r;
  if (!j.contains("model") || !j.at("model").is_string()) throw InvalidInput("model", -1, "must be a string");
  r.model = j.at("model").get<std::string>();
  if (j.contains("config")) r.config = j.at("config");
  const ModelInfo info = builtin_model_info(r.model, r.config);  // validates model and config keys
  if (j.contains("options")) r.options = options_from_json(j.at("options"));
  if (j.contains("backend")) {
    if (!j.at("backend").is_string()) throw InvalidInput("backend", -1, "must be a string");
    r.backend = parse_backend(j.at("backend").get<std::string>());
  }
  if (!j.contains("theta") || !j.at("theta").is_array() || j.at("theta").empty())
    throw InvalidInput("theta", -1, "must be a non-empty array of parameter rows");
  const json& rows = j.at("theta");
  r.batch = Batch(rows.size(), info.P);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& row = rows[i];
    if (!row.is_array() || static_cast<int>(row.size()) != info.P)
      throw InvalidInput("theta", static_cast<long>(i),
                         "must be an array of " + std::to_string(info.P) + " numbers for " + r.model);
    for (int p = 0; p < info.P; ++p) {
      if (!row[p].is_number())
        throw InvalidInput(info.param_names[p], static_cast<long>(i), "theta[" + std::to_string(p) + "] must be a number");
      r.batch.at(i, p) = row[p].get<double>();
    }
  }
  return r;
}

json result_to_json(const SolveRequest& request, const ModelInfo& info, const Result& res, Backend used) {
  json trajectories = json::array();
  const std::size_t n = res.n;
  for (std::size_t i = 0; i < n; ++i) {
    json t;
    t["status"] = res.status[i];
    t["status_name"] = status_name(res.status_of(i));
    t["t_end"] = res.t_end[i];
    t["qf"] = vector_json(res.qf.data() + i, res.N, n);
    json events = json::array();
    for (int c = 0; c < res.n_events[i]; ++c) {
      json e;
      e["t"] = res.event_time(i, c);
      e["guard"] = res.ev_guard[c * n + i];
      e["q"] = vector_json(res.ev_q.data() + (std::size_t(c) * res.N) * n + i, res.N, n);
      e["q_plus"] = vector_json(res.ev_q_plus.data() + (std::size_t(c) * res.N) * n + i, res.N, n);
      e["grazing"] = (res.ev_flags[c * n + i] & EventGrazing) != 0;
      if (res.sensitivities) {
        json dt = json::array(), dq = json::array();
        for (int p = 0; p < res.P; ++p) dt.push_back(res.event_dt(i, c, p));
        for (int k = 0; k < res.N; ++k) {
          json row = json::array();
          for (int p = 0; p < res.P; ++p) row.push_back(res.event_dq(i, c, k, p));
          dq.push_back(row);
        }
        e["dt_dtheta"] = dt;
        e["dq_dtheta"] = dq;
      }
      events.push_back(e);
    }
    t["events"] = events;
    if (res.sensitivities) {
      json d = json::array();
      for (int k = 0; k < res.N; ++k) {
        json row = json::array();
        for (int p = 0; p < res.P; ++p) row.push_back(res.dqf_of(i, k, p));
        d.push_back(row);
      }
      t["dqf_dtheta"] = d;
    }
    trajectories.push_back(t);
  }
  json out;
  out["model"] = request.model;
  out["state_names"] = info.state_names;
  out["param_names"] = info.param_names;
  out["trajectories"] = trajectories;
  out["provenance"] = json{{"version", version()},
                           {"git_hash", git_hash()},
                           {"backend", backend_name(used)},
                           {"config", request.config},
                           {"options", options_to_json(request.options)}};
  return out;
}

json read_json_input(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream f(path);
    if (!f) throw InvalidInput("input", -1, "cannot open " + path);
    text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw InvalidInput("input", -1, std::string("not valid JSON (NaN and Inf are not JSON numbers): ") + e.what());
  }
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot open " + tmp + " for writing");
    f << text;
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw std::runtime_error("failed writing " + tmp);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot move " + tmp + " to " + path);
  }
}

}  // namespace saltation
