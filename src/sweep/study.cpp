#include "saltation/sweep/study.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <omp.h>

#include "replay_observation.hpp"
#include "saltation/errors.hpp"
#include "saltation/io/json_object.hpp"
#include "saltation/io/npy.hpp"
#include "saltation/status.hpp"
#include "saltation/sweep/boundary.hpp"
#include "saltation/sweep/gradient_estimate.hpp"
#include "saltation/sweep/score.hpp"

namespace saltation::sweep {

using nlohmann::json;

namespace {

// ---- reading a study

int state_index(const json& v, const std::string& path, const ModelInfo& info) {
  if (v.is_number_integer()) {
    const long long k = v.get<long long>();
    if (k < 0 || k >= info.N)
      throw InvalidInput(
          path, -1,
          std::to_string(k) + " is not a state index of " + info.name + " (0.." + std::to_string(info.N - 1) + ")");
    return static_cast<int>(k);
  }
  if (v.is_string()) {
    const auto it = std::find(info.state_names.begin(), info.state_names.end(), v.get<std::string>());
    if (it != info.state_names.end()) return static_cast<int>(it - info.state_names.begin());
  }
  std::string names;
  for (const auto& s : info.state_names) names += (names.empty() ? "" : ", ") + s;
  throw InvalidInput(path, -1, "must name a state of " + info.name + " (" + names + ") or give its index");
}

int event_index(const io::JsonObject& o, const std::string& key, const Options& options) {
  const int c = o.integer(key);
  if (c < 0) throw InvalidInput(o.path(key), -1, "must be >= 0 (events count from 0)");
  if (c >= options.event_capacity)
    throw InvalidInput(o.path(key), -1,
                       "event " + std::to_string(c) + " is past the event capacity (" +
                           std::to_string(options.event_capacity) + "): raise options.event_capacity");
  return c;
}

int guard_index(const json& v, const std::string& path, const ModelInfo& info) {
  if (v.is_number_integer()) {
    const long long j = v.get<long long>();
    if (j < 0 || j >= std::min(info.M, kCountedGuards))
      throw InvalidInput(path, -1,
                         std::to_string(j) + " is not a guard index of " + info.name + " (0.." +
                             std::to_string(std::min(info.M, kCountedGuards) - 1) + ")");
    return static_cast<int>(j);
  }
  if (v.is_string()) {
    const auto it = std::find(info.guard_names.begin(), info.guard_names.end(), v.get<std::string>());
    if (it != info.guard_names.end() && it - info.guard_names.begin() < kCountedGuards)
      return static_cast<int>(it - info.guard_names.begin());
  }
  std::string names;
  for (const auto& g : info.guard_names) names += (names.empty() ? "" : ", ") + g;
  throw InvalidInput(path, -1,
                     names.empty() ? "must be a guard index of " + info.name
                                   : "must name a guard of " + info.name + " (" + names + ") or give its index");
}

Objective parse_objective(const json& v, const std::string& where, const ModelInfo& info, const Options& options) {
  const io::JsonObject o(v, where);
  Objective ob;
  ob.name = o.string("name");
  if (ob.name.empty()) throw InvalidInput(o.path("name"), -1, "must not be empty");
  std::string kind, keys;
  for (int k = 0; k < kObjectiveKinds; ++k) {
    const ObjectiveTraits t = objective_traits(static_cast<ObjectiveKind>(k));
    keys += (k ? ", " : "") + std::string(t.key);
    if (!o.has(t.key)) continue;
    if (!kind.empty())
      throw InvalidInput(where, -1, "has both \"" + kind + "\" and \"" + t.key + "\": an objective is one of them");
    kind = t.key;
    ob.kind = static_cast<ObjectiveKind>(k);
  }
  if (kind.empty()) throw InvalidInput(where, -1, "needs one of " + keys + " (docs/sweep.md)");
  // Its value is what the kind reads: an event index, a state, {event[, guard][, state][, target]},
  // a status name, or `true` when it reads nothing.
  const ObjectiveTraits t = ob.traits();
  if (t.reads_event && (t.reads_state || o.raw(kind).is_object())) {
    const io::JsonObject e = o.object(kind);
    ob.event = event_index(e, "event", options);
    if (e.has("guard")) ob.guard = guard_index(e.raw("guard"), e.path("guard"), info);
    if (t.reads_state) ob.state = state_index(e.raw("state"), e.path("state"), info);
    if (t.has_target) ob.target = e.number("target");
    e.reject_unknown();
  } else if (t.reads_event) {
    ob.event = event_index(o, kind, options);
  } else if (t.reads_state) {
    ob.state = state_index(o.raw(kind), o.path(kind), info);
  } else if (t.reads_status) {
    const std::string wanted = o.string(kind);
    ob.status = -1;
    for (int s = 0; s < status_count; ++s)
      if (wanted == status_name(static_cast<Status>(s))) ob.status = s;
    if (ob.status < 0) throw InvalidInput(o.path(kind), -1, "\"" + wanted + "\" is not a status name (docs/schema.md)");
  } else if (!o.boolean(kind, false)) {
    throw InvalidInput(o.path(kind), -1, "must be true");
  }
  const std::string gradient = o.choice("gradient", {"pathwise", "corrected"}, "corrected");
  ob.gradient = gradient == "corrected" ? GradientEstimator::Corrected : GradientEstimator::Pathwise;
  ob.bandwidth = o.number("bandwidth", 0.0);
  if (o.has("bandwidth") && !(std::isfinite(ob.bandwidth) && ob.bandwidth > 0.0))
    throw InvalidInput(o.path("bandwidth"), -1, "must be a positive time (the boundary kernel's width, docs/sweep.md)");
  ob.speed_bandwidth = o.number("speed_bandwidth", 0.0);
  if (o.has("speed_bandwidth") && !(std::isfinite(ob.speed_bandwidth) && ob.speed_bandwidth > 0.0))
    throw InvalidInput(o.path("speed_bandwidth"), -1,
                       "must be a positive speed (settling's boundary kernel's width, docs/sweep.md)");
  o.reject_unknown("an objective");
  return ob;
}

// The keys of a distribution's fields a, b, c, d, in field order.
std::vector<std::string> field_keys(DistributionKind kind) {
  switch (kind) {
    case DistributionKind::Uniform: return {"low", "high"};
    case DistributionKind::Normal: return {"mean", "sigma"};
    case DistributionKind::Lognormal: return {"mu", "sigma"};
    case DistributionKind::Truncnormal: return {"mean", "sigma", "low", "high"};
    default: return {};
  }
}

// Parameter p (`name`): a number, {"design": v} or {"dist": ...} whose fields are numbers or
// {"design": v} (appended to `designs`).
Distribution parse_parameter(const json& v, const std::string& where, int p, const std::string& name,
                             std::vector<DistributionDesign>& designs) {
  if (v.is_number()) return Distribution::fixed(v.get<double>());
  const io::JsonObject o(v, where);
  Distribution d;
  if (o.has("design") && o.has("dist")) throw InvalidInput(where, -1, "is either a design value or sampled, not both");
  if (o.has("design")) {
    d = Distribution::design(o.number("design"));
  } else if (o.has("dist")) {
    const std::string dist = o.choice("dist", {"uniform", "normal", "lognormal", "truncnormal"}, "");
    d.kind = dist == "uniform"     ? DistributionKind::Uniform
             : dist == "normal"    ? DistributionKind::Normal
             : dist == "lognormal" ? DistributionKind::Lognormal
                                   : DistributionKind::Truncnormal;
    const std::vector<std::string> keys = field_keys(d.kind);
    for (std::size_t f = 0; f < keys.size(); ++f) {
      double value;
      if (o.has(keys[f]) && o.raw(keys[f]).is_object()) {
        const io::JsonObject field(o.raw(keys[f]), o.path(keys[f]));
        value = field.number("design");
        field.reject_unknown("a distribution's design field (design)");
        designs.push_back({p, static_cast<int>(f), name + "." + keys[f]});
      } else {
        value = o.number(keys[f]);
      }
      d = with_field(d, static_cast<int>(f), value);
    }
  } else {
    throw InvalidInput(where, -1, "must be a number, {\"design\": value} or {\"dist\": ...} (docs/sweep.md)");
  }
  o.reject_unknown("a parameter");
  validate_distribution(d, where);
  return d;
}

// The distribution's mean: where the nominal trajectory puts a sampled parameter.
double mean_of(const Distribution& d) {
  switch (d.kind) {
    case DistributionKind::Fixed:
    case DistributionKind::Design: return d.a;
    case DistributionKind::Uniform: return 0.5 * (d.a + d.b);
    case DistributionKind::Normal: return d.a;
    case DistributionKind::Lognormal: return std::exp(d.a + 0.5 * d.b * d.b);
    case DistributionKind::Truncnormal: {
      const double alpha = (d.c - d.a) / d.b, beta = (d.d - d.a) / d.b;
      const double pdf_alpha = std::exp(-0.5 * alpha * alpha), pdf_beta = std::exp(-0.5 * beta * beta);
      const double mass = normal_cdf(beta) - normal_cdf(alpha);
      return d.a + d.b * (pdf_alpha - pdf_beta) / (std::sqrt(2.0 * M_PI) * mass);
    }
  }
  return d.a;
}

// Parameter p's distribution as the study gave it: a design field as {"design": value}.
json distribution_json(const Study& study, int p) {
  const Distribution& d = study.parameters[p];
  if (d.kind == DistributionKind::Fixed) return d.a;
  if (d.kind == DistributionKind::Design) return {{"design", d.a}};
  static const char* names[] = {"fixed", "design", "uniform", "normal", "lognormal", "truncnormal"};
  json j = {{"dist", names[static_cast<int>(d.kind)]}};
  const std::vector<std::string> keys = field_keys(d.kind);
  for (std::size_t f = 0; f < keys.size(); ++f) j[keys[f]] = field_value(d, static_cast<int>(f));
  for (const DistributionDesign& dd : study.distribution_designs)
    if (dd.parameter == p) j[keys[dd.field]] = {{"design", field_value(d, dd.field)}};
  return j;
}

json objective_json(const Objective& o, const ModelInfo& info) {
  const ObjectiveTraits t = o.traits();
  json value = true;
  if (t.reads_event && (t.reads_state || o.guard >= 0)) {
    value = {{"event", o.event}};
    if (o.guard >= 0) value["guard"] = info.guard_names.empty() ? json(o.guard) : json(info.guard_names[o.guard]);
    if (t.reads_state) value["state"] = info.state_names[o.state];
    if (t.has_target) value["target"] = o.target;
  } else if (t.reads_event) {
    value = o.event;
  } else if (t.reads_state) {
    value = info.state_names[o.state];
  } else if (t.reads_status) {
    value = status_name(static_cast<Status>(o.status));
  }
  return {{"name", o.name}, {t.key, value}};
}

// ---- evaluating objectives through the objective observer (saltation::observe)

int gradient_width(const Objective& o, int n_design) { return o.differentiable() ? n_design : 0; }

// The observation row of objective o's value; its design derivatives follow it (ObservationView).
int value_row(const Study& study, std::size_t o, int n_design) {
  int row = 0;
  for (std::size_t k = 0; k < o; ++k) row += 1 + gradient_width(study.objectives[k], n_design);
  return row;
}

// The input indices (into study.objectives) of each user objective; InvalidInput for a bad one.
std::vector<std::vector<std::size_t>> user_inputs(const Study& study) {
  std::set<std::string> names;
  for (const Objective& o : study.objectives) names.insert(o.name);
  std::vector<std::vector<std::size_t>> out;
  for (const UserObjective& u : study.user_objectives) {
    if (u.name.empty() || !names.insert(u.name).second)
      throw InvalidInput("user_objectives", -1, "\"" + u.name + "\" is empty or used twice");
    if (!u.f) throw InvalidInput("user_objectives." + u.name, -1, "has no function");
    std::vector<std::size_t> inputs;
    for (const std::string& input : u.inputs) {
      std::size_t k = 0;
      while (k < study.objectives.size() && study.objectives[k].name != input) ++k;
      if (k == study.objectives.size())
        throw InvalidInput("user_objectives." + u.name, -1,
                           "input \"" + input + "\" is not a built-in objective of the study");
      inputs.push_back(k);
    }
    out.push_back(std::move(inputs));
  }
  return out;
}

// A user objective has design derivatives when every input has them.
bool user_differentiable(const Study& study, const std::vector<std::size_t>& inputs) {
  for (std::size_t k : inputs)
    if (!study.objectives[k].differentiable()) return false;
  return true;
}

constexpr int kOutcomes = 3;  // status, n_events, event_count_changed (against the nominal trajectory)

// A study with design parameters records every event of its trajectories (times, states and their
// derivatives): the boundary terms and discontinuity diagnostics are read from them (boundary.hpp).
bool records_events(const Study& study) { return study.n_gradients() > 0; }

// The width of objective o's summary (built-in objectives first, then the user objectives): its
// value, its derivatives by the G design parameters when it has them, with records for a built-in
// objective the kernel terms z_d and the discontinuity indicators near_d, then per distribution
// design its score and L times it (gradient_estimate.hpp's columns).
int summary_width(const Study& study, const std::vector<std::vector<std::size_t>>& users, std::size_t o) {
  const int G = study.n_gradients(), scores = 2 * static_cast<int>(study.distribution_designs.size());
  if (o >= study.objectives.size())
    return 1 + (user_differentiable(study, users[o - study.objectives.size()]) ? G : 0) + scores;
  return 1 + gradient_width(study.objectives[o], G) + (records_events(study) ? 2 * G : 0) + scores;
}

// The parameters a study's solves differentiate by: the design parameters, then those sampled
// from a distribution with a design field (each once).
std::vector<int> sensitivity_parameters(const Study& study) {
  std::vector<int> out = study.design_parameters();
  for (const DistributionDesign& dd : study.distribution_designs)
    if (std::find(out.begin(), out.end(), dd.parameter) == out.end()) out.push_back(dd.parameter);
  return out;
}

HistogramRange padded_range(double low, double high, std::uint32_t bins) {
  if (!(std::isfinite(low) && std::isfinite(high))) return {0.0, 1.0, bins};
  if (low == high) return {low - 0.5, high + 0.5, bins};
  const double pad = 0.05 * (high - low);
  return {low - pad, high + pad, bins};
}

// A chunk holds at most this many samples: enough to keep every CPU thread and GPU lane busy,
// and the memory of a study stays the same however many samples it has.
constexpr std::uint64_t kMaxChunkSamples = 65536;

// Host and device bytes one sample takes: per trajectory (rows_per_sample of them) its parameters
// and its observation (status, n_events and the objective rows); with records, the plain sample's
// every event and derivative besides.
std::uint64_t bytes_per_sample(const ModelInfo& info, const Study& study, int n_design, int capacity, int rows) {
  const std::uint64_t N = info.N, P = info.P, C = capacity;
  const std::uint64_t outputs = value_row(study, study.objectives.size(), n_design);
  const std::uint64_t observed = (8 * P + 4 + 4 + 8 * outputs) * rows;
  if (!records_events(study)) return observed;
  return observed + 4 + 8 + 8 * N + 4 + C * (8 + 4 + 4 + 16 * N) + 8 * N * P + 8 * C * P + 8 * C * N * P;
}

}  // namespace

std::vector<int> Study::design_parameters() const {
  std::vector<int> out;
  for (std::size_t p = 0; p < parameters.size(); ++p)
    if (parameters[p].kind == DistributionKind::Design) out.push_back(static_cast<int>(p));
  return out;
}

std::vector<std::string> Study::gradient_names(const ModelInfo& info) const {
  std::vector<std::string> out;
  for (int p : design_parameters()) out.push_back(info.param_names[p]);
  for (const DistributionDesign& dd : distribution_designs) out.push_back(dd.name);
  return out;
}

std::vector<double> Study::gradient_values() const {
  std::vector<double> out;
  for (int p : design_parameters()) out.push_back(parameters[p].a);
  for (const DistributionDesign& dd : distribution_designs)
    out.push_back(field_value(parameters[dd.parameter], dd.field));
  return out;
}

void Study::set_gradient_values(const std::vector<double>& values) {
  std::size_t next = 0;
  for (int p : design_parameters()) parameters[p] = Distribution::design(values[next++]);
  for (const DistributionDesign& dd : distribution_designs)
    parameters[dd.parameter] = with_field(parameters[dd.parameter], dd.field, values[next++]);
}

Study parse_study(const json& j, const ModelInfo& info) {
  const io::JsonObject top(j, "");
  Study s;
  top.raw("model");  // read by io::parse_model_choice
  if (top.has("config")) top.raw("config");
  s.options = io::options_from_json(top.object("options"));
  s.options.mark_invalid_rows = true;
  (void)normalize_options(s.options);  // option errors now, naming the option
  const io::JsonObject params = top.object("parameters");
  for (int p = 0; p < info.P; ++p) {
    const std::string& name = info.param_names[p];
    if (!params.has(name))
      throw InvalidInput(
          params.path(name), -1,
          "is required: a number, {\"design\": value} or {\"dist\": ...} for every parameter of " + info.name);
    s.parameters.push_back(parse_parameter(params.raw(name), params.path(name), p, name, s.distribution_designs));
  }
  params.reject_unknown("the parameters of model " + info.name);
  const json& objectives = top.raw("objectives");
  if (!objectives.is_array() || objectives.empty())
    throw InvalidInput("objectives", -1, "must be a non-empty array of objectives (docs/sweep.md)");
  std::set<std::string> names;
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    s.objectives.push_back(parse_objective(objectives[k], "objectives[" + std::to_string(k) + "]", info, s.options));
    if (!names.insert(s.objectives.back().name).second)
      throw InvalidInput("objectives[" + std::to_string(k) + "].name", -1,
                         "\"" + s.objectives.back().name + "\" is used twice");
  }
  const long long samples = top.integer64("samples", 0);
  if (samples <= 0) throw InvalidInput("samples", -1, "must be a positive integer");
  s.samples = static_cast<std::uint64_t>(samples);
  const long long seed = top.integer64("seed", 0);
  if (seed < 0) throw InvalidInput("seed", -1, "must be >= 0");
  s.seed = static_cast<std::uint64_t>(seed);
  s.sobol = top.boolean("sobol", false);
  s.sampling = top.choice("sampling", {"random", "scrambled_sobol"}, "random") == "random" ? Sampling::Random
                                                                                           : Sampling::ScrambledSobol;
  if (s.sampling == Sampling::ScrambledSobol && s.samples > ScrambledSobol::max_points)
    throw InvalidInput(
        "samples", -1,
        "scrambled_sobol sampling has at most 2^32 points: use fewer samples or \"sampling\": \"random\"");
  s.sobol_resamples = top.integer("sobol_resamples", s.sobol_resamples);
  if (s.sobol_resamples < 0 || s.sobol_resamples > 10000)
    throw InvalidInput("sobol_resamples", -1, "must be in [0, 10000]");
  if (s.sobol && count_factors(s.parameters.data(), static_cast<std::uint32_t>(s.parameters.size())) == 0)
    throw InvalidInput("sobol", -1, "needs at least one sampled parameter");
  if (top.has("gradient_check")) {
    const io::JsonObject check = top.object("gradient_check");
    s.gradient_check_delta = check.number("delta");
    if (!(std::isfinite(s.gradient_check_delta) && s.gradient_check_delta > 0.0))
      throw InvalidInput(check.path("delta"), -1, "must be a positive step of the design parameters");
    check.reject_unknown("gradient_check (delta)");
    if (s.n_gradients() == 0)
      throw InvalidInput("gradient_check", -1, "needs a design parameter ({\"design\": value}) to differentiate by");
    for (const DistributionDesign& dd : s.distribution_designs)
      for (double sign : {-1.0, 1.0}) {
        const Distribution& d = s.parameters[dd.parameter];
        validate_distribution(with_field(d, dd.field, field_value(d, dd.field) + sign * s.gradient_check_delta),
                              "gradient_check.delta (" + dd.name + " moved by it)");
      }
  }
  if (top.has("optimize")) top.raw("optimize");  // read by parse_robust_design (robust_design.hpp)
  top.reject_unknown(
      "a study (model, config, options, parameters, objectives, samples, seed, sobol, sobol_resamples, sampling, "
      "gradient_check, optimize)");
  return s;
}

