// `saltation disks`: batched disk-contact rollouts and stiffness fits, JSON in, JSON/NPY/CSV
// out. The schema is documented in docs/disks.md.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "saltation/json_io.hpp"
#include "saltation/npy.hpp"
#include "saltation/version.hpp"

#include "cli/commands.hpp"
#include "saltation/backend.hpp"
#include "saltation/config.hpp"
#include "saltation/dem/engine.hpp"
#include "saltation/dem/fit.hpp"
#include "saltation/errors.hpp"

namespace saltation::cli {
namespace {

using nlohmann::json;
using namespace saltation::dem;

struct DisksArgs {
  std::string input, out, format = "json", backend;
  double dt = NAN;  // NaN / kUnset: not given on the command line
  int n_frames = kUnset, stride = kUnset;
  static constexpr int kUnset = -2147483647;
};


template <class T>
T get(const json& j, const std::string& key, const T& dflt) {
  if (!j.contains(key)) return dflt;
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    throw InvalidInput(key, -1, std::string("wrong type: ") + e.what());
  }
}
double num(const json& v, const std::string& name, long row = -1) {
  if (!v.is_number()) throw InvalidInput(name, row, "expected a number, got " + v.dump());
  return v.get<double>();
}

// Per-system scalar: a number (all systems) or an array of B numbers.
std::vector<double> per_system(const json& cfg, const std::string& key, int B, double dflt) {
  std::vector<double> out(B, dflt);
  if (!cfg.contains(key)) return out;
  const json& v = cfg.at(key);
  if (v.is_number()) {
    out.assign(B, v.get<double>());
  } else if (v.is_array() && (int)v.size() == B) {
    for (int b = 0; b < B; ++b) out[b] = num(v[b], key, b);
  } else {
    throw InvalidInput(key, -1, "expected a number or an array of n_systems numbers");
  }
  return out;
}

// Per-disk value: a number, [M] (every system), or [B][M]. Written at [d*B + b].
template <class T>
void per_disk(const json& cfg, const std::string& key, int B, int M, std::vector<T>& out, bool required) {
  if (!cfg.contains(key)) {
    if (required) throw InvalidInput(key, -1, "is required");
    return;
  }
  const json& v = cfg.at(key);
  auto at = [&](const json& x, long row) { return (T)num(x, key, row); };
  if (v.is_number()) {
    for (auto& e : out) e = at(v, -1);
  } else if (v.is_array() && (int)v.size() == M && (M == 0 || !v[0].is_array())) {
    for (int d = 0; d < M; ++d)
      for (int b = 0; b < B; ++b) out[(long)d * B + b] = at(v[d], -1);
  } else if (v.is_array() && (int)v.size() == B) {
    for (int b = 0; b < B; ++b) {
      if (!v[b].is_array() || (int)v[b].size() != M) throw InvalidInput(key, b, "expected " + std::to_string(M) + " values");
      for (int d = 0; d < M; ++d) out[(long)d * B + b] = at(v[b][d], b);
    }
  } else {
    throw InvalidInput(key, -1, "expected a number, an array of n_disks values or n_systems arrays of n_disks values");
  }
}

// Per-disk 2-vector: [M][2] (every system) or [B][M][2]. Written at [(2d + c)*B + b].
void per_disk_vec(const json& cfg, const std::string& key, int B, int M, std::vector<double>& out, bool required) {
  if (!cfg.contains(key)) {
    if (required) throw InvalidInput(key, -1, "is required");
    return;
  }
  const json& v = cfg.at(key);
  auto pair = [&](const json& p, long row) {
    if (!p.is_array() || p.size() != 2) throw InvalidInput(key, row, "each disk needs [x, y]");
    return std::make_pair(num(p[0], key, row), num(p[1], key, row));
  };
  if (!v.is_array()) throw InvalidInput(key, -1, "expected an array");
  const bool shared = (int)v.size() == M && M > 0 && v[0].is_array() && v[0].size() == 2 && v[0][0].is_number();
  if (shared) {
    for (int d = 0; d < M; ++d) {
      const auto p = pair(v[d], -1);
      for (int b = 0; b < B; ++b) out[(2L * d) * B + b] = p.first, out[(2L * d + 1) * B + b] = p.second;
    }
  } else if ((int)v.size() == B) {
    for (int b = 0; b < B; ++b) {
      if (!v[b].is_array() || (int)v[b].size() != M) throw InvalidInput(key, b, "expected " + std::to_string(M) + " disks");
      for (int d = 0; d < M; ++d) {
        const auto p = pair(v[b][d], b);
        out[(2L * d) * B + b] = p.first;
        out[(2L * d + 1) * B + b] = p.second;
      }
    }
  } else {
    throw InvalidInput(key, -1, "expected n_disks [x, y] pairs or n_systems arrays of them");
  }
}



// SoA frames [(f*2M + 2d + c)*B + b] -> row-major [b][f][d][c] (or [b][f][p][d][c] for tangents).
std::vector<double> to_bfpdc(const std::vector<double>& soa, int B, int F, int P, int M) {
  std::vector<double> out(soa.size());
  const long N2 = 2L * M;
  for (int b = 0; b < B; ++b)
    for (int f = 0; f < F; ++f)
      for (int p = 0; p < P; ++p)
        for (long i = 0; i < N2; ++i) out[(((long)b * F + f) * P + p) * N2 + i] = soa[(((long)f * P + p) * N2 + i) * B + b];
  return out;
}

json nested(const std::vector<double>& rowmajor, const std::vector<long>& shape, size_t dim = 0, long off = 0) {
  json a = json::array();
  long stride = 1;
  for (size_t k = dim + 1; k < shape.size(); ++k) stride *= shape[k];
  for (long i = 0; i < shape[dim]; ++i) {
    if (dim + 1 == shape.size()) {
      const double v = rowmajor[off + i];
      a.push_back(std::isfinite(v) ? json(v) : json(nullptr));
    } else {
      a.push_back(nested(rowmajor, shape, dim + 1, off + i * stride));
    }
  }
  return a;
}

void run_disks(const DisksArgs& args) {
  const json cfg = read_json_input(args.input);
  if (!cfg.is_object()) throw InvalidInput("input", -1, "the config must be a JSON object");
  const std::string mode = get<std::string>(cfg, "mode", "rollout");
  if (mode != "rollout" && mode != "fit") throw InvalidInput("mode", -1, "must be \"rollout\" or \"fit\", got " + mode);
  if (args.format != "json" && args.format != "npy" && args.format != "csv")
    throw InvalidInput("format", -1, "must be json, npy or csv");
  if (args.format != "json" && args.out.empty()) throw InvalidInput("out", -1, "--format npy/csv needs --out PREFIX");
  const int B = get<int>(cfg, "n_systems", 1);
  const int M = get<int>(cfg, "n_disks", 0);
  if (B <= 0) throw InvalidInput("n_systems", -1, "must be positive");
  if (M <= 0) throw InvalidInput("n_disks", -1, "must be positive");

  RolloutOptions o;
  o.dt = !std::isnan(args.dt) ? args.dt : get<double>(cfg, "dt", 0.0);
  o.n_frames = args.n_frames != DisksArgs::kUnset ? args.n_frames : get<int>(cfg, "n_frames", 0);
  o.stride = args.stride != DisksArgs::kUnset ? args.stride : get<int>(cfg, "stride", 1);
  const std::string normal = get<std::string>(cfg, "normal", "linear");
  if (normal == "linear") o.normal = NormalModel::Linear;
  else if (normal == "hertz") o.normal = NormalModel::Hertz;
  else throw InvalidInput("normal", -1, "must be linear or hertz");
  o.tangential = get<bool>(cfg, "tangential", false);
  if (cfg.contains("materials")) {
    o.materials.clear();
    for (const json& m : cfg.at("materials")) {
      Material mt;
      mt.stiffness = get<double>(m, "stiffness", 1.0);
      mt.restitution = get<double>(m, "restitution", 1.0);
      mt.friction = get<double>(m, "friction", 0.0);
      mt.tangential_damping = get<double>(m, "tangential_damping", 0.0);
      o.materials.push_back(mt);
    }
  }
  if (cfg.contains("walls")) {
    const json& w = cfg.at("walls");
    o.walls = true;
    const auto lo = get<std::vector<double>>(w, "lo", {}), hi = get<std::vector<double>>(w, "hi", {});
    if (lo.size() != 2 || hi.size() != 2) throw InvalidInput("walls", -1, "needs \"lo\": [x, y] and \"hi\": [x, y]");
    for (int a = 0; a < 2; ++a) o.box_lo[a] = lo[a], o.box_hi[a] = hi[a];
  }
  const std::string nb = get<std::string>(cfg, "neighbors", "auto");
  if (nb == "auto") o.neighbors = Neighbors::Auto;
  else if (nb == "all_pairs") o.neighbors = Neighbors::AllPairs;
  else if (nb == "cell_list") o.neighbors = Neighbors::CellList;
  else throw InvalidInput("neighbors", -1, "must be auto, all_pairs or cell_list");
  o.cell_size = get<double>(cfg, "cell_size", 0.0);
  o.cell_capacity = get<int>(cfg, "cell_capacity", 8);
  if (cfg.contains("grid")) {
    const auto lo = get<std::vector<double>>(cfg.at("grid"), "lo", {}), hi = get<std::vector<double>>(cfg.at("grid"), "hi", {});
    if (lo.size() != 2 || hi.size() != 2) throw InvalidInput("grid", -1, "needs \"lo\": [x, y] and \"hi\": [x, y]");
    for (int a = 0; a < 2; ++a) o.grid_lo[a] = lo[a], o.grid_hi[a] = hi[a];
  }
  o.backend = parse_backend(!args.backend.empty() ? args.backend : get<std::string>(cfg, "backend", "cpu"));
  if (cfg.contains("tangents")) {
    for (const json& t : cfg.at("tangents")) {
      TangentParam tp;
      if (t == "log_stiffness") tp.kind = TangentKind::LogStiffness;
      else if (t == "damping") tp.kind = TangentKind::Damping;
      else if (t.is_object() && (t.contains("v0") || t.contains("x0"))) {
        const bool v = t.contains("v0");
        tp.kind = v ? TangentKind::InitialVelocity : TangentKind::InitialPosition;
        const auto dc = get<std::vector<int>>(t, v ? "v0" : "x0", {});
        if (dc.size() != 2) throw InvalidInput("tangents", -1, "v0/x0 need [disk, component]");
        tp.disk = dc[0];
        tp.component = dc[1];
      } else {
        throw InvalidInput("tangents", -1, "entries are \"log_stiffness\", \"damping\", {\"v0\": [d, c]} or {\"x0\": [d, c]}");
      }
      o.tangents.push_back(tp);
    }
  }

  DiskBatch batch = DiskBatch::make(B, M);
  per_disk(cfg, "radius", B, M, batch.radius, true);
  per_disk(cfg, "mass", B, M, batch.mass, true);
  per_disk(cfg, "material", B, M, batch.material, false);
  per_disk_vec(cfg, "positions", B, M, batch.x0, true);
  per_disk_vec(cfg, "velocities", B, M, batch.v0, false);
  batch.log_stiffness = per_system(cfg, "log_stiffness", B, 0.0);
  batch.damping_ratio = per_system(cfg, "damping_ratio", B, 0.0);

  LossSpec loss;
  const bool have_obs = cfg.contains("observed");
  if (have_obs) {
    const json& ob = cfg.at("observed");  // [B][F][M][2]
    const int F = o.n_frames;
    loss.observed.assign((size_t)F * 2 * M * B, 0.0);
    if (!ob.is_array() || (int)ob.size() != B) throw InvalidInput("observed", -1, "expected n_systems x n_frames x n_disks x 2");
    for (int b = 0; b < B; ++b) {
      if (!ob[b].is_array() || (int)ob[b].size() != F) throw InvalidInput("observed", b, "expected n_frames frames");
      for (int f = 0; f < F; ++f) {
        if (!ob[b][f].is_array() || (int)ob[b][f].size() != M) throw InvalidInput("observed", b, "expected n_disks per frame");
        for (int d = 0; d < M; ++d) {
          const json& p = ob[b][f][d];
          if (!p.is_array() || p.size() != 2) throw InvalidInput("observed", b, "each disk needs [x, y]");
          for (int c = 0; c < 2; ++c) loss.observed[((long)f * 2 * M + 2 * d + c) * B + b] = num(p[c], "observed", b);
        }
      }
    }
    const std::string comp = get<std::string>(cfg, "loss_components", "x");
    loss.components = comp == "x" ? 1 : comp == "y" ? 2 : comp == "xy" ? 3 : 0;
    if (!loss.components) throw InvalidInput("loss_components", -1, "must be x, y or xy");
    loss.scale = per_system(cfg, "loss_scale", B, 1.0);
  }

  json out;
  out["saltation"] = version();
  out["git_hash"] = git_hash();
  out["command"] = "disks";
  out["mode"] = mode;
  out["config"] = cfg.contains("observed") ? json("(input file, observations omitted)") : cfg;
  if (args.input != "-") out["input"] = args.input;
  std::vector<std::pair<std::string, std::string>> files;  // path, bytes

  if (mode == "rollout") {
    const RolloutResult r = rollout(batch, o, have_obs ? &loss : nullptr);
    const int F = r.n_frames, P = r.n_tangents;
    out["backend"] = backend_name(r.backend);
    out["seconds"] = r.seconds;
    out["cell_list"] = r.used_cells;
    out["status"] = r.status;
    json msgs = json::array();
    for (int s : r.status) msgs.push_back(status_message(s));
    out["status_message"] = msgs;
    if (have_obs) {
      out["loss"] = r.loss;
      out["gradient"] = r.grad;  // [p][b]
    }
    const std::vector<long> shape{B, F, M, 2}, tshape{B, F, P, M, 2};
    const auto xs = to_bfpdc(r.x, B, F, 1, M), vs = to_bfpdc(r.v, B, F, 1, M);
    std::vector<double> dxs, dvs;
    if (P > 0) dxs = to_bfpdc(r.dx, B, F, P, M), dvs = to_bfpdc(r.dv, B, F, P, M);
    if (args.format == "json") {
      out["positions"] = nested(xs, shape);
      out["velocities"] = nested(vs, shape);
      if (P > 0) {
        out["d_positions"] = nested(dxs, tshape);
        out["d_velocities"] = nested(dvs, tshape);
      }
    } else if (args.format == "npy") {
      files.push_back({args.out + "_positions.npy", npy_bytes(xs, shape)});
      files.push_back({args.out + "_velocities.npy", npy_bytes(vs, shape)});
      if (P > 0) {
        files.push_back({args.out + "_d_positions.npy", npy_bytes(dxs, tshape)});
        files.push_back({args.out + "_d_velocities.npy", npy_bytes(dvs, tshape)});
      }
    } else {
      std::ostringstream s;
      s.precision(17);
      s << "system,frame,time,disk,x,y,vx,vy";
      for (int p = 0; p < P; ++p) s << ",dx_" << p << ",dy_" << p << ",dvx_" << p << ",dvy_" << p;
      s << "\n";
      for (int b = 0; b < B; ++b)
        for (int f = 0; f < F; ++f)
          for (int d = 0; d < M; ++d) {
            s << b << "," << f << "," << o.dt * o.stride * (f + 1) << "," << d << "," << r.pos(f, b, d, 0) << "," << r.pos(f, b, d, 1)
              << "," << r.vel(f, b, d, 0) << "," << r.vel(f, b, d, 1);
            for (int p = 0; p < P; ++p)
              s << "," << r.dpos(f, p, b, d, 0) << "," << r.dpos(f, p, b, d, 1) << "," << r.dvel(f, p, b, d, 0) << ","
                << r.dvel(f, p, b, d, 1);
            s << "\n";
          }
      files.push_back({args.out + "_frames.csv", s.str()});
    }
  } else {
    if (!have_obs) throw InvalidInput("observed", -1, "mode \"fit\" needs observations");
    FitOptions fo;
    if (cfg.contains("fit")) {
      const json& f = cfg.at("fit");
      fo.lower = get<double>(f, "lower", fo.lower);
      fo.upper = get<double>(f, "upper", fo.upper);
      fo.max_iterations = get<int>(f, "max_iterations", fo.max_iterations);
      fo.epsilon = get<double>(f, "epsilon", fo.epsilon);
      fo.delta = get<double>(f, "delta", fo.delta);
      fo.memory = get<int>(f, "memory", fo.memory);
      fo.record_history = get<bool>(f, "history", false);
    }
    const FitResult fr = fit_log_stiffness(batch, o, loss, fo);
    out["backend"] = backend_name(resolve_backend(o.backend));
    out["seconds"] = fr.seconds;
    out["engine_seconds"] = fr.engine_seconds;
    out["rounds"] = fr.rounds;
    out["seconds_per_round"] = fr.rounds ? fr.seconds / fr.rounds : 0.0;
    out["seconds_per_system"] = fr.seconds / B;
    out["log_stiffness"] = fr.theta;
    std::vector<double> scale(B);
    double mean = 0, var = 0;
    for (int b = 0; b < B; ++b) mean += (scale[b] = std::exp(fr.theta[b])) / B;
    for (int b = 0; b < B; ++b) var += (scale[b] - mean) * (scale[b] - mean) / std::max(1, B - 1);
    out["stiffness_factor"] = scale;  // k / k_ref = exp(theta)
    out["stiffness_factor_mean"] = mean;
    out["stiffness_factor_sd"] = std::sqrt(var);
    out["loss"] = fr.loss;
    out["initial_loss"] = fr.initial_loss;
    out["gradient"] = fr.grad;
    out["iterations"] = fr.iterations;
    out["evaluations"] = fr.evaluations;
    json oc = json::array();
    for (int c : fr.outcome) oc.push_back(fit_outcome_name(c));
    out["outcome"] = oc;
    out["message"] = fr.message;
    if (fo.record_history) {
      out["history_log_stiffness"] = fr.history_theta;
      out["history_loss"] = fr.history_loss;
    }
    if (args.format == "csv") {
      std::ostringstream s;
      s.precision(17);
      s << "system,log_stiffness,stiffness_factor,loss,initial_loss,iterations,evaluations,outcome\n";
      for (int b = 0; b < B; ++b)
        s << b << "," << fr.theta[b] << "," << scale[b] << "," << fr.loss[b] << "," << fr.initial_loss[b] << "," << fr.iterations[b]
          << "," << fr.evaluations[b] << "," << fit_outcome_name(fr.outcome[b]) << "\n";
      files.push_back({args.out + "_fit.csv", s.str()});
    } else if (args.format == "npy") {
      files.push_back({args.out + "_log_stiffness.npy", npy_bytes(fr.theta, {B})});
    }
  }
  json listed = json::array();
  for (auto& f : files) listed.push_back(f.first);
  if (!files.empty()) out["files"] = listed;
  const std::string text = out.dump(1) + "\n";
  for (auto& f : files) write_file_atomically(f.first, f.second);
  if (args.out.empty()) std::cout << text;
  else write_file_atomically(args.out + ".json", text);
}

}  // namespace

void add_disks_command(CLI::App& app) {
  auto args = std::make_shared<DisksArgs>();
  CLI::App* sub = app.add_subcommand("disks", "Batched 2D disk-contact rollouts and stiffness fits (docs/disks.md)");
  sub->add_option("config", args->input, "JSON config file ('-' for stdin)")->required();
  sub->add_option("-o,--out", args->out, "output prefix: PREFIX.json (+ PREFIX_*.npy / PREFIX_*.csv); default: JSON on stdout");
  sub->add_option("-f,--format", args->format, "array output: json (inline), npy or csv")->check(CLI::IsMember({"json", "npy", "csv"}));
  sub->add_option("-b,--backend", args->backend, "cpu, cuda or auto (overrides the config)");
  sub->add_option("--dt", args->dt, "time step (overrides the config)");
  sub->add_option("--n-frames", args->n_frames, "frames (overrides the config)");
  sub->add_option("--stride", args->stride, "steps per frame (overrides the config)");
  sub->callback([args]() { run_disks(*args); });
}

}  // namespace saltation::cli
