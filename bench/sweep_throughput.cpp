// Monte Carlo sweep cost on the CPU (bench/results/sweep/README.md):
//
//   bench_sweep_throughput throughput STUDY.json [SAMPLES] [PAIRS] [CHUNK]
//     The study (examples/studies/landing_design.json) without Sobol, SAMPLES samples (default
//     16384): samples per second of sweep::run_study forward (design parameters turned into fixed
//     values: no sensitivities) and with gradients (the design parameters as in the file), each
//     against the plain AnyModel::solve of the same samples in the same chunk size (CHUNK,
//     default 4096). The two are alternated PAIRS times (default 3), so that load from other
//     processes on a shared machine falls on both; the ratio sweep time / solve time is printed
//     per pair and as the median.
//
//   bench_sweep_throughput memory STUDY.json SAMPLES
//     A forward sweep (design parameters fixed) of SAMPLES samples with the default memory budget,
//     then this process's peak resident memory (VmHWM and ru_maxrss). Run one process per
//     measurement: the peak is the process's whole life.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "saltation/io/files.hpp"
#include "saltation/io/solve_io.hpp"
#include "saltation/registry.hpp"
#include "saltation/sweep/distributions.hpp"
#include "saltation/sweep/study.hpp"

namespace {

using namespace saltation;
using nlohmann::json;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// The study file without Sobol, with `samples`; `forward`: every design parameter a fixed value.
json study_request(const std::string& path, std::uint64_t samples, bool forward) {
  json request = io::read_json_file(path);
  request["sobol"] = false;
  request["samples"] = samples;
  if (forward)
    for (auto& [name, p] : request["parameters"].items())
      if (p.is_object() && p.contains("design")) p = p["design"];
  return request;
}

struct Case {
  AnyModel model;
  sweep::Study study;
  Options options;  // as the sweep solves its samples
};

Case make_case(const json& request) {
  const io::ModelChoice choice = io::parse_model_choice(request);
  AnyModel model = configure_builtin_model(choice.name, choice.config);
  sweep::Study study = sweep::parse_study(request, model.info());
  Options options = study.options;
  options.sensitivities = !study.design_parameters().empty();
  options.mark_invalid_rows = true;
  return {std::move(model), std::move(study), normalize_options(options)};
}

// run_study with a budget of `chunk` samples per chunk; returns seconds.
double time_sweep(const Case& c, std::uint64_t chunk) {
  sweep::StudyRun run;
  run.backend = Backend::Cpu;
  run.memory_budget = chunk * io::bytes_per_trajectory(c.model.info(), c.options);
  const auto start = clock_type::now();
  const sweep::StudyResult result = sweep::run_study(c.model, c.study, run);
  const double seconds = seconds_since(start);
  if (!result.partial.complete()) std::fprintf(stderr, "incomplete sweep\n");
  return seconds;
}

// The same samples drawn and solved chunk by chunk with AnyModel::solve, nothing reduced.
double time_plain_solve(const Case& c, std::uint64_t chunk) {
  const int P = c.model.info().P;
  std::vector<double> theta(P);
  const auto start = clock_type::now();
  for (std::uint64_t first = 0; first < c.study.samples; first += chunk) {
    const std::uint64_t count = std::min(chunk, c.study.samples - first);
    Batch batch(count, P);
    for (std::uint64_t i = 0; i < count; ++i) {
      sweep::sample_parameters(c.study.parameters.data(), static_cast<std::uint32_t>(P), c.study.seed, first + i,
                               theta.data());
      for (int p = 0; p < P; ++p) batch.at(i, p) = theta[p];
    }
    c.model.solve(batch, c.options, Backend::Cpu);
  }
  return seconds_since(start);
}

int throughput(const std::string& path, std::uint64_t samples, int pairs, std::uint64_t chunk) {
  std::printf("study %s, %llu samples, chunk %llu samples, pilot %llu samples, CPU\n", path.c_str(),
              static_cast<unsigned long long>(samples), static_cast<unsigned long long>(chunk),
              static_cast<unsigned long long>(sweep::Study{}.pilot_samples));
  for (const bool forward : {true, false}) {
    const Case c = make_case(study_request(path, samples, forward));
    const char* name = forward ? "forward" : "gradients";
    std::vector<double> ratios;
    for (int pair = 0; pair < pairs; ++pair) {
      const double solve_s = time_plain_solve(c, chunk);
      const double sweep_s = time_sweep(c, chunk);
      ratios.push_back(sweep_s / solve_s);
      std::printf("%-9s pair %d: solve %8.0f samples/s (%.2f s), sweep %8.0f samples/s (%.2f s), sweep/solve %.3f\n",
                  name, pair, samples / solve_s, solve_s, samples / sweep_s, sweep_s, sweep_s / solve_s);
      std::fflush(stdout);
    }
    std::sort(ratios.begin(), ratios.end());
    std::printf("%-9s median sweep/solve time: %.3f (min %.3f, max %.3f)\n", name, ratios[ratios.size() / 2],
                ratios.front(), ratios.back());
  }
  return 0;
}

long vm_hwm_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

int memory(const std::string& path, std::uint64_t samples) {
  const Case c = make_case(study_request(path, samples, true));
  sweep::StudyRun run;
  run.backend = Backend::Cpu;
  const auto start = clock_type::now();
  const sweep::StudyResult result = sweep::run_study(c.model, c.study, run);
  const double seconds = seconds_since(start);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf(
      "memory: %llu samples in %.1f s (%.0f samples/s), complete %d, peak resident VmHWM %.1f MiB, "
      "ru_maxrss %.1f MiB, default budget %.0f MiB, %llu bytes per trajectory\n",
      static_cast<unsigned long long>(samples), seconds, samples / seconds, result.partial.complete() ? 1 : 0,
      vm_hwm_kib() / 1024.0, usage.ru_maxrss / 1024.0, io::default_memory_budget(Backend::Cpu) / 1048576.0,
      static_cast<unsigned long long>(io::bytes_per_trajectory(c.model.info(), c.options)));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string usage =
      "usage: bench_sweep_throughput throughput STUDY.json [SAMPLES] [PAIRS] [CHUNK]\n"
      "       bench_sweep_throughput memory STUDY.json SAMPLES\n";
  if (argc < 3) return std::fputs(usage.c_str(), stderr), 2;
  const std::string mode = argv[1], path = argv[2];
  try {
    if (mode == "throughput" && (argc <= 4 || std::stoi(argv[4]) >= 1))
      return throughput(path, argc > 3 ? std::stoull(argv[3]) : 16384, argc > 4 ? std::stoi(argv[4]) : 3,
                        argc > 5 ? std::stoull(argv[5]) : 4096);
    if (mode == "memory" && argc > 3) return memory(path, std::stoull(argv[3]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_sweep_throughput: %s\n", e.what());
    return 1;
  }
  return std::fputs(usage.c_str(), stderr), 2;
}