// ---- the accumulator

StudyAccumulator::StudyAccumulator(const Study& study, int capacity, const std::vector<HistogramRange>& ranges) {
  SummaryOptions outcomes;
  outcomes.n_outputs = kOutcomes;
  outcomes.histograms = {{-0.5, status_count - 0.5, static_cast<std::uint32_t>(status_count)},
                         {-0.5, capacity + 0.5, static_cast<std::uint32_t>(capacity + 1)},
                         {-0.5, 1.5, 2}};
  outcomes_.emplace_back(outcomes);
  const int n_design = study.n_gradients();
  const auto users = user_inputs(study);
  const std::size_t n_objectives = study.objectives.size() + users.size();
  std::size_t next = 0;
  for (std::size_t o = 0; o < n_objectives; ++o) {
    SummaryOptions so;
    so.n_outputs = summary_width(study, users, o);
    so.histograms.assign(ranges.begin() + next, ranges.begin() + next + so.n_outputs);
    next += so.n_outputs;
    objectives_.emplace_back(so);
  }
  // The referee's pairs L(theta + delta e_d), L(theta - delta e_d): moments only.
  if (study.gradient_check_delta > 0.0) {
    SummaryOptions so;
    so.n_outputs = 2 * n_design;
    referee_.assign(n_objectives, OutputSummary(so));
  }
  if (study.sobol) {
    const int k =
        static_cast<int>(count_factors(study.parameters.data(), static_cast<std::uint32_t>(study.parameters.size())));
    sobol_.assign(n_objectives, SobolAccumulator(k, study.seed, study.sobol_resamples));
  }
}

