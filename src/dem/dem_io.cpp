// `saltation disks` requests and results: typed reads with io::JsonObject, results as
// io::ArrayTable, fit statistics. Schema: docs/disks.md.
#include "saltation/dem/dem_io.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "saltation/backend.hpp"
#include "saltation/errors.hpp"
#include "saltation/interrupt.hpp"
#include "saltation/io/files.hpp"
#include "saltation/io/json_object.hpp"
#include "saltation/io/writers.hpp"
#include "saltation/status.hpp"
#include "saltation/version.hpp"

namespace saltation::dem {

using nlohmann::json;

namespace {

double number_at(const json& v, const std::string& name, long row) {
  if (!v.is_number()) throw InvalidInput(name, row, "expected a number, got " + v.dump());
  return v.get<double>();
}

// Per-system value: a number (every system) or an array of n_systems numbers. Absent: empty.
std::vector<double> per_system(const io::JsonObject& top, const std::string& key, int n_systems) {
  if (!top.has(key)) return {};
  const json& v = top.raw(key);
  const std::string name = top.path(key);
  std::vector<double> out(n_systems);
  if (v.is_number()) {
    out.assign(n_systems, v.get<double>());
  } else if (v.is_array() && (int)v.size() == n_systems) {
    for (int b = 0; b < n_systems; ++b) out[b] = number_at(v[b], name, b);
  } else {
    throw InvalidInput(name, -1, "expected a number or an array of n_systems numbers");
  }
  return out;
}

// Per-disk value: a number, [n_disks] (every system) or [n_systems][n_disks]; written at
// [d*n_systems + b] into `out` (already sized).
template <class T>
void per_disk(const io::JsonObject& top, const std::string& key, int n_systems, int n_disks, std::vector<T>& out,
              bool required) {
  if (!top.has(key)) {
    if (required) top.raw(key);  // throws "is required"
    return;
  }
  const json& v = top.raw(key);
  const std::string name = top.path(key);
  auto at = [&](const json& x, long row) { return (T)number_at(x, name, row); };
  if (v.is_number()) {
    for (auto& e : out) e = at(v, -1);
  } else if (v.is_array() && (int)v.size() == n_disks && !v[0].is_array()) {
    for (int d = 0; d < n_disks; ++d)
      for (int b = 0; b < n_systems; ++b) out[(long)d * n_systems + b] = at(v[d], -1);
  } else if (v.is_array() && (int)v.size() == n_systems) {
    for (int b = 0; b < n_systems; ++b) {
      if (!v[b].is_array() || (int)v[b].size() != n_disks)
        throw InvalidInput(name, b, "expected " + std::to_string(n_disks) + " values");
      for (int d = 0; d < n_disks; ++d) out[(long)d * n_systems + b] = at(v[b][d], b);
    }
  } else {
    throw InvalidInput(name, -1, "expected a number, an array of n_disks values or n_systems arrays of n_disks values");
  }
}

// The layout of a per-disk 2-vector `v` (named `name`): true for [n_disks][2] (every system),
// false for [n_systems][n_disks][2]; any other outer shape is refused. Its pairs are read by
// per_disk_vector.
bool shared_disk_vectors(const json& v, const std::string& name, int n_systems, int n_disks) {
  if (!v.is_array()) throw InvalidInput(name, -1, "expected an array");
  if ((long)v.size() == n_disks && v[0].is_array() && v[0].size() == 2 && v[0][0].is_number()) return true;
  if ((long)v.size() != n_systems)
    throw InvalidInput(name, -1, "expected n_disks [x, y] pairs or n_systems arrays of them");
  for (int b = 0; b < n_systems; ++b)
    if (!v[b].is_array() || (long)v[b].size() != n_disks)
      throw InvalidInput(name, b, "expected " + std::to_string(n_disks) + " disks");
  return false;
}

// Per-disk 2-vector: [n_disks][2] (every system) or [n_systems][n_disks][2]; written at
// [(2d + c)*n_systems + b].
void per_disk_vector(const io::JsonObject& top, const std::string& key, int n_systems, int n_disks,
                     std::vector<double>& out, bool required) {
  if (!top.has(key)) {
    if (required) top.raw(key);
    return;
  }
  const json& v = top.raw(key);
  const std::string name = top.path(key);
  auto set = [&](const json& p, int b, int d, long row) {
    if (!p.is_array() || p.size() != 2) throw InvalidInput(name, row, "each disk needs [x, y]");
    for (int c = 0; c < 2; ++c) out[(2L * d + c) * n_systems + b] = number_at(p[c], name, row);
  };
  if (shared_disk_vectors(v, name, n_systems, n_disks)) {
    for (int d = 0; d < n_disks; ++d)
      for (int b = 0; b < n_systems; ++b) set(v[d], b, d, -1);
  } else {
    for (int b = 0; b < n_systems; ++b)
      for (int d = 0; d < n_disks; ++d) set(v[b][d], b, d, b);
  }
}

// {"lo": [x, y], "hi": [x, y]}
void read_box(const io::JsonObject& top, const std::string& key, double lo[2], double hi[2]) {
  const io::JsonObject box = top.object(key);
  const std::vector<double> l = box.numbers("lo"), h = box.numbers("hi");
  if (l.size() != 2 || h.size() != 2) throw InvalidInput(top.path(key), -1, "needs \"lo\": [x, y] and \"hi\": [x, y]");
  box.reject_unknown();
  for (int a = 0; a < 2; ++a) {
    if (!(l[a] < h[a]))  // NaN too
      throw InvalidInput(
          box.path("hi") + "[" + std::to_string(a) + "]", -1,
          std::to_string(h[a]) + " must exceed " + key + ".lo[" + std::to_string(a) + "] = " + std::to_string(l[a]));
    lo[a] = l[a], hi[a] = h[a];
  }
}

TangentParam read_tangent(const json& t, const std::string& name) {
  TangentParam tp;
  if (t == "log_stiffness") return tp;
  if (t == "damping") {
    tp.kind = TangentKind::Damping;
    return tp;
  }
  if (t.is_object() && t.size() == 1 && (t.contains("v0") || t.contains("x0"))) {
    const bool velocity = t.contains("v0");
    tp.kind = velocity ? TangentKind::InitialVelocity : TangentKind::InitialPosition;
    const json& dc = t.at(velocity ? "v0" : "x0");
    if (!dc.is_array() || dc.size() != 2 || !dc[0].is_number_integer() || !dc[1].is_number_integer())
      throw InvalidInput(name, -1, "v0/x0 need [disk, component]");
    tp.disk = dc[0].get<int>();
    tp.component = dc[1].get<int>();
    return tp;
  }
  throw InvalidInput(name, -1, R"(entries are "log_stiffness", "damping", {"v0": [d, c]} or {"x0": [d, c]})");
}

json tangent_json(const TangentParam& t) {
  switch (t.kind) {
    case TangentKind::LogStiffness: return "log_stiffness";
    case TangentKind::Damping: return "damping";
    case TangentKind::InitialVelocity: return json{{"v0", {t.disk, t.component}}};
    case TangentKind::InitialPosition: return json{{"x0", {t.disk, t.component}}};
  }
  return nullptr;
}

const char* loss_components_name(int components) { return components == 1 ? "x" : components == 2 ? "y" : "xy"; }

json status_names() {
  json names = json::object();
  for (int s = 0; s < status_count; ++s) names[std::to_string(s)] = status_name(static_cast<Status>(s));
  return names;
}

}  // namespace

DisksRequest parse_disks_request(const json& request, const DisksOverrides& overrides) {
  const io::JsonObject top(request, "");
  DisksRequest r;
  r.mode = top.choice("mode", {"rollout", "fit"}, "rollout") == "fit" ? DisksMode::Fit : DisksMode::Rollout;
  const int n_systems = top.integer("n_systems", 1), n_disks = top.integer("n_disks");
  if (n_systems <= 0) throw InvalidInput("n_systems", -1, "must be positive");
  if (n_disks <= 0) throw InvalidInput("n_disks", -1, "must be positive");

  RolloutOptions& o = r.options;
  o.dt = top.number("dt", 0.0);
  o.n_frames = top.integer("n_frames", 0);
  o.stride = top.integer("stride", 1);
  o.normal = top.choice("normal", {"linear", "hertz"}, "linear") == "hertz" ? NormalModel::Hertz : NormalModel::Linear;
  o.tangential = top.boolean("tangential", false);
  if (top.has("materials")) {
    const json& list = top.raw("materials");
    if (!list.is_array()) throw InvalidInput("materials", -1, "must be an array of material objects");
    o.materials.clear();
    for (std::size_t m = 0; m < list.size(); ++m) {
      const io::JsonObject j(list[m], "materials[" + std::to_string(m) + "]");
      Material mt;
      mt.stiffness = j.number("stiffness", mt.stiffness);
      mt.restitution = j.number("restitution", mt.restitution);
      mt.friction = j.number("friction", mt.friction);
      mt.tangential_damping = j.number("tangential_damping", mt.tangential_damping);
      j.reject_unknown("a material (stiffness, restitution, friction, tangential_damping)");
      o.materials.push_back(mt);
    }
  }
  if (top.has("walls")) {
    o.walls = true;
    read_box(top, "walls", o.box_lo, o.box_hi);
  }
  const std::string neighbors = top.choice("neighbors", {"auto", "all_pairs", "cell_list"}, "auto");
  o.neighbors = neighbors == "all_pairs"   ? Neighbors::AllPairs
                : neighbors == "cell_list" ? Neighbors::CellList
                                           : Neighbors::Auto;
  o.cell_size = top.number("cell_size", o.cell_size);
  o.cell_capacity = top.integer("cell_capacity", o.cell_capacity);
  if (top.has("grid")) read_box(top, "grid", o.grid_lo, o.grid_hi);
  o.grid_margin = top.number("grid_margin", o.grid_margin);
  o.cuda_block_threshold = top.integer("cuda_block_threshold", o.cuda_block_threshold);
  o.cpu_team_threshold = top.integer("cpu_team_threshold", o.cpu_team_threshold);
  if (top.has("tangents")) {
    const json& list = top.raw("tangents");
    if (!list.is_array()) throw InvalidInput("tangents", -1, "must be an array");
    for (std::size_t t = 0; t < list.size(); ++t)
      o.tangents.push_back(read_tangent(list[t], "tangents[" + std::to_string(t) + "]"));
  }
  r.backend = parse_backend(top.string("backend", "cpu"));

  // The positions (required) back the batch's size before it is allocated, so that a count with
  // them missing or short is refused here, not after allocating n_systems x n_disks disks
  // (libFuzzer: n_disks = 222222222 and no positions ran out of memory).
  shared_disk_vectors(top.raw("positions"), top.path("positions"), n_systems, n_disks);
  // One listed disk may be broadcast to every system: the batch (radius, mass, x0, v0, material) is
  // estimated before it is allocated, as solve's results are.
  check_host_memory(static_cast<std::uint64_t>(n_systems),
                    static_cast<std::uint64_t>(n_disks) * (6 * sizeof(double) + sizeof(int)),
                    "the disks of the request (radius, mass, positions, velocities, material)",
                    "ask for fewer systems (n_systems) or disks at a time");
  DiskBatch& b = r.batch;
  b = DiskBatch::make(n_systems, n_disks);
  per_disk(top, "radius", n_systems, n_disks, b.radius, true);
  per_disk(top, "mass", n_systems, n_disks, b.mass, true);
  per_disk(top, "material", n_systems, n_disks, b.material, false);
  per_disk_vector(top, "positions", n_systems, n_disks, b.x0, true);
  per_disk_vector(top, "velocities", n_systems, n_disks, b.v0, false);
  b.log_stiffness = per_system(top, "log_stiffness", n_systems);
  b.damping_ratio = per_system(top, "damping_ratio", n_systems);

  if (overrides.dt) o.dt = *overrides.dt;
  if (overrides.n_frames) o.n_frames = *overrides.n_frames;
  if (overrides.stride) o.stride = *overrides.stride;
  if (overrides.backend) r.backend = *overrides.backend;
  if (r.mode == DisksMode::Rollout) {
    // A rollout's frames are its big arrays: estimated before anything allocates them, as solve's
    // results are (n_frames 2e9 ran out of memory instead).
    const double arrays = (o.save_positions ? 1 : 0) + (o.save_velocities ? 1 : 0) +
                          (o.save_tangents ? 2.0 * static_cast<double>(o.tangents.size()) : 0);
    const double system_bytes = arrays * std::max(o.n_frames, 0) * 2.0 * n_disks * sizeof(double);
    check_host_memory(static_cast<std::uint64_t>(n_systems),
                      system_bytes < 1.8e19 ? static_cast<std::uint64_t>(system_bytes) : UINT64_MAX,
                      "the frames of the disk rollout (positions, velocities and tangents after each frame)",
                      "ask for fewer frames (n_frames, a larger stride) or fewer systems at a time");
  }

  if (top.has("observed")) {
    const json& ob = top.raw("observed");  // [n_systems][n_frames][n_disks][2]
    const int n_frames = o.n_frames;
    LossSpec loss;
    if (!ob.is_array() || (int)ob.size() != n_systems)
      throw InvalidInput("observed", -1, "expected n_systems x n_frames x n_disks x 2");
    for (int s = 0; s < n_systems; ++s)  // the frames back n_frames before the array is allocated
      if (!ob[s].is_array() || (int)ob[s].size() != n_frames)
        throw InvalidInput("observed", s, "expected n_frames frames");
    loss.observed.assign((size_t)n_frames * 2 * n_disks * n_systems, 0.0);
    for (int s = 0; s < n_systems; ++s) {
      for (int f = 0; f < n_frames; ++f) {
        if (!ob[s][f].is_array() || (int)ob[s][f].size() != n_disks)
          throw InvalidInput("observed", s, "expected n_disks per frame");
        for (int d = 0; d < n_disks; ++d) {
          const json& p = ob[s][f][d];
          if (!p.is_array() || p.size() != 2) throw InvalidInput("observed", s, "each disk needs [x, y]");
          for (int c = 0; c < 2; ++c)
            loss.observed[((long)f * 2 * n_disks + 2 * d + c) * n_systems + s] = number_at(p[c], "observed", s);
        }
      }
    }
    const std::string components = top.choice("loss_components", {"x", "y", "xy"}, "x");
    loss.components = components == "x" ? 1 : components == "y" ? 2 : 3;
    loss.scale = per_system(top, "loss_scale", n_systems);
    r.loss = std::move(loss);
  }
  if (r.mode == DisksMode::Fit) {
    if (!r.loss) throw InvalidInput("observed", -1, "mode \"fit\" needs observations");
    const io::JsonObject f = top.object("fit");
    FitOptions& fo = r.fit;
    fo.lower = f.number("lower", fo.lower);
    fo.upper = f.number("upper", fo.upper);
    fo.max_iterations = f.integer("max_iterations", fo.max_iterations);
    fo.epsilon = f.number("epsilon", fo.epsilon);
    fo.epsilon_rel = f.number("epsilon_rel", fo.epsilon_rel);
    fo.past = f.integer("past", fo.past);
    fo.delta = f.number("delta", fo.delta);
    fo.memory = f.integer("memory", fo.memory);
    fo.max_linesearch = f.integer("max_linesearch", fo.max_linesearch);
    fo.record_history = f.boolean("history", fo.record_history);
    f.reject_unknown("fit (see docs/disks.md)");
  }
  top.reject_unknown("a disks request (see docs/disks.md)");
  return r;
}

json normalized_options(const DisksRequest& r) {
  const RolloutOptions& o = r.options;
  json materials = json::array();
  for (const Material& m : o.materials)
    materials.push_back({{"stiffness", m.stiffness},
                         {"restitution", m.restitution},
                         {"friction", m.friction},
                         {"tangential_damping", m.tangential_damping}});
  json tangents = json::array();
  for (const TangentParam& t : o.tangents) tangents.push_back(tangent_json(t));
  auto box = [](const double lo[2], const double hi[2]) {
    return json{{"lo", {lo[0], lo[1]}}, {"hi", {hi[0], hi[1]}}};
  };
  json out{{"mode", r.mode == DisksMode::Fit ? "fit" : "rollout"},
           {"n_systems", r.batch.n_systems},
           {"n_disks", r.batch.n_disks},
           {"dt", o.dt},
           {"n_frames", o.n_frames},
           {"stride", o.stride},
           {"normal", o.normal == NormalModel::Hertz ? "hertz" : "linear"},
           {"tangential", o.tangential},
           {"materials", materials},
           {"walls", o.walls ? box(o.box_lo, o.box_hi) : json(nullptr)},
           {"neighbors", o.neighbors == Neighbors::AllPairs   ? "all_pairs"
                         : o.neighbors == Neighbors::CellList ? "cell_list"
                                                              : "auto"},
           {"cell_size", o.cell_size},
           {"cell_capacity", o.cell_capacity},
           {"grid", box(o.grid_lo, o.grid_hi)},
           {"grid_margin", o.grid_margin},
           {"cuda_block_threshold", o.cuda_block_threshold},
           {"cpu_team_threshold", o.cpu_team_threshold},
           {"tangents", tangents},
           {"backend", backend_name(r.backend)}};
  if (r.loss) out["loss_components"] = loss_components_name(r.loss->components);
  if (r.mode == DisksMode::Fit) {
    const FitOptions& f = r.fit;
    out["fit"] = {{"lower", f.lower},
                  {"upper", f.upper},
                  {"max_iterations", f.max_iterations},
                  {"epsilon", f.epsilon},
                  {"epsilon_rel", f.epsilon_rel},
                  {"past", f.past},
                  {"delta", f.delta},
                  {"memory", f.memory},
                  {"max_linesearch", f.max_linesearch},
                  {"history", f.record_history}};
  }
  return out;
}

json provenance(const DisksRequest& r, Backend used) {
  return json{{"version", version()},
              {"git_hash", git_hash()},
              {"command", "disks"},
              {"backend", backend_name(used)},
              {"options", normalized_options(r)}};
}

FitSummary summarize_fit(const FitResult& fit) {
  FitSummary s;
  const int n = (int)fit.theta.size();
  if (n == 0) return s;
  for (int b = 0; b < n; ++b) {
    s.stiffness_factor_mean += std::exp(fit.theta[b]) / n;
    ++s.outcome_count[std::clamp(fit.outcome[b], 0, 3)];
    s.iterations_max = std::max(s.iterations_max, fit.iterations[b]);
    s.iterations_mean += (double)fit.iterations[b] / n;
    s.evaluations_mean += (double)fit.evaluations[b] / n;
  }
  double var = 0.0;
  for (int b = 0; b < n; ++b) {
    const double dev = std::exp(fit.theta[b]) - s.stiffness_factor_mean;
    var += dev * dev / std::max(1, n - 1);
  }
  s.stiffness_factor_sd = std::sqrt(var);
  return s;
}

io::ArrayTable rollout_table(const DisksRequest& r, const RolloutResult& res, Backend used) {
  io::ArrayTable t("system", (std::size_t)res.n_systems);
  const long n_frames = res.n_frames, n_disks = res.n_disks, n_tangents = res.n_tangents;
  json frame_times = json::array();
  for (long f = 0; f < n_frames; ++f) frame_times.push_back(r.options.dt * r.options.stride * (f + 1));
  t.meta = json{{"mode", "rollout"},      {"status_names", status_names()}, {"cell_list", res.used_cells},
                {"seconds", res.seconds}, {"frame_times", frame_times},     {"provenance", provenance(r, used)}};
  t.add("status", res.status, {},
        "how the system ended (status_names); stopped systems have NaN frames after the stop");
  if (!res.x.empty()) t.add("positions", res.x, {n_frames, n_disks, 2}, "positions after each frame");
  if (!res.v.empty()) t.add("velocities", res.v, {n_frames, n_disks, 2}, "velocities after each frame");
  if (!res.dx.empty()) {
    t.add("d_positions", res.dx, {n_frames, n_tangents, n_disks, 2}, "tangents of the positions (options.tangents)");
    t.add("d_velocities", res.dv, {n_frames, n_tangents, n_disks, 2}, "tangents of the velocities");
  }
  if (!res.loss.empty()) {
    t.add("loss", res.loss, {}, "position loss against the observations");
    if (n_tangents > 0) t.add("gradient", res.grad, {n_tangents}, "derivative of the loss along each tangent");
  }
  return t;
}

io::ArrayTable fit_table(const DisksRequest& r, const FitResult& fit, Backend used) {
  const int n = (int)fit.theta.size();
  io::ArrayTable t("system", (std::size_t)n);
  const FitSummary s = summarize_fit(fit);
  json outcome_names = json::object();
  for (int o = 0; o < 4; ++o) outcome_names[std::to_string(o)] = fit_outcome_name(o);
  json outcome_counts = json::object();
  for (int o = 0; o < 4; ++o) outcome_counts[fit_outcome_name(o)] = s.outcome_count[o];
  t.meta = json{{"mode", "fit"},
                {"outcome_names", outcome_names},
                {"outcome_counts", outcome_counts},
                {"stiffness_factor_mean", s.stiffness_factor_mean},
                {"stiffness_factor_sd", s.stiffness_factor_sd},
                {"iterations_mean", s.iterations_mean},
                {"iterations_max", s.iterations_max},
                {"evaluations_mean", s.evaluations_mean},
                {"rounds", fit.rounds},
                {"seconds", fit.seconds},
                {"engine_seconds", fit.engine_seconds},
                {"seconds_per_round", fit.rounds ? fit.seconds / fit.rounds : 0.0},
                {"seconds_per_system", n ? fit.seconds / n : 0.0},
                {"messages", fit.message},
                {"provenance", provenance(r, used)}};
  std::vector<double> factor(n);
  for (int b = 0; b < n; ++b) factor[b] = std::exp(fit.theta[b]);
  t.add("log_stiffness", fit.theta, {}, "fitted theta = log(k / k_ref)");
  t.add_owned("stiffness_factor", std::move(factor), {}, "exp(theta) = k / k_ref");
  t.add("loss", fit.loss, {}, "final loss");
  t.add("initial_loss", fit.initial_loss, {}, "loss at the initial guess");
  t.add("gradient", fit.grad, {}, "final dL/dtheta");
  t.add("iterations", fit.iterations, {}, "L-BFGS-B iterations");
  t.add("evaluations", fit.evaluations, {}, "loss and gradient evaluations");
  t.add("outcome", fit.outcome, {}, "why the fit stopped (outcome_names)");
  if (!fit.history_theta.empty()) {
    long longest = 0;
    for (const auto& h : fit.history_theta) longest = std::max(longest, (long)h.size());
    std::vector<int> length(n);
    std::vector<double> theta((size_t)longest * n, NAN), loss((size_t)longest * n, NAN);
    for (int b = 0; b < n; ++b) {
      length[b] = (int)fit.history_theta[b].size();
      for (int k = 0; k < length[b]; ++k) {
        theta[(size_t)k * n + b] = fit.history_theta[b][k];
        loss[(size_t)k * n + b] = fit.history_loss[b][k];
      }
    }
    t.add_owned("history_length", std::move(length), {}, "accepted iterates, the initial point first");
    t.add_owned("history_log_stiffness", std::move(theta), {longest}, "theta of each accepted iterate",
                "history_length");
    t.add_owned("history_loss", std::move(loss), {longest}, "loss of each accepted iterate", "history_length");
  }
  return t;
}

void run_and_write(const DisksRequest& r, const std::string& format, const std::string& out, const Progress& progress) {
  if (format != "json" && format != "npy" && format != "csv")
    throw InvalidInput("format", -1, "must be json, npy or csv, got " + format);
  if (format != "json" && out.empty()) throw InvalidInput("out", -1, "--format " + format + " needs --out PREFIX");
  const Backend used = resolve_backend(r.backend);
  auto write = [&](const io::ArrayTable& table) {
    // The CPU engine stops between systems, the CUDA engine only after its launch: a stop asked
    // for meanwhile still means nothing is written (exit 128 + signal).
    throw_if_interrupted();
    if (format == "npy") {
      io::write_npy(table, out);
    } else if (format == "csv") {
      io::write_csv(table, out + ".csv");
      io::write_file_atomically(out + ".json", table.meta.dump(1) + "\n");
    } else {
      io::write_json(table, out.empty() ? "-" : out + ".json");
    }
  };
  if (r.mode == DisksMode::Rollout) {
    const RolloutResult result =
        r.loss ? rollout(r.batch, r.options, *r.loss, used, progress) : rollout(r.batch, r.options, used, progress);
    write(rollout_table(r, result, used));
  } else {
    const FitResult fit = fit_log_stiffness(r.batch, r.options, *r.loss, r.fit, used);
    write(fit_table(r, fit, used));
  }
}

}  // namespace saltation::dem
