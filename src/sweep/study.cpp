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

#include "saltation/errors.hpp"
#include "saltation/io/json_object.hpp"
#include "saltation/io/npy.hpp"
#include "saltation/status.hpp"

namespace saltation::sweep {

using nlohmann::json;

namespace {

// ---- reading a study

int state_index(const json& v, const std::string& path, const ModelInfo& info) {
  if (v.is_number_integer()) {
    const long long k = v.get<long long>();
    if (k < 0 || k >= info.N)
      throw InvalidInput(path, -1, std::to_string(k) + " is not a state index of " + info.name + " (0.." +
                                       std::to_string(info.N - 1) + ")");
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

Objective parse_objective(const json& v, const std::string& where, const ModelInfo& info, const Options& options) {
  const io::JsonObject o(v, where);
  Objective ob;
  ob.name = o.string("name");
  if (ob.name.empty()) throw InvalidInput(o.path("name"), -1, "must not be empty");
  static const char* kinds[] = {"event_time", "event_state", "final_state", "event_count", "landing", "status"};
  std::string kind;
  for (const char* k : kinds)
    if (o.has(k)) {
      if (!kind.empty())
        throw InvalidInput(where, -1, "has both \"" + kind + "\" and \"" + k + "\": an objective is one of them");
      kind = k;
    }
  if (kind.empty())
    throw InvalidInput(where, -1,
                       "needs one of event_time, event_state, final_state, event_count, landing, status (docs/sweep.md)");
  if (kind == "event_time") {
    ob.kind = ObjectiveKind::EventTime;
    ob.event = event_index(o, "event_time", options);
  } else if (kind == "event_state" || kind == "landing") {
    const io::JsonObject e = o.object(kind);
    ob.kind = kind == "landing" ? ObjectiveKind::Landing : ObjectiveKind::EventState;
    ob.event = event_index(e, "event", options);
    ob.state = state_index(e.raw("state"), e.path("state"), info);
    if (ob.kind == ObjectiveKind::Landing) ob.target = e.number("target");
    e.reject_unknown();
  } else if (kind == "final_state") {
    ob.kind = ObjectiveKind::FinalState;
    ob.state = state_index(o.raw("final_state"), o.path("final_state"), info);
  } else if (kind == "event_count") {
    ob.kind = ObjectiveKind::EventCount;
    if (!o.boolean("event_count", false)) throw InvalidInput(o.path("event_count"), -1, "must be true");
  } else {
    ob.kind = ObjectiveKind::StatusIs;
    const std::string wanted = o.string("status");
    ob.status = -1;
    for (int s = 0; s < status_count; ++s)
      if (wanted == status_name(static_cast<Status>(s))) ob.status = s;
    if (ob.status < 0) throw InvalidInput(o.path("status"), -1, "\"" + wanted + "\" is not a status name (docs/schema.md)");
  }
  o.reject_unknown("an objective");
  return ob;
}

Distribution parse_parameter(const json& v, const std::string& where) {
  if (v.is_number()) return Distribution::fixed(v.get<double>());
  const io::JsonObject o(v, where);
  Distribution d;
  if (o.has("design") && o.has("dist"))
    throw InvalidInput(where, -1, "is either a design value or sampled, not both");
  if (o.has("design")) {
    d = Distribution::design(o.number("design"));
  } else if (o.has("dist")) {
    const std::string dist = o.choice("dist", {"uniform", "normal", "lognormal", "truncnormal"}, "");
    if (dist == "uniform") d = Distribution::uniform(o.number("low"), o.number("high"));
    else if (dist == "normal") d = Distribution::normal(o.number("mean"), o.number("sigma"));
    else if (dist == "lognormal") d = Distribution::lognormal(o.number("mu"), o.number("sigma"));
    else d = Distribution::truncnormal(o.number("mean"), o.number("sigma"), o.number("low"), o.number("high"));
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
    case DistributionKind::fixed:
    case DistributionKind::design: return d.a;
    case DistributionKind::uniform: return 0.5 * (d.a + d.b);
    case DistributionKind::normal: return d.a;
    case DistributionKind::lognormal: return std::exp(d.a + 0.5 * d.b * d.b);
    case DistributionKind::truncnormal: {
      const double alpha = (d.c - d.a) / d.b, beta = (d.d - d.a) / d.b;
      const double pdf_alpha = std::exp(-0.5 * alpha * alpha), pdf_beta = std::exp(-0.5 * beta * beta);
      const double mass = normal_cdf(beta) - normal_cdf(alpha);
      return d.a + d.b * (pdf_alpha - pdf_beta) / (std::sqrt(2.0 * M_PI) * mass);
    }
  }
  return d.a;
}

json distribution_json(const Distribution& d) {
  switch (d.kind) {
    case DistributionKind::fixed: return d.a;
    case DistributionKind::design: return {{"design", d.a}};
    case DistributionKind::uniform: return {{"dist", "uniform"}, {"low", d.a}, {"high", d.b}};
    case DistributionKind::normal: return {{"dist", "normal"}, {"mean", d.a}, {"sigma", d.b}};
    case DistributionKind::lognormal: return {{"dist", "lognormal"}, {"mu", d.a}, {"sigma", d.b}};
    case DistributionKind::truncnormal:
      return {{"dist", "truncnormal"}, {"mean", d.a}, {"sigma", d.b}, {"low", d.c}, {"high", d.d}};
  }
  return nullptr;
}

json objective_json(const Objective& o, const ModelInfo& info) {
  const std::string state = info.state_names[o.state];
  switch (o.kind) {
    case ObjectiveKind::EventTime: return {{"name", o.name}, {"event_time", o.event}};
    case ObjectiveKind::EventState: return {{"name", o.name}, {"event_state", {{"event", o.event}, {"state", state}}}};
    case ObjectiveKind::FinalState: return {{"name", o.name}, {"final_state", state}};
    case ObjectiveKind::EventCount: return {{"name", o.name}, {"event_count", true}};
    case ObjectiveKind::Landing:
      return {{"name", o.name}, {"landing", {{"event", o.event}, {"state", state}, {"target", o.target}}}};
    case ObjectiveKind::StatusIs: return {{"name", o.name}, {"status", status_name(static_cast<Status>(o.status))}};
  }
  return nullptr;
}

// ---- evaluating objectives through the objective observer (saltation::observe)

ObjectiveSpec spec_of(const Objective& o) {
  ObjectiveSpec spec;
  switch (o.kind) {
    case ObjectiveKind::EventTime: spec.kind = saltation::ObjectiveKind::EventTime; break;
    case ObjectiveKind::EventState: spec.kind = saltation::ObjectiveKind::EventState; break;
    case ObjectiveKind::FinalState: spec.kind = saltation::ObjectiveKind::FinalState; break;
    case ObjectiveKind::EventCount: spec.kind = saltation::ObjectiveKind::EventCount; break;
    case ObjectiveKind::Landing: spec.kind = saltation::ObjectiveKind::Landing; break;
    case ObjectiveKind::StatusIs: spec.kind = saltation::ObjectiveKind::StatusIs; break;
  }
  spec.event = o.event;
  spec.state = o.state;
  spec.target = o.target;
  spec.status = o.status;
  return spec;
}

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
        throw InvalidInput("user_objectives." + u.name, -1, "input \"" + input + "\" is not a built-in objective of the study");
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

constexpr int kOutcomes = 3;  // status, n_events, topology_changed

HistogramRange padded_range(double low, double high, std::uint32_t bins) {
  if (!(std::isfinite(low) && std::isfinite(high))) return {0.0, 1.0, bins};
  if (low == high) return {low - 0.5, high + 0.5, bins};
  const double pad = 0.05 * (high - low);
  return {low - pad, high + pad, bins};
}

// A chunk holds at most this many samples: enough to keep every CPU thread and GPU lane busy,
// and the memory of a study stays the same however many samples it has.
constexpr std::uint64_t kMaxChunkSamples = 65536;

// Host and device bytes one trajectory of the batch takes: its parameters and its observation
// (status, n_events and the objective rows).
std::uint64_t bytes_per_observed_trajectory(const ModelInfo& info, const Study& study, int n_design) {
  const std::uint64_t P = info.P;
  const std::uint64_t outputs = value_row(study, study.objectives.size(), n_design);
  return 8 * P + 4 + 4 + 8 * outputs;
}

}  // namespace

std::vector<int> Study::design_parameters() const {
  std::vector<int> out;
  for (std::size_t p = 0; p < parameters.size(); ++p)
    if (parameters[p].kind == DistributionKind::design) out.push_back(static_cast<int>(p));
  return out;
}

Study parse_study(const json& j, const ModelInfo& info) {
  const io::JsonObject top(j, "");
  Study s;
  s.model = io::parse_model_choice(j);
  top.raw("model");
  if (top.has("config")) top.raw("config");
  s.options = io::options_from_json(top.object("options"));
  s.options.mark_invalid_rows = true;
  (void)normalize_options(s.options);  // option errors now, naming the option
  const io::JsonObject params = top.object("parameters");
  for (int p = 0; p < info.P; ++p) {
    const std::string& name = info.param_names[p];
    if (!params.has(name))
      throw InvalidInput(params.path(name), -1,
                         "is required: a number, {\"design\": value} or {\"dist\": ...} for every parameter of " + info.name);
    s.parameters.push_back(parse_parameter(params.raw(name), params.path(name)));
  }
  params.reject_unknown("the parameters of model " + info.name);
  const json& objectives = top.raw("objectives");
  if (!objectives.is_array() || objectives.empty())
    throw InvalidInput("objectives", -1, "must be a non-empty array of objectives (docs/sweep.md)");
  std::set<std::string> names;
  for (std::size_t k = 0; k < objectives.size(); ++k) {
    s.objectives.push_back(parse_objective(objectives[k], "objectives[" + std::to_string(k) + "]", info, s.options));
    if (!names.insert(s.objectives.back().name).second)
      throw InvalidInput("objectives[" + std::to_string(k) + "].name", -1, "\"" + s.objectives.back().name + "\" is used twice");
  }
  const long long samples = top.integer64("samples", 0);
  if (samples <= 0) throw InvalidInput("samples", -1, "must be a positive integer");
  s.samples = static_cast<std::uint64_t>(samples);
  const long long seed = top.integer64("seed", 0);
  if (seed < 0) throw InvalidInput("seed", -1, "must be >= 0");
  s.seed = static_cast<std::uint64_t>(seed);
  s.sobol = top.boolean("sobol", false);
  s.sampling = top.choice("sampling", {"random", "scrambled_sobol"}, "random") == "random" ? Sampling::random
                                                                                         : Sampling::scrambled_sobol;
  if (s.sampling == Sampling::scrambled_sobol && s.samples > ScrambledSobol::max_points)
    throw InvalidInput("samples", -1, "scrambled_sobol sampling has at most 2^32 points: use fewer samples or \"sampling\": \"random\"");
  s.sobol_resamples = top.integer("sobol_resamples", s.sobol_resamples);
  if (s.sobol_resamples < 0 || s.sobol_resamples > 10000)
    throw InvalidInput("sobol_resamples", -1, "must be in [0, 10000]");
  if (s.sobol && count_factors(s.parameters.data(), static_cast<std::uint32_t>(s.parameters.size())) == 0)
    throw InvalidInput("sobol", -1, "needs at least one sampled parameter");
  if (top.has("optimize")) top.raw("optimize");  // read by parse_robust_design (robust_design.hpp)
  top.reject_unknown("a study (model, config, options, parameters, objectives, samples, seed, sobol, sobol_resamples, sampling)");
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
  const int n_design = static_cast<int>(study.design_parameters().size());
  std::size_t next = 0;
  std::vector<int> widths;
  for (const Objective& o : study.objectives) widths.push_back(1 + gradient_width(o, n_design));
  for (const auto& inputs : user_inputs(study)) widths.push_back(1 + (user_differentiable(study, inputs) ? n_design : 0));
  for (int width : widths) {
    SummaryOptions so;
    so.n_outputs = width;
    so.histograms.assign(ranges.begin() + next, ranges.begin() + next + so.n_outputs);
    next += so.n_outputs;
    objectives_.emplace_back(so);
  }
  if (study.sobol) {
    const int k = static_cast<int>(count_factors(study.parameters.data(), static_cast<std::uint32_t>(study.parameters.size())));
    for (std::size_t o = 0; o < widths.size(); ++o) sobol_.emplace_back(k, study.seed, study.sobol_resamples);
  }
}

int StudyAccumulator::input_width() const {
  int w = outcomes().input_width();
  for (const auto& o : objectives_) w += o.input_width();
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
  for (auto& s : sobol_) {
    s.add(index, values);
    values += s.input_width();
  }
}

void StudyAccumulator::merge(const StudyAccumulator& later) {
  outcomes_.front().merge(later.outcomes_.front());
  for (std::size_t o = 0; o < objectives_.size(); ++o) objectives_[o].merge(later.objectives_[o]);
  for (std::size_t o = 0; o < sobol_.size(); ++o) sobol_[o].merge(later.sobol_[o]);
}

json StudyAccumulator::to_json() const {
  json objectives = json::array(), sobol = json::array();
  for (const auto& o : objectives_) objectives.push_back(o.to_json());
  for (const auto& s : sobol_) sobol.push_back(s.to_json());
  return {{"outcomes", outcomes().to_json()}, {"objectives", objectives}, {"sobol", sobol}};
}

StudyAccumulator StudyAccumulator::from_json(const json& j) {
  StudyAccumulator a;
  a.outcomes_.push_back(OutputSummary::from_json(j.at("outcomes")));
  for (const auto& o : j.at("objectives")) a.objectives_.push_back(OutputSummary::from_json(o));
  for (const auto& s : j.at("sobol")) a.sobol_.push_back(SobolAccumulator::from_json(s));
  return a;
}

// ---- running

namespace {

// The parameter rows of a study: Philox draws, or scrambled Sobol' points over the factors (A's
// in dimensions 0 .. k - 1, B's in k .. 2k - 1) with the Philox draw as their low bits. Matrix
// saltelli_a of sample j is the plain Monte Carlo row j.
class Sampler {
 public:
  explicit Sampler(const Study& study)
      : study_(study), n_factors_(count_factors(study.parameters.data(), static_cast<std::uint32_t>(study.parameters.size()))) {
    if (study.sampling == Sampling::scrambled_sobol) sobol_.emplace(n_factors_ * (study.sobol ? 2 : 1), study.seed);
  }
  void row(std::uint64_t j, std::uint32_t matrix, double* theta) const {
    const auto n_params = static_cast<std::uint32_t>(study_.parameters.size());
    if (!sobol_) return saltelli_parameters(study_.parameters.data(), n_params, study_.seed, j, matrix, theta);
    saltelli_row(study_.parameters.data(), n_params, matrix,
                 [&](bool from_b, std::uint32_t factor, std::uint32_t p) {
                   const Stream stream = from_b ? Stream::saltelli_b : Stream::monte_carlo;
                   return sobol_->uniform(j, from_b ? n_factors_ + factor : factor, philox_bits(study_.seed, stream, j, p));
                 },
                 theta);
  }

 private:
  const Study& study_;
  std::uint32_t n_factors_;
  std::optional<ScrambledSobol> sobol_;
};

// The rows of one chunk and what becomes of them: parameters drawn from the counter-based streams,
// one observed solve (each trajectory reduced to its objectives on the fly), folded into the SoA
// outputs the block tree consumes.
struct Evaluator {
  const AnyModel& model;
  const Study& study;
  Options options;
  Backend backend;
  std::vector<int> design;
  int n_factors = 0;
  int nominal_events = 0;
  Sampler sampler{study};

  int rows_per_sample() const { return study.sobol ? n_factors + 2 : 1; }

  int n_design() const { return static_cast<int>(design.size()); }
  int value_row(std::size_t o) const { return sweep::value_row(study, o, n_design()); }

  // What the accumulators take per batch row: each objective's value and design derivatives,
  // the built-in objectives as observed, then the user objectives by the chain rule.
  std::vector<std::vector<std::size_t>> users = user_inputs(study);
  int objective_width() const {
    int w = value_row(study.objectives.size());
    for (const auto& inputs : users) w += 1 + (user_differentiable(study, inputs) ? n_design() : 0);
    return w;
  }
  // The offset of objective o's value (built-in ones first) in objective_rows().
  std::vector<int> value_offsets() const {
    std::vector<int> out;
    for (std::size_t o = 0; o < study.objectives.size(); ++o) out.push_back(value_row(o));
    int next = value_row(study.objectives.size());
    for (const auto& inputs : users) {
      out.push_back(next);
      next += 1 + (user_differentiable(study, inputs) ? n_design() : 0);
    }
    return out;
  }
  void objective_rows(const Observation& obs, std::size_t b, double* out) const {
    const int observed = value_row(study.objectives.size());
    for (int r = 0; r < observed; ++r) out[r] = obs.value(b, r);
    double* next = out + observed;
    std::vector<double> y, df_dy;
    for (std::size_t u = 0; u < users.size(); ++u) {
      const auto& inputs = users[u];
      y.resize(inputs.size());
      df_dy.assign(inputs.size(), 0.0);
      for (std::size_t j = 0; j < inputs.size(); ++j) y[j] = obs.value(b, value_row(inputs[j]));
      *next++ = study.user_objectives[u].f(y.data(), df_dy.data());
      if (!user_differentiable(study, inputs)) continue;
      for (int d = 0; d < n_design(); ++d) {
        double g = 0.0;
        for (std::size_t j = 0; j < inputs.size(); ++j) g += df_dy[j] * obs.value(b, value_row(inputs[j]) + 1 + d);
        *next++ = g;
      }
    }
  }

  // Observes samples [first, first + count): row r of sample i at batch index r * count + i, r the
  // Saltelli matrix (0: A, the plain Monte Carlo sample; 1: B; 2 + f: AB_f).
  Observation observe(std::uint64_t first, std::uint64_t count) const {
    const int P = model.info().P;
    const int rows = rows_per_sample();
    Batch batch(count * rows, P);
    std::vector<double> theta(P);
    for (int r = 0; r < rows; ++r)
      for (std::uint64_t i = 0; i < count; ++i) {
        sampler.row(first + i, static_cast<std::uint32_t>(r), theta.data());
        for (int p = 0; p < P; ++p) batch.at(r * count + i, p) = theta[p];
      }
    std::vector<ObjectiveSpec> specs;
    for (const Objective& o : study.objectives) specs.push_back(spec_of(o));
    return model.observe(batch, options, std::move(specs), design, backend);
  }

  // The block tree's inputs of samples [first, first + count) from their observations.
  void fold(const Observation& obs, std::uint64_t count, double* out) const {
    const int width = objective_width();
    const std::vector<int> offsets = value_offsets();
    std::vector<double> rows(static_cast<std::size_t>(rows_per_sample()) * width);  // per Saltelli matrix
    std::size_t row = 0;
    auto put = [&](std::uint64_t i, double v) { out[row * count + i] = v; };
    for (std::uint64_t i = 0; i < count; ++i) {
      row = 0;
      put(i, obs.status[i]), ++row;
      put(i, obs.n_events[i]), ++row;
      put(i, obs.n_events[i] != nominal_events ? 1.0 : 0.0), ++row;
      for (int r = 0; r < rows_per_sample(); ++r) objective_rows(obs, r * count + i, rows.data() + r * width);
      for (int output = 0; output < width; ++output) put(i, rows[output]), ++row;
      if (study.sobol)
        for (int offset : offsets)
          for (int r = 0; r < rows_per_sample(); ++r) put(i, rows[r * width + offset]), ++row;
    }
  }
};

// Per-sample arrays of a shard, streamed in sample order (the reduction runs its chunks in order).
class PerSampleFiles {
 public:
  PerSampleFiles(const std::string& prefix, const Study& study, const ModelInfo& info, std::uint64_t rows) {
    const long n = static_cast<long>(rows);
    files_.push_back(std::make_unique<io::NpyWriter>(prefix + "_theta.npy", io::DType::F64, std::vector<long>{n, info.P}));
    files_.push_back(std::make_unique<io::NpyWriter>(prefix + "_status.npy", io::DType::I32, std::vector<long>{n}));
    files_.push_back(std::make_unique<io::NpyWriter>(prefix + "_n_events.npy", io::DType::I32, std::vector<long>{n}));
    for (const Objective& o : study.objectives)
      files_.push_back(std::make_unique<io::NpyWriter>(prefix + "_" + o.name + ".npy", io::DType::F64, std::vector<long>{n}));
    if (study.sobol) {
      // SALib's layout (saltelli.sample with calc_second_order=False, then sobol.analyze): per base
      // sample the rows A, AB_1 .. AB_k, B, over the k sampled parameters.
      for (int p = 0; p < info.P; ++p)
        if (study.parameters[p].is_random()) factors_.push_back(p);
      const long k = static_cast<long>(factors_.size()), salib_rows = n * (k + 2);
      salib_.push_back(std::make_unique<io::NpyWriter>(prefix + "_salib_X.npy", io::DType::F64, std::vector<long>{salib_rows, k}));
      for (const Objective& o : study.objectives)
        salib_.push_back(
            std::make_unique<io::NpyWriter>(prefix + "_salib_Y_" + o.name + ".npy", io::DType::F64, std::vector<long>{salib_rows}));
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

// What a merge checks: the study, its options (not the thread count), the nominal trajectory.
json study_header(const ModelInfo& info, const Study& study, const Options& options, const Batch& nominal_row,
                  const Observation& nominal) {
  // The thread count never changes a result: left out, so shards run with different --threads merge.
  json options_json = io::options_to_json(options);
  options_json.erase("threads");
  json parameters = json::object();
  for (int p = 0; p < info.P; ++p) parameters[info.param_names[p]] = distribution_json(study.parameters[p]);
  json objectives = json::array();
  for (const Objective& o : study.objectives) objectives.push_back(objective_json(o, info));
  for (const UserObjective& u : study.user_objectives) objectives.push_back({{"name", u.name}, {"user_inputs", u.inputs}});
  std::vector<double> nominal_theta(nominal_row.theta.begin(), nominal_row.theta.end());
  return {{"model", info.name},
          {"config", info.config},
          {"state_names", info.state_names},
          {"param_names", info.param_names},
          {"options", options_json},
          {"parameters", parameters},
          {"objectives", objectives},
          {"samples", study.samples},
          {"seed", study.seed},
          {"sobol", study.sobol},
          {"sampling", study.sampling == Sampling::random ? "random" : "scrambled_sobol"},
          {"block_size", study.block_size},
          {"nominal", {{"theta", nominal_theta},
                       {"status", status_name(static_cast<Status>(nominal.status[0]))},
                       {"n_events", nominal.n_events[0]}}}};
}

}  // namespace

StudyResult run_study(const AnyModel& model, const Study& study, const StudyRun& run) {
  const ModelInfo& info = model.info();
  if (static_cast<int>(study.parameters.size()) != info.P)
    throw InvalidInput("parameters", -1, "the study has " + std::to_string(study.parameters.size()) +
                                             " parameters, model " + info.name + " has " + std::to_string(info.P));
  if (run.n_shards < 1 || run.shard < 0 || run.shard >= run.n_shards)
    throw InvalidInput("shard", -1, "must be i/N with 0 <= i < N");
  Evaluator ev{model, study, study.options, resolve_backend(run.backend), study.design_parameters()};
  ev.n_factors = static_cast<int>(count_factors(study.parameters.data(), static_cast<std::uint32_t>(info.P)));
  bool gradients = false;
  for (const Objective& o : study.objectives) gradients = gradients || (o.differentiable() && !ev.design.empty());
  ev.options.sensitivities = gradients;
  ev.options.mark_invalid_rows = true;
  ev.options = normalize_options(ev.options);

  // The nominal trajectory: design values, sampled parameters at their means.
  Batch nominal_row(1, info.P);
  for (int p = 0; p < info.P; ++p) nominal_row.at(0, p) = mean_of(study.parameters[p]);
  Options nominal_options = ev.options;
  nominal_options.sensitivities = false;
  const Observation nominal = model.observe(nominal_row, nominal_options, {}, {}, ev.backend);
  ev.nominal_events = nominal.n_events[0];

  // Histogram ranges from the pilot samples 0 .. pilot - 1, the same for every shard and chunking.
  const std::uint64_t pilot = std::min(study.pilot_samples, study.samples);
  std::vector<HistogramRange> ranges;
  {
    Study plain_study = study;
    plain_study.sobol = false;
    const Evaluator plain{model, plain_study, ev.options, ev.backend, ev.design, ev.n_factors, ev.nominal_events};
    const Observation obs = plain.observe(0, pilot);
    const int width = plain.objective_width();
    std::vector<double> rows(static_cast<std::size_t>(pilot) * width);
    for (std::uint64_t i = 0; i < pilot; ++i) plain.objective_rows(obs, i, rows.data() + i * width);
    for (int output = 0; output < width; ++output) {
      double low = HUGE_VAL, high = -HUGE_VAL;
      for (std::uint64_t i = 0; i < pilot; ++i) {
        const double v = rows[i * width + output];
        if (std::isfinite(v)) low = std::min(low, v), high = std::max(high, v);
      }
      ranges.push_back(padded_range(low, high, 64));
    }
  }

  const StudyAccumulator empty(study, ev.options.event_capacity, ranges);
  const BlockLayout layout{study.samples, study.block_size};
  const std::uint64_t n_blocks = layout.n_blocks();
  BlockRange blocks{n_blocks * run.shard / run.n_shards, n_blocks * (run.shard + 1) / run.n_shards};
  if (blocks.first >= blocks.end)
    throw InvalidInput("shard", -1, "shard " + std::to_string(run.shard) + " of " + std::to_string(run.n_shards) +
                                        " has no samples: " + std::to_string(n_blocks) + " blocks of " +
                                        std::to_string(study.block_size) + " samples; use fewer shards");
  StudyResult result;
  result.header = study_header(info, study, ev.options, nominal_row, nominal);
  if ((run.keep_partial || run.resume) && !run.per_sample_prefix.empty())
    throw InvalidInput("per_sample", -1, "per-sample files cannot be kept from a stopped run or resumed; run without them");
  if (run.resume) {
    const BlockRange kept = run.resume->partial.blocks;
    if (run.resume->header != result.header)
      throw InvalidInput("resume", -1, "the kept partial belongs to another study: its header (model, parameters, "
                                       "objectives, options, samples, seed or nominal trajectory) differs");
    if (kept.first != blocks.first || kept.end < blocks.first || kept.end >= blocks.end)
      throw InvalidInput("resume", -1, "the kept partial covers blocks [" + std::to_string(kept.first) + ", " +
                                           std::to_string(kept.end) + "), this shard [" + std::to_string(blocks.first) +
                                           ", " + std::to_string(blocks.end) + "): nothing of it is left to run after it");
    blocks.first = kept.end;
  }
  const std::uint64_t first_sample = blocks.first * layout.block_size;
  const std::uint64_t shard_samples = std::min(blocks.end * layout.block_size, study.samples) - first_sample;

  const std::uint64_t budget = run.memory_budget ? run.memory_budget : io::default_memory_budget(ev.backend);
  const std::uint64_t per_sample = bytes_per_observed_trajectory(info, study, ev.n_design()) * ev.rows_per_sample();
  const std::uint64_t fitting = std::min<std::uint64_t>(io::chunk_rows(budget, per_sample), kMaxChunkSamples);
  // Whole blocks per chunk where the budget allows: those fold in parallel (and on the device).
  const std::uint64_t chunk = fitting >= study.block_size ? fitting / study.block_size * study.block_size : fitting;

  std::unique_ptr<PerSampleFiles> files;
  if (!run.per_sample_prefix.empty())
    files = std::make_unique<PerSampleFiles>(run.per_sample_prefix, study, info, shard_samples);
  std::uint64_t done = 0;
  auto fill = [&](std::uint64_t first, std::uint64_t count, double* out) {
    const Observation obs = ev.observe(first, count);
    ev.fold(obs, count, out);
    if (files) {
      Batch rows(count, info.P);
      std::vector<double> theta(info.P);
      for (std::uint64_t i = 0; i < count; ++i) {
        ev.sampler.row(first + i, saltelli_a, theta.data());
        for (int p = 0; p < info.P; ++p) rows.at(i, p) = theta[p];
      }
      files->set_theta(rows);
      files->append(ev, obs, first, count);
    }
    done += count;
    if (run.progress) run.progress(done, shard_samples);
  };
  // One worker: the solver parallelises each chunk itself, and per-sample files stream in order.
  // A chunk's whole blocks are folded in parallel: on the device with the CUDA backend, else by
  // the OpenMP threads the solve uses.
  const int fold_threads = ev.options.threads > 0 ? ev.options.threads : omp_get_max_threads();
  const ExecutionPlan plan{chunk, 1, fold_threads};
  // The blocks before `resume`'s end come first: a kept partial and its continuation merge in order.
  auto after_resumed = [&run](Partial<StudyAccumulator> partial) {
    return run.resume ? merge_partials<StudyAccumulator>({run.resume->partial, std::move(partial)}) : partial;
  };
  Partial<StudyAccumulator> completed;
  try {
    if (ev.backend == Backend::Cuda)
      result.partial = reduce_blocks(empty, layout, blocks, plan, fill, fold_study_blocks_on_device, &completed);
    else
      result.partial = reduce_blocks(empty, layout, blocks, plan, fill, &completed);
  } catch (...) {
    if (run.keep_partial && (run.resume || completed.blocks.end > completed.blocks.first)) {
      StudyResult kept;
      kept.header = result.header;
      kept.partial = completed.blocks.end > completed.blocks.first ? after_resumed(std::move(completed))
                                                                    : run.resume->partial;
      run.keep_partial(kept);
    }
    throw;
  }
  result.partial = after_resumed(std::move(result.partial));
  if (files) files->commit();
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

json summary_json(const StudyResult& result) {
  const StudyAccumulator& acc = result.partial.total();
  const json& h = result.header;
  json summary = {{"model", h.at("model")},       {"config", h.at("config")},   {"samples", h.at("samples")},
                  {"seed", h.at("seed")},         {"sobol", h.at("sobol")},     {"sampling", h.at("sampling")}, {"parameters", h.at("parameters")},
                  {"nominal", h.at("nominal")},   {"options", h.at("options")}};
  // Statuses and event counts: the outcome histograms, which count every sample.
  const OutputSummary& outcomes = acc.outcomes();
  json statuses = json::object(), events = json::object();
  const auto& status_counts = outcomes.histogram(0).counts();
  for (std::size_t s = 0; s < status_counts.size(); ++s)
    if (status_counts[s]) statuses[status_name(static_cast<Status>(s))] = status_counts[s];
  const auto& event_counts = outcomes.histogram(1).counts();
  for (std::size_t c = 0; c < event_counts.size(); ++c)
    if (event_counts[c]) events[std::to_string(c)] = event_counts[c];
  const double topology_fraction = outcomes.moments().mean(2);
  summary["statuses"] = statuses;
  summary["event_counts"] = events;
  summary["topology_change_fraction"] = topology_fraction;
  summary["topology_change_std_error"] = outcomes.moments().standard_error(2);

  std::vector<std::string> design, factors;
  const auto& names = h.at("param_names");
  for (const auto& name : names) {
    const json& d = h.at("parameters").at(name.get<std::string>());
    if (d.is_object() && d.contains("design")) design.push_back(name);
    if (d.is_object() && d.contains("dist")) factors.push_back(name);
  }
  json objectives = json::object();
  const auto& objective_list = h.at("objectives");
  for (std::size_t o = 0; o < objective_list.size(); ++o) {
    const OutputSummary& s = acc.objectives()[o];
    const json report = s.report();
    const json& value = report.at("outputs").at(0);
    json out = {{"n", s.n_samples() - s.n_non_finite()},
                {"n_undefined", s.n_non_finite()},
                {"definition", objective_list[o]}};
    for (const char* key : {"mean", "sd", "min", "max", "q01", "q05", "q50", "q95", "q99", "quantile_relative_error_bound",
                            "histogram"})
      if (value.contains(key)) out[key] = value.at(key);
    out["std_error"] = value.at("standard_error");
    if (s.input_width() > 1) {
      json gradient = json::object();
      for (std::size_t d = 0; d < design.size(); ++d) {
        const json& g = report.at("outputs").at(1 + d);
        gradient[design[d]] = {{"mean", g.at("mean")}, {"std_error", g.at("standard_error")}};
      }
      out["gradient"] = gradient;
    }
    out["topology_change_fraction"] = topology_fraction;
    if (!acc.sobol().empty()) {
      const SobolIndices idx = acc.sobol()[o].indices();
      json sobol = json::object();
      for (std::size_t f = 0; f < factors.size(); ++f)
        sobol[factors[f]] = {{"S1", idx.S1[f]}, {"S1_conf", idx.S1_conf[f]}, {"ST", idx.ST[f]}, {"ST_conf", idx.ST_conf[f]}};
      out["sobol"] = sobol;
      out["sobol_base_samples"] = idx.n_base_samples;
    }
    objectives[objective_list[o].at("name").get<std::string>()] = out;
  }
  summary["objectives"] = objectives;
  return summary;
}

}  // namespace saltation::sweep