int StudyAccumulator::input_width() const {
  int w = outcomes().input_width();
  for (const auto& o : objectives_) w += o.input_width();
  for (const auto& r : referee_) w += r.input_width();
  for (const auto& s : sobol_) w += s.input_width();
  return w;
}

void StudyAccumulator::add(std::uint64_t index, const double* values) {
  outcomes_.front().add(index, values);
  values += outcomes().input_width();
  for (auto& o : objectives_) {
    o.add(index, values);
    values += o.input_width();
  }
  for (auto& r : referee_) {
    r.add(index, values);
    values += r.input_width();
  }
  for (auto& s : sobol_) {
    s.add(index, values);
    values += s.input_width();
  }
}

void StudyAccumulator::merge(const StudyAccumulator& later) {
  outcomes_.front().merge(later.outcomes_.front());
  for (std::size_t o = 0; o < objectives_.size(); ++o) objectives_[o].merge(later.objectives_[o]);
  for (std::size_t o = 0; o < referee_.size(); ++o) referee_[o].merge(later.referee_[o]);
  for (std::size_t o = 0; o < sobol_.size(); ++o) sobol_[o].merge(later.sobol_[o]);
}

json StudyAccumulator::to_json() const {
  json objectives = json::array(), referee = json::array(), sobol = json::array();
  for (const auto& o : objectives_) objectives.push_back(o.to_json());
  for (const auto& r : referee_) referee.push_back(r.to_json());
  for (const auto& s : sobol_) sobol.push_back(s.to_json());
  return {{"outcomes", outcomes().to_json()}, {"objectives", objectives}, {"referee", referee}, {"sobol", sobol}};
}

StudyAccumulator StudyAccumulator::from_json(const json& j) {
  StudyAccumulator a;
  a.outcomes_.push_back(OutputSummary::from_json(j.at("outcomes")));
  for (const auto& o : j.at("objectives")) a.objectives_.push_back(OutputSummary::from_json(o));
  for (const auto& r : j.at("referee")) a.referee_.push_back(OutputSummary::from_json(r));
  for (const auto& s : j.at("sobol")) a.sobol_.push_back(SobolAccumulator::from_json(s));
  return a;
}

// ---- running

namespace {

// The parameter rows of a study: Philox draws, or scrambled Sobol' points over the factors (A's
// in dimensions 0 .. k - 1, B's in k .. 2k - 1) with the Philox draw as their low bits. Matrix
// SaltelliA of sample j is the plain Monte Carlo row j.
class Sampler {
 public:
  explicit Sampler(const Study& study)
      : study_(study),
        n_factors_(count_factors(study.parameters.data(), static_cast<std::uint32_t>(study.parameters.size()))) {
    if (study.sampling == Sampling::ScrambledSobol) sobol_.emplace(n_factors_ * (study.sobol ? 2 : 1), study.seed);
  }
  void row(std::uint64_t j, std::uint32_t matrix, double* theta) const {
    const auto n_params = static_cast<std::uint32_t>(study_.parameters.size());
    if (!sobol_) return saltelli_parameters(study_.parameters.data(), n_params, study_.seed, j, matrix, theta);
    saltelli_row(
        study_.parameters.data(), n_params, matrix,
        [&](bool from_b, std::uint32_t factor, std::uint32_t p) {
          const Stream stream = from_b ? Stream::SaltelliB : Stream::MonteCarlo;
          return sobol_->uniform(j, from_b ? n_factors_ + factor : factor, philox_bits(study_.seed, stream, j, p));
        },
        theta);
  }

 private:
  const Study& study_;
  std::uint32_t n_factors_;
  std::optional<ScrambledSobol> sobol_;
};

// A chunk's trajectories: their observation and, when the study records events, their records.
struct Trajectories {
  Batch batch;  // their parameters
  Observation obs;
  Result record;
};

// The rows of one chunk and what becomes of them: parameters drawn from the counter-based streams,
// one solve (each trajectory reduced to its objectives on the fly, or recorded when the study
// needs its events), folded into the SoA outputs the block tree consumes.
struct Evaluator {
  const AnyModel& model;
  const Study& study;
  Options options;
  Backend backend;
  std::vector<int> design;  // the solves' sensitivity parameters (sensitivity_parameters)
  int n_factors = 0;
  int nominal_events = 0;
  std::vector<double> bandwidths{};        // per built-in objective, with records (run_pilot)
  std::vector<double> speed_bandwidths{};  // the same for settling's kernel, with options.v_stop > 0
  Sampler sampler{study};
  std::vector<std::vector<std::size_t>> users = user_inputs(study);
  // The referee's samplers of the distribution designs: per design, the study with its field
  // moved by + and - delta (the same uniforms: common random numbers).
  std::vector<std::shared_ptr<const Study>> moved_studies{};
  std::vector<Sampler> moved_samplers{};

  int saltelli_rows() const { return study.sobol ? n_factors + 2 : 1; }
  int referee_rows() const { return study.gradient_check_delta > 0.0 ? 2 * n_gradients() : 0; }
  int rows_per_sample() const { return saltelli_rows() + referee_rows(); }
  bool records() const { return records_events(study); }
  bool settles() const { return records() && options.v_stop > 0.0; }

  int n_design() const { return static_cast<int>(design.size()); }
  int n_gradients() const { return study.n_gradients(); }
  int n_model_designs() const { return n_gradients() - static_cast<int>(study.distribution_designs.size()); }
  int value_row(std::size_t o) const { return sweep::value_row(study, o, n_design()); }
  std::size_t n_objectives() const { return study.objectives.size() + users.size(); }

  // Gradient parameter j's model parameter (the one its derivatives are taken by), and its slope
  // at batch row b: 1 for a design parameter, dx/dtheta for a distribution's design field.
  int gradient_parameter(int j) const {
    return j < n_model_designs() ? design[j] : study.distribution_designs[j - n_model_designs()].parameter;
  }
  double slope(const Trajectories& t, std::size_t b, int j) const {
    if (j < n_model_designs()) return 1.0;
    const DistributionDesign& dd = study.distribution_designs[j - n_model_designs()];
    return sample_slope(study.parameters[dd.parameter], dd.field, t.batch.at(b, dd.parameter));
  }
  // The observation row of objective o's derivative by gradient parameter j.
  int derivative_row(std::size_t o, int j) const {
    const int p = gradient_parameter(j);
    return value_row(o) + 1 + static_cast<int>(std::find(design.begin(), design.end(), p) - design.begin());
  }

  // What the accumulators take per sample: each objective's summary columns (summary_width).
  int objective_width() const {
    int w = 0;
    for (std::size_t o = 0; o < n_objectives(); ++o) w += summary_width(study, users, o);
    return w;
  }
  // Batch row b's columns of every objective's summary: a built-in objective's value and design
  // derivatives as observed (by the chain rule through the sample for a distribution's design),
  // with records its boundary terms; the user objectives by the chain rule through their inputs;
  // then each objective's scores and score-weighted values.
  void objective_rows(const Trajectories& t, std::size_t b, double* out) const {
    const int G = n_gradients();
    std::vector<double> slopes(G);
    std::vector<int> parameters(G);
    for (int j = 0; j < G; ++j) slopes[j] = slope(t, b, j), parameters[j] = gradient_parameter(j);
    std::vector<double> speeds, speed_slopes;
    if (settles()) event_speeds(t, b, parameters, speeds, speed_slopes);
    for (std::size_t o = 0; o < study.objectives.size(); ++o) {
      const double value = t.obs.value(b, value_row(o));
      *out++ = value;
      if (study.objectives[o].differentiable())
        for (int j = 0; j < G; ++j) *out++ = slopes[j] * t.obs.value(b, derivative_row(o, j));
      if (records()) {
        const Settling settling =
            settles() ? Settling{options.v_stop, speed_bandwidths[o], speeds.data(), speed_slopes.data()} : Settling{};
        boundary_terms(t.record, b, study.objectives[o], parameters, slopes.data(), options.t_final, bandwidths[o],
                       settling, out, out + G);
        out += 2 * G;
      }
      out = put_scores(t, b, value, out);
    }
    std::vector<double> df_dy;
    for (std::size_t u = 0; u < users.size(); ++u) {
      const auto& inputs = users[u];
      const double value = user_value(t.obs, b, u, df_dy);
      *out++ = value;
      if (user_differentiable(study, inputs))
        for (int j = 0; j < G; ++j) {
          double g = 0.0;
          for (std::size_t k = 0; k < inputs.size(); ++k) g += df_dy[k] * t.obs.value(b, derivative_row(inputs[k], j));
          *out++ = slopes[j] * g;
        }
      out = put_scores(t, b, value, out);
    }
  }
  // The normal speeds of plain sample b's recorded events and their derivatives by `parameters`.
  void event_speeds(const Trajectories& t, std::size_t b, const std::vector<int>& parameters,
                    std::vector<double>& speeds, std::vector<double>& slopes) const {
    speeds.assign(static_cast<std::size_t>(t.record.C), 0.0);
    slopes.assign(static_cast<std::size_t>(t.record.C) * parameters.size(), 0.0);
    model.impact_speeds(t.record, b, RowParams{&t.batch.theta[b], t.batch.n}, parameters, speeds.data(), slopes.data());
  }
  // Per distribution design: its score at the sample and L times it (0 where it has none).
  double* put_scores(const Trajectories& t, std::size_t b, double value, double* out) const {
    for (const DistributionDesign& dd : study.distribution_designs) {
      const Distribution& d = study.parameters[dd.parameter];
      const double s = has_score(d, dd.field) ? score(d, dd.field, t.batch.at(b, dd.parameter)) : 0.0;
      *out++ = s;
      *out++ = value * s;
    }
    return out;
  }
  // User objective u's value at batch row b; its derivatives by its inputs in df_dy.
  double user_value(const Observation& obs, std::size_t b, std::size_t u, std::vector<double>& df_dy) const {
    const auto& inputs = users[u];
    std::vector<double> y(inputs.size());
    df_dy.assign(inputs.size(), 0.0);
    for (std::size_t j = 0; j < inputs.size(); ++j) y[j] = obs.value(b, value_row(inputs[j]));
    return study.user_objectives[u].f(y.data(), df_dy.data());
  }
  // Objective o's value at batch row b (built-in objectives first).
  double value(const Observation& obs, std::size_t b, std::size_t o) const {
    std::vector<double> df_dy;
    return o < study.objectives.size() ? obs.value(b, value_row(o))
                                       : user_value(obs, b, o - study.objectives.size(), df_dy);
  }

  // Observes samples [first, first + count): row r of sample i at batch index r * count + i, r the
  // Saltelli matrix (0: A, the plain Monte Carlo sample; 1: B; 2 + f: AB_f), then the referee's
  // rows saltelli_rows() + 2 j (+ 1): row A with gradient parameter j moved by + (-) delta.
  Trajectories observe(std::uint64_t first, std::uint64_t count) const {
    const int P = model.info().P;
    Trajectories t;
    t.batch = Batch(count * rows_per_sample(), P);
    std::vector<double> theta(P);
    for (int r = 0; r < rows_per_sample(); ++r)
      for (std::uint64_t i = 0; i < count; ++i) {
        const int referee = r - saltelli_rows(), j = referee / 2;
        if (referee >= 0 && j >= n_model_designs()) {
          moved_samplers[referee - 2 * n_model_designs()].row(first + i, SaltelliA, theta.data());
        } else {
          sampler.row(first + i, static_cast<std::uint32_t>(referee < 0 ? r : 0), theta.data());
          if (referee >= 0)
            theta[design[j]] += referee % 2 == 0 ? study.gradient_check_delta : -study.gradient_check_delta;
        }
        for (int p = 0; p < P; ++p) t.batch.at(r * count + i, p) = theta[p];
      }
    std::vector<ObjectiveSpec> specs;
    for (const Objective& o : study.objectives) specs.push_back(o);
    if (!records()) {
      t.obs = model.observe(t.batch, options, std::move(specs), design, backend);
      return t;
    }
    // Only the plain samples (rows A) feed the boundary terms: they alone are recorded, the
    // Saltelli and referee rows are observed as before.
    const Batch plain = rows_of(t.batch, 0, count);
    t.record = model.solve(plain, options, backend);
    t.obs = replay_observation(t.record, specs, design);
    if (rows_per_sample() > 1) {
      const Batch rest = rows_of(t.batch, count, t.batch.n);
      append_observation(t.obs, model.observe(rest, options, std::move(specs), design, backend));
    }
    return t;
  }
  // Rows [first, end) of a batch.
  static Batch rows_of(const Batch& batch, std::size_t first, std::size_t end) {
    Batch out(end - first, batch.P);
    for (std::size_t b = first; b < end; ++b)
      for (int p = 0; p < batch.P; ++p) out.at(b - first, p) = batch.at(b, p);
    return out;
  }
  // `later`'s trajectories after `obs`'s (the same objectives and design).
  static void append_observation(Observation& obs, const Observation& later) {
    Observation both(obs.n + later.n, obs.objectives, obs.design);
    for (int row = 0; row < obs.n_outputs; ++row)
      for (std::size_t i = 0; i < both.n; ++i)
        both.values[row * both.n + i] = i < obs.n ? obs.value(i, row) : later.value(i - obs.n, row);
    for (std::size_t i = 0; i < both.n; ++i) {
      both.status[i] = i < obs.n ? obs.status[i] : later.status[i - obs.n];
      both.n_events[i] = i < obs.n ? obs.n_events[i] : later.n_events[i - obs.n];
    }
    obs = std::move(both);
  }

  // The block tree's inputs of samples [first, first + count) from their trajectories, in the
  // accumulator's order: outcomes, objectives, the referee's pairs, the Sobol rows.
  void fold(const Trajectories& t, std::uint64_t count, double* out) const {
    std::vector<double> rows(objective_width());
    std::size_t row = 0;
    auto put = [&](std::uint64_t i, double v) { out[row++ * count + i] = v; };
    for (std::uint64_t i = 0; i < count; ++i) {
      row = 0;
      put(i, t.obs.status[i]);
      put(i, t.obs.n_events[i]);
      put(i, t.obs.n_events[i] != nominal_events ? 1.0 : 0.0);
      objective_rows(t, i, rows.data());
      for (double v : rows) put(i, v);
      if (referee_rows() > 0)
        for (std::size_t o = 0; o < n_objectives(); ++o)
          for (int r = saltelli_rows(); r < rows_per_sample(); ++r) put(i, value(t.obs, r * count + i, o));
      if (study.sobol)
        for (std::size_t o = 0; o < n_objectives(); ++o)
          for (int r = 0; r < saltelli_rows(); ++r) put(i, value(t.obs, r * count + i, o));
    }
  }
};

// Per-sample arrays of a shard, streamed in sample order (the reduction runs its chunks in order).
class PerSampleFiles {
 public:
  PerSampleFiles(const std::string& prefix, const Study& study, const ModelInfo& info, std::uint64_t rows) {
    const long n = static_cast<long>(rows);
    files_.push_back(
        std::make_unique<io::NpyWriter>(prefix + "_theta.npy", io::DType::F64, std::vector<long>{n, info.P}));
    files_.push_back(std::make_unique<io::NpyWriter>(prefix + "_status.npy", io::DType::I32, std::vector<long>{n}));
    files_.push_back(std::make_unique<io::NpyWriter>(prefix + "_n_events.npy", io::DType::I32, std::vector<long>{n}));
    for (const Objective& o : study.objectives)
      files_.push_back(
          std::make_unique<io::NpyWriter>(prefix + "_" + o.name + ".npy", io::DType::F64, std::vector<long>{n}));
    if (study.sobol) {
      // SALib's layout (saltelli.sample with calc_second_order=False, then sobol.analyze): per base
      // sample the rows A, AB_1 .. AB_k, B, over the k sampled parameters.
      for (int p = 0; p < info.P; ++p)
        if (study.parameters[p].is_random()) factors_.push_back(p);
      const long k = static_cast<long>(factors_.size()), salib_rows = n * (k + 2);
      salib_.push_back(
          std::make_unique<io::NpyWriter>(prefix + "_salib_X.npy", io::DType::F64, std::vector<long>{salib_rows, k}));
      for (const Objective& o : study.objectives)
        salib_.push_back(std::make_unique<io::NpyWriter>(prefix + "_salib_Y_" + o.name + ".npy", io::DType::F64,
                                                         std::vector<long>{salib_rows}));
    }
  }
  void append(const Evaluator& ev, const Observation& obs, std::uint64_t first, std::uint64_t count) {
    const int P = ev.model.info().P;
    std::vector<double> theta(count * P), values(count);
    std::vector<int> status(obs.status.begin(), obs.status.begin() + count),
        events(obs.n_events.begin(), obs.n_events.begin() + count);
    // Row A of each sample is the plain Monte Carlo draw: the first `count` rows of the batch.
    for (std::uint64_t i = 0; i < count; ++i)
      for (int p = 0; p < P; ++p) theta[i * P + p] = row_theta_[p * row_stride_ + i];
    files_[0]->append(theta.data(), theta.size());
    files_[1]->append(status.data(), status.size());
    files_[2]->append(events.data(), events.size());
    for (std::size_t o = 0; o < ev.study.objectives.size(); ++o) {
      for (std::uint64_t i = 0; i < count; ++i) values[i] = obs.value(i, ev.value_row(o));
      files_[3 + o]->append(values.data(), values.size());
    }
    if (!salib_.empty()) append_salib(ev, obs, first, count);
  }
  // Batch row r * count + i holds Saltelli matrix r of sample first + i (0: A, 1: B, 2 + f: AB_f).
  void append_salib(const Evaluator& ev, const Observation& obs, std::uint64_t first, std::uint64_t count) {
    const int P = ev.model.info().P, k = static_cast<int>(factors_.size());
    std::vector<std::uint32_t> order{0};
    for (int f = 0; f < k; ++f) order.push_back(static_cast<std::uint32_t>(2 + f));
    order.push_back(1);
    std::vector<double> theta(P), x, y;
    for (std::uint64_t i = 0; i < count; ++i)
      for (std::uint32_t r : order) {
        ev.sampler.row(first + i, r, theta.data());
        for (int p : factors_) x.push_back(theta[p]);
      }
    salib_[0]->append(x.data(), x.size());
    for (std::size_t o = 0; o < ev.study.objectives.size(); ++o) {
      y.clear();
      for (std::uint64_t i = 0; i < count; ++i)
        for (std::uint32_t r : order) y.push_back(obs.value(r * count + i, ev.value_row(o)));
      salib_[1 + o]->append(y.data(), y.size());
    }
  }
  void set_theta(const Batch& batch) {
    row_theta_ = batch.theta.data();
    row_stride_ = batch.n;
  }
  void commit() {
    for (auto& f : files_) f->commit();
    for (auto& f : salib_) f->commit();
  }

 private:
  std::vector<std::unique_ptr<io::NpyWriter>> files_, salib_;
  std::vector<int> factors_;  // the sampled parameters: SALib's factors
  const double* row_theta_ = nullptr;
  std::size_t row_stride_ = 0;
};

// What a merge checks: the study, its options (not the thread count), the nominal trajectory, and
// what the pilot fixed (each objective's estimator and bandwidth).
json study_header(const Evaluator& ev, const Batch& nominal_row, const Observation& nominal) {
  const ModelInfo& info = ev.model.info();
  const Study& study = ev.study;
  // The thread count never changes a result: left out, so shards run with different --threads merge.
  json options_json = io::options_to_json(ev.options);
  options_json.erase("threads");
  json parameters = json::object();
  for (int p = 0; p < info.P; ++p) parameters[info.param_names[p]] = distribution_json(study, p);
  json objectives = json::array();
  json gradients = json::array();
  for (int p : study.design_parameters()) gradients.push_back({{"name", info.param_names[p]}});
  for (const DistributionDesign& dd : study.distribution_designs)
    gradients.push_back({{"name", dd.name}, {"score", has_score(study.parameters[dd.parameter], dd.field)}});
  for (std::size_t o = 0; o < study.objectives.size(); ++o) {
    objectives.push_back(objective_json(study.objectives[o], info));
    if (!ev.records()) continue;
    objectives.back()["gradient"] = estimator_name(study.objectives[o].gradient);
    objectives.back()["bandwidth"] = ev.bandwidths[o];
    if (ev.settles()) objectives.back()["speed_bandwidth"] = ev.speed_bandwidths[o];
  }
  for (const UserObjective& u : study.user_objectives)
    objectives.push_back({{"name", u.name}, {"user_inputs", u.inputs}});
  std::vector<double> nominal_theta(nominal_row.theta.begin(), nominal_row.theta.end());
  json header = {{"model", info.name},
                 {"config", info.config},
                 {"state_names", info.state_names},
                 {"param_names", info.param_names},
                 {"options", options_json},
                 {"parameters", parameters},
                 {"objectives", objectives},
                 {"gradient_parameters", gradients},
                 {"samples", study.samples},
                 {"seed", study.seed},
                 {"sobol", study.sobol},
                 {"sampling", study.sampling == Sampling::Random ? "random" : "scrambled_sobol"},
                 {"block_size", study.block_size},
                 {"nominal",
                  {{"theta", nominal_theta},
                   {"status", status_name(static_cast<Status>(nominal.status[0]))},
                   {"n_events", nominal.n_events[0]}}}};
  if (study.gradient_check_delta > 0.0) header["gradient_check"] = {{"delta", study.gradient_check_delta}};
  if (!info.definition_digest.empty()) header["model_definition"] = info.definition_digest;
  return header;
}

// ---- run_study's steps

// The evaluator of a checked study: the design parameters, the options of its solves
// (sensitivities whenever there is something to differentiate by).
Evaluator make_evaluator(const AnyModel& model, const Study& study, const StudyRun& run) {
  const ModelInfo& info = model.info();
  if (static_cast<int>(study.parameters.size()) != info.P)
    throw InvalidInput("parameters", -1,
                       "the study has " + std::to_string(study.parameters.size()) + " parameters, model " + info.name +
                           " has " + std::to_string(info.P));
  if (run.n_shards < 1 || run.shard < 0 || run.shard >= run.n_shards)
    throw InvalidInput("shard", -1, "must be i/N with 0 <= i < N");
  Evaluator ev{model, study, study.options, model.backend_for(run.backend, study.options),
               sensitivity_parameters(study)};
  ev.n_factors = static_cast<int>(count_factors(study.parameters.data(), static_cast<std::uint32_t>(info.P)));
  ev.options.sensitivities = !ev.design.empty();
  if (study.gradient_check_delta > 0.0)
    for (const DistributionDesign& dd : study.distribution_designs)
      for (double sign : {1.0, -1.0}) {
        auto moved = std::make_shared<Study>(study);
        Distribution& d = moved->parameters[dd.parameter];
        d = with_field(d, dd.field, field_value(d, dd.field) + sign * study.gradient_check_delta);
        ev.moved_studies.push_back(moved);
        ev.moved_samplers.emplace_back(*moved);
      }
  ev.options.mark_invalid_rows = true;
  ev.options = normalize_options(ev.options);
  return ev;
}

// The nominal trajectory's row: design values, sampled parameters at their means.
Batch nominal_row(const Study& study, int P) {
  Batch row(1, P);
  for (int p = 0; p < P; ++p) row.at(0, p) = mean_of(study.parameters[p]);
  return row;
}

// The pilot, samples 0 .. pilot - 1 (the same for every shard, chunking and rank), fixes the
// boundary kernels' bandwidths (into ev) and returns the histogram ranges of every output.
std::vector<HistogramRange> run_pilot(Evaluator& ev) {
  Study plain_study = ev.study;
  plain_study.sobol = false;
  plain_study.gradient_check_delta = 0.0;
  Evaluator plain{ev.model, plain_study, ev.options, ev.backend, ev.design, ev.n_factors, ev.nominal_events};
  const std::uint64_t pilot = std::min(ev.study.pilot_samples, ev.study.samples);
  const Trajectories t = plain.observe(0, pilot);
  if (ev.records())
    for (const Objective& o : ev.study.objectives)
      ev.bandwidths.push_back(o.bandwidth > 0.0 ? o.bandwidth
                                                : pilot_bandwidth(t.record, o, ev.options.t_final, ev.study.samples));
  if (ev.settles()) {
    std::vector<std::vector<double>> speeds(pilot);
    std::vector<double> no_slopes;
    for (std::uint64_t i = 0; i < pilot; ++i) ev.event_speeds(t, i, {}, speeds[i], no_slopes);
    for (const Objective& o : ev.study.objectives)
      ev.speed_bandwidths.push_back(
          o.speed_bandwidth > 0.0 ? o.speed_bandwidth
                                  : pilot_speed_bandwidth(t.record, speeds, o, ev.options.v_stop, ev.study.samples));
  }
  plain.bandwidths = ev.bandwidths;
  plain.speed_bandwidths = ev.speed_bandwidths;
  const int width = plain.objective_width();
  std::vector<double> rows(static_cast<std::size_t>(pilot) * width);
  for (std::uint64_t i = 0; i < pilot; ++i) plain.objective_rows(t, i, rows.data() + i * width);
  std::vector<HistogramRange> ranges;
  for (int output = 0; output < width; ++output) {
    double low = HUGE_VAL, high = -HUGE_VAL;
    for (std::uint64_t i = 0; i < pilot; ++i) {
      const double v = rows[i * width + output];
      if (std::isfinite(v)) low = std::min(low, v), high = std::max(high, v);
    }
    ranges.push_back(padded_range(low, high, 64));
  }
  return ranges;
}

// The blocks this shard runs: its share of the layout, after the kept partial's when resuming
// (checked to belong to this study: same header).
BlockRange shard_blocks(const Study& study, const StudyRun& run, const json& header) {
  const std::uint64_t n_blocks = BlockLayout{study.samples, study.block_size}.n_blocks();
  BlockRange blocks{n_blocks * run.shard / run.n_shards, n_blocks * (run.shard + 1) / run.n_shards};
  if (blocks.first >= blocks.end)
    throw InvalidInput("shard", -1,
                       "shard " + std::to_string(run.shard) + " of " + std::to_string(run.n_shards) +
                           " has no samples: " + std::to_string(n_blocks) + " blocks of " +
                           std::to_string(study.block_size) + " samples; use fewer shards");
  if ((run.keep_partial || run.resume) && !run.per_sample_prefix.empty())
    throw InvalidInput("per_sample", -1,
                       "per-sample files cannot be kept from a stopped run or resumed; run without them");
  if (!run.resume) return blocks;
  const BlockRange kept = run.resume->partial.blocks;
  if (run.resume->header != header)
    throw InvalidInput("resume", -1,
                       "the kept partial belongs to another study: its header (model, parameters, "
                       "objectives, options, samples, seed or nominal trajectory) differs");
  if (kept.first != blocks.first || kept.end < blocks.first || kept.end >= blocks.end)
    throw InvalidInput("resume", -1,
                       "the kept partial covers blocks [" + std::to_string(kept.first) + ", " +
                           std::to_string(kept.end) + "), this shard [" + std::to_string(blocks.first) + ", " +
                           std::to_string(blocks.end) + "): nothing of it is left to run after it");
  blocks.first = kept.end;
  return blocks;
}

// Samples per chunk: as many as the memory budget holds, at most kMaxChunkSamples, in whole
// blocks where the budget allows (those fold in parallel, and on the device).
std::uint64_t chunk_samples(const Evaluator& ev, const StudyRun& run) {
  const std::uint64_t budget = run.memory_budget ? run.memory_budget : io::default_memory_budget(ev.backend);
  const std::uint64_t per_sample =
      bytes_per_sample(ev.model.info(), ev.study, ev.n_design(), ev.options.event_capacity, ev.rows_per_sample());
  const std::uint64_t fitting = std::min<std::uint64_t>(io::chunk_rows(budget, per_sample), kMaxChunkSamples);
  const std::uint64_t block = ev.study.block_size;
  return fitting >= block ? fitting / block * block : fitting;
}

// Folds the shard's blocks into the tree: one worker (the solver parallelises each chunk itself,
// and per-sample files stream in order); a chunk's whole blocks fold in parallel, on the device
// with the CUDA backend, else on the OpenMP threads the solve uses. A run stopped early hands the
// blocks it completed to run.keep_partial first.
Partial<StudyAccumulator> fold_shard(const Evaluator& ev, const StudyRun& run, const StudyAccumulator& empty,
                                     BlockRange blocks, const json& header) {
  const Study& study = ev.study;
  const ModelInfo& info = ev.model.info();
  const BlockLayout layout{study.samples, study.block_size};
  const std::uint64_t first_sample = blocks.first * layout.block_size;
  const std::uint64_t shard_samples = std::min(blocks.end * layout.block_size, study.samples) - first_sample;
  std::unique_ptr<PerSampleFiles> files;
  if (!run.per_sample_prefix.empty())
    files = std::make_unique<PerSampleFiles>(run.per_sample_prefix, study, info, shard_samples);
  std::uint64_t done = 0;
  auto fill = [&](std::uint64_t first, std::uint64_t count, double* out) {
    const Trajectories t = ev.observe(first, count);
    ev.fold(t, count, out);
    if (files) {
      Batch rows(count, info.P);
      std::vector<double> theta(info.P);
      for (std::uint64_t i = 0; i < count; ++i) {
        ev.sampler.row(first + i, SaltelliA, theta.data());
        for (int p = 0; p < info.P; ++p) rows.at(i, p) = theta[p];
      }
      files->set_theta(rows);
      files->append(ev, t.obs, first, count);
    }
    done += count;
    if (run.progress) run.progress(done, shard_samples);
  };
  const int fold_threads = ev.options.threads > 0 ? ev.options.threads : omp_get_max_threads();
  const ExecutionPlan plan{chunk_samples(ev, run), 1, fold_threads};
  // The blocks before `resume`'s end come first: a kept partial and its continuation merge in order.
  auto after_resumed = [&run](Partial<StudyAccumulator> partial) {
    return run.resume ? merge_partials<StudyAccumulator>({run.resume->partial, std::move(partial)}) : partial;
  };
  Partial<StudyAccumulator> completed, folded;
  try {
    run_on_backend(
        ev.backend, [&] { folded = reduce_blocks(empty, layout, blocks, plan, fill, &completed); },
        [&] { folded = reduce_blocks(empty, layout, blocks, plan, fill, fold_study_blocks_on_device, &completed); });
  } catch (...) {
    if (run.keep_partial && (run.resume || completed.blocks.end > completed.blocks.first)) {
      StudyResult kept;
      kept.header = header;
      kept.partial =
          completed.blocks.end > completed.blocks.first ? after_resumed(std::move(completed)) : run.resume->partial;
      run.keep_partial(kept);
    }
    throw;
  }
  if (files) files->commit();
  return after_resumed(std::move(folded));
}

}  // namespace

// The method: the nominal trajectory, the pilot (histogram ranges, bandwidths), the header a
// merge checks, then this shard's blocks folded into the tree.
StudyResult run_study(const AnyModel& model, const Study& study, const StudyRun& run) {
  Evaluator ev = make_evaluator(model, study, run);
  const Batch nominal = nominal_row(study, model.info().P);
  Options nominal_options = ev.options;
  nominal_options.sensitivities = false;
  const Observation nominal_outcome = model.observe(nominal, nominal_options, {}, {}, ev.backend);
  ev.nominal_events = nominal_outcome.n_events[0];
  const std::vector<HistogramRange> ranges = run_pilot(ev);
  StudyResult result;
  result.header = study_header(ev, nominal, nominal_outcome);
  const BlockRange blocks = shard_blocks(study, run, result.header);
  const StudyAccumulator empty(study, ev.options.event_capacity, ranges);
  result.partial = fold_shard(ev, run, empty, blocks, result.header);
  return result;
}

json result_to_json(const StudyResult& r) { return {{"header", r.header}, {"partial", partial_to_json(r.partial)}}; }

StudyResult result_from_json(const json& j) {
  StudyResult r;
  try {
    r.header = j.at("header");
    r.partial = partial_from_json<StudyAccumulator>(j.at("partial"));
  } catch (const json::exception& e) {
    throw InvalidInput("partial", -1, std::string("is not a study partial written by saltation sweep: ") + e.what());
  }
  return r;
}

StudyResult merge_results(const std::vector<StudyResult>& shards) {
  if (shards.empty()) throw InvalidInput("partials", -1, "nothing to merge");
  std::vector<Partial<StudyAccumulator>> partials;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    if (shards[s].header != shards.front().header)
      throw InvalidInput("partials", static_cast<long>(s), "belongs to another study than the first (headers differ)");
    partials.push_back(shards[s].partial);
  }
  StudyResult whole;
  whole.header = shards.front().header;
  whole.partial = merge_partials(std::move(partials));
  return whole;
}

namespace {

json estimate_json(const Estimate& e) { return {{"mean", e.mean}, {"std_error", e.std_error}}; }

// Per design parameter: the chosen estimate (mean, std_error, estimator), each estimator that
// applies, the discontinuity diagnostic and, with a gradient check, the referee and whether it agrees.
json gradient_json(const OutputSummary& s, const ObjectiveColumns& columns, const StudyAccumulator& acc, std::size_t o,
                   const json& header) {
  const double delta = header.contains("gradient_check") ? header.at("gradient_check").at("delta").get<double>() : 0.0;
  const ObjectiveGradient g =
      objective_gradient(s, columns, acc.referee().empty() ? nullptr : &acc.referee()[o], delta);
  json out = json::object();
  const std::vector<std::string> names = gradient_names(header);
  for (std::size_t d = 0; d < names.size(); ++d) {
    const ParameterGradient& p = g.parameters[d];
    json j = estimate_json(g.chosen(d));
    j["estimator"] = estimator_name(g.estimator);
    if (columns.pathwise || columns.jumps_in_value) j["pathwise"] = estimate_json(p.pathwise);
    if (p.has_boundary) {
      j["corrected"] = estimate_json(p.corrected);
      j["discontinuity"] = {{"fraction", p.discontinuity.mean},
                            {"std_error", p.discontinuity.std_error},
                            {"boundary_term", p.boundary.mean},
                            {"boundary_term_std_error", p.boundary.std_error},
                            {"bandwidth", columns.bandwidth}};
      if (columns.speed_bandwidth > 0.0) j["discontinuity"]["speed_bandwidth"] = columns.speed_bandwidth;
    }
    if (p.has_referee) {
      j["referee"] = estimate_json(p.referee);
      j["referee"]["delta"] = delta;
      j["referee"]["agrees"] = g.agrees(d);
    }
    if (p.has_likelihood_ratio) j["likelihood_ratio"] = estimate_json(p.likelihood_ratio);
    out[names[d]] = j;
  }
  return out;
}

}  // namespace

json summary_json(const StudyResult& result) {
  const StudyAccumulator& acc = result.partial.total();
  const json& h = result.header;
  json summary = {{"model", h.at("model")},           {"config", h.at("config")},
                  {"samples", h.at("samples")},       {"seed", h.at("seed")},
                  {"sobol", h.at("sobol")},           {"sampling", h.at("sampling")},
                  {"parameters", h.at("parameters")}, {"nominal", h.at("nominal")},
                  {"options", h.at("options")}};
  // Statuses and event counts: the outcome histograms, which count every sample.
  const OutputSummary& outcomes = acc.outcomes();
  json statuses = json::object(), events = json::object();
  const auto& status_counts = outcomes.histogram(0).counts();
  for (std::size_t s = 0; s < status_counts.size(); ++s)
    if (status_counts[s]) statuses[status_name(static_cast<Status>(s))] = status_counts[s];
  const auto& event_counts = outcomes.histogram(1).counts();
  for (std::size_t c = 0; c < event_counts.size(); ++c)
    if (event_counts[c]) events[std::to_string(c)] = event_counts[c];
  summary["statuses"] = statuses;
  summary["event_counts"] = events;
  // Whole trajectories, not an objective's discontinuity (that is each gradient's "discontinuity").
  summary["event_count_change_fraction"] = outcomes.moments().mean(2);
  summary["event_count_change_std_error"] = outcomes.moments().standard_error(2);

  std::vector<std::string> factors;
  for (const auto& name : h.at("param_names")) {
    const json& d = h.at("parameters").at(name.get<std::string>());
    if (d.is_object() && d.contains("dist")) factors.push_back(name);
  }
  json objectives = json::object();
  const auto& objective_list = h.at("objectives");
  for (std::size_t o = 0; o < objective_list.size(); ++o) {
    const OutputSummary& s = acc.objectives()[o];
    const json report = s.report();
    const json& value = report.at("outputs").at(0);
    json out = {
        {"n", s.n_samples() - s.n_non_finite()}, {"n_undefined", s.n_non_finite()}, {"definition", objective_list[o]}};
    for (const char* key :
         {"mean", "sd", "min", "max", "q01", "q05", "q50", "q95", "q99", "quantile_relative_error_bound", "histogram"})
      if (value.contains(key)) out[key] = value.at(key);
    out["std_error"] = value.at("standard_error");
    const ObjectiveColumns columns = objective_columns(h, o);
    // A piecewise-constant user objective has no gradient estimate but a score's.
    if (columns.pathwise || columns.boundary || columns.n_scores() > 0)
      out["gradient"] = gradient_json(s, columns, acc, o, h);
    if (!acc.sobol().empty()) {
      const SobolIndices idx = acc.sobol()[o].indices();
      json sobol = json::object();
      for (std::size_t f = 0; f < factors.size(); ++f)
        sobol[factors[f]] = {
            {"S1", idx.S1[f]}, {"S1_conf", idx.S1_conf[f]}, {"ST", idx.ST[f]}, {"ST_conf", idx.ST_conf[f]}};
      out["sobol"] = sobol;
      out["sobol_base_samples"] = idx.n_base_samples;
    }
    objectives[objective_list[o].at("name").get<std::string>()] = out;
  }
  summary["objectives"] = objectives;
  return summary;
}

}  // namespace saltation::sweep
