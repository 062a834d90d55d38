// Studies end to end: the bouncing ball's closed forms through run_study (means, gradients, Sobol
// indices), summaries bitwise equal for any chunk size, thread count and shard split, bad studies
// named by key, and the saltation sweep / merge commands.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "run_cli.hpp"
#include "saltation/errors.hpp"
#include "saltation/interrupt.hpp"
#include "saltation/registry.hpp"
#include "saltation/sweep/study.hpp"

using namespace saltation;
using nlohmann::json;

namespace {

const double g = 9.81;

// The issue's study: h0 ~ U(1, 2), e designed at 0.8 (or sampled), t2 = sqrt(2 h0 / g)(1 + 2e).
json ball_study(std::uint64_t samples, bool sample_e, bool sobol) {
  json s = json::parse(R"({"model": "bouncing_ball", "config": {"g": 9.81},
    "options": {"t_final": 3.0, "dt": 0.001, "event_capacity": 16},
    "parameters": {"h0": {"dist": "uniform", "low": 1.0, "high": 2.0}, "v0": 0.0, "e": {"design": 0.8}},
    "objectives": [{"name": "t2", "event_time": 1}, {"name": "x", "final_state": "h"}],
    "seed": 7})");
  s["samples"] = samples;
  s["sobol"] = sobol;
  if (sample_e) s["parameters"]["e"] = json{{"dist", "uniform"}, {"low", 0.6}, {"high", 0.8}};
  return s;
}

// Runs the study on the CPU; with block_size > 0 in blocks of that many samples.
sweep::StudyResult run(const json& study_json, sweep::StudyRun run = {}, std::uint64_t block_size = 0) {
  run.backend = Backend::Cpu;
  const io::ModelChoice choice = io::parse_model_choice(study_json);
  const AnyModel model = configure_builtin_model(choice.name, choice.config);
  sweep::Study study = sweep::parse_study(study_json, model.info());
  if (block_size > 0) study.block_size = block_size;
  return sweep::run_study(model, study, run);
}

// E[sqrt(h0)] for h0 ~ U(1, 2).
const double mean_sqrt_h0 = 2.0 / 3.0 * (std::pow(2.0, 1.5) - 1.0);

}  // namespace

TEST(Study, BallMeanAndGradientAgainstClosedForms) {
  const json s = sweep::summary_json(run(ball_study(20000, false, false)));
  const json& t2 = s.at("objectives").at("t2");
  const double c = std::sqrt(2.0 / g);
  EXPECT_NEAR(t2.at("mean").get<double>(), c * mean_sqrt_h0 * 2.6, 4 * t2.at("std_error").get<double>());
  // dt2/de = 2 sqrt(2 h0 / g): its mean 2 c E[sqrt h0].
  const json& grad = t2.at("gradient").at("e");
  EXPECT_NEAR(grad.at("mean").get<double>(), 2 * c * mean_sqrt_h0, 4 * grad.at("std_error").get<double>());
  EXPECT_GT(t2.at("std_error").get<double>(), 0.0);
  EXPECT_EQ(t2.at("n").get<int>(), 20000);
  // The nominal ball (h0 = 1.5) bounces 4 times in 3 s; samples from h0 near 1 or 2 bounce 3 to 6
  // times, so the event count changes for a fraction strictly between 0 and 1; yet t2, which
  // exists in every sample far before t_final, is discontinuous in e near none of them.
  EXPECT_EQ(s.at("nominal").at("n_events").get<int>(), 4);
  const double changed = s.at("event_count_change_fraction").get<double>();
  EXPECT_GT(changed, 0.0);
  EXPECT_LT(changed, 1.0);
  EXPECT_EQ(grad.at("discontinuity").at("fraction").get<double>(), 0.0);
  EXPECT_EQ(s.at("statuses").at("finished").get<int>(), 20000);
}

// The Sobol indices of t2 in a summary against their closed forms, within twice their intervals.
void expect_ball_sobol_indices(const json& summary) {
  // t2 = c sqrt(h0) (1 + 2e), a product of independent factors: with G = sqrt(h0), K = 1 + 2e,
  // V = E[G^2] E[K^2] - E[G]^2 E[K]^2, S1_h0 = Var G E[K]^2 / V, S1_e = E[G]^2 Var K / V,
  // ST_h0 = 1 - S1_e, ST_e = 1 - S1_h0.
  const double EG = mean_sqrt_h0, EG2 = 1.5, EK = 2.4, VK = 0.4 * 0.4 / 12.0, EK2 = EK * EK + VK;
  const double V = EG2 * EK2 - EG * EG * EK * EK;
  const double S1_h0 = (EG2 - EG * EG) * EK * EK / V, S1_e = EG * EG * VK / V;
  const json& sobol = summary.at("objectives").at("t2").at("sobol");
  auto expect_within = [](const json& index, const char* key, double exact) {
    const double value = index.at(key).get<double>(), conf = index.at(std::string(key) + "_conf").get<double>();
    EXPECT_GT(conf, 0.0) << key;
    EXPECT_LE(std::fabs(value - exact), 2.0 * conf) << key << " = " << value << " +- " << conf << ", exact " << exact;
  };
  expect_within(sobol.at("h0"), "S1", S1_h0);
  expect_within(sobol.at("e"), "S1", S1_e);
  expect_within(sobol.at("h0"), "ST", 1.0 - S1_e);
  expect_within(sobol.at("e"), "ST", 1.0 - S1_h0);
}

TEST(Study, BallSobolIndicesAgainstClosedForms) {
  expect_ball_sobol_indices(sweep::summary_json(run(ball_study(8192, true, true))));
}

TEST(Study, SummaryBitwiseEqualForChunkSizesThreadsAndShards) {
  // 3 blocks of 1024 (the last one short), a Saltelli design over h0, e designed: event records,
  // boundary terms (of the horizon and of settling), the referee's pairs.
  const std::uint64_t block = 1024;
  json study = ball_study(2600, false, true);
  study["options"]["v_stop"] = 2.0;
  study["objectives"].push_back({{"name", "bounces"}, {"event_count", true}});
  study["gradient_check"] = {{"delta", 0.01}};
  study["options"]["dt"] = 0.004;  // the bits, not the accuracy, are under test
  sweep::StudyRun big;
  const std::string reference = sweep::summary_json(run(study, big, block)).dump();
  for (std::uint64_t budget : {std::uint64_t(20000), std::uint64_t(333333), std::uint64_t(5000000)}) {
    sweep::StudyRun r;
    r.memory_budget = budget;
    EXPECT_EQ(sweep::summary_json(run(study, r, block)).dump(), reference) << "memory budget " << budget;
  }
  for (int threads : {1, 2}) {
    json s = study;
    s["options"]["threads"] = threads;
    EXPECT_EQ(sweep::summary_json(run(s, {}, block)).dump(), reference) << threads << " threads";
  }
  std::vector<sweep::StudyResult> shards;
  for (int shard : {2, 0, 1}) {
    sweep::StudyRun r;
    r.shard = shard;
    r.n_shards = 3;
    r.memory_budget = 100000 + 50000 * shard;
    json s = study;
    s["options"]["threads"] = 1 + shard % 2;  // shards may run with other thread counts
    shards.push_back(sweep::result_from_json(json::parse(sweep::result_to_json(run(s, r, block)).dump())));
    EXPECT_FALSE(shards.back().partial.complete());
  }
  EXPECT_EQ(sweep::summary_json(sweep::merge_results(shards)).dump(), reference);
}

TEST(Study, AdaptiveStepsAgainstClosedFormsWithTheSameBitsPerChunk) {
  // options.method dopri5 through a study: the mean of t2 and its gradient as with RK4, and the
  // summary's bits independent of the chunking and the threads.
  json study = ball_study(3000, false, false);
  study["options"]["method"] = "dopri5";
  study["options"]["rtol"] = 1e-10;
  study["options"]["atol"] = 1e-10;
  const std::uint64_t block = 1024;
  const json s = sweep::summary_json(run(study, {}, block));
  const json& t2 = s.at("objectives").at("t2");
  const double c = std::sqrt(2.0 / g);
  EXPECT_NEAR(t2.at("mean").get<double>(), c * mean_sqrt_h0 * 2.6, 4 * t2.at("std_error").get<double>());
  const json& grad = t2.at("gradient").at("e");
  EXPECT_NEAR(grad.at("mean").get<double>(), 2 * c * mean_sqrt_h0, 4 * grad.at("std_error").get<double>());
  for (std::uint64_t budget : {std::uint64_t(20000), std::uint64_t(5000000)}) {
    sweep::StudyRun r;
    r.memory_budget = budget;
    EXPECT_EQ(sweep::summary_json(run(study, r, block)).dump(), s.dump()) << "memory budget " << budget;
  }
  json two_threads = study;
  two_threads["options"]["threads"] = 2;
  EXPECT_EQ(sweep::summary_json(run(two_threads, {}, block)).dump(), s.dump());
}

TEST(Study, StoppedRunKeepsItsBlocksAndResumesToTheSameSummary) {
  const json study_json = ball_study(6000, true, false);
  const io::ModelChoice choice = io::parse_model_choice(study_json);
  const AnyModel model = configure_builtin_model(choice.name, choice.config);
  sweep::Study study = sweep::parse_study(study_json, model.info());
  study.block_size = 500;  // 12 blocks
  sweep::StudyRun plain;
  plain.backend = Backend::Cpu;
  plain.memory_budget = 20000;  // chunks smaller than a block: blocks complete across chunks
  const std::string reference = sweep::summary_json(sweep::run_study(model, study, plain)).dump();

  // Interrupted once 1200 samples are done (at least 2 whole blocks), as a signal would.
  std::optional<sweep::StudyResult> kept;
  sweep::StudyRun stopping = plain;
  stopping.progress = [](std::uint64_t done, std::uint64_t) {
    if (done >= 1200) request_interrupt(SIGINT);
  };
  stopping.keep_partial = [&kept](const sweep::StudyResult& r) { kept = r; };
  EXPECT_THROW(sweep::run_study(model, study, stopping), Interrupted);
  interrupt_request().store(0);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->partial.blocks.first, 0u);
  EXPECT_GE(kept->partial.blocks.end, 2u);
  EXPECT_LT(kept->partial.blocks.end, 12u);

  // Resumed from the kept partial as a file holds it: the whole study, bit for bit.
  const sweep::StudyResult from_file = sweep::result_from_json(json::parse(sweep::result_to_json(*kept).dump()));
  sweep::StudyRun resuming = plain;
  resuming.resume = &from_file;
  resuming.memory_budget = 5000000;  // how the rest runs does not matter
  EXPECT_EQ(sweep::summary_json(sweep::run_study(model, study, resuming)).dump(), reference);

  // Another study's partial is refused before anything runs, and so is per-sample output.
  sweep::Study other = study;
  other.seed = 8;
  EXPECT_THROW(sweep::run_study(model, other, resuming), InvalidInput);
  resuming.per_sample_prefix = "never_written";
  EXPECT_THROW(sweep::run_study(model, study, resuming), InvalidInput);
}

TEST(Study, ScrambledSobolPointsBeatTheirIidErrorAndKeepTheirBits) {
  json study = ball_study(8192, false, false);
  study["sampling"] = "scrambled_sobol";
  const std::string reference = sweep::summary_json(run(study)).dump();
  const json s = json::parse(reference);
  EXPECT_EQ(s.at("sampling").get<std::string>(), "scrambled_sobol");
  // t2 is smooth in h0: the stratified points' error is orders below the iid standard error that
  // the summary reports (docs/sweep.md says so), here below 1 % of it.
  const json& t2 = s.at("objectives").at("t2");
  const double c = std::sqrt(2.0 / g);
  EXPECT_LT(std::fabs(t2.at("mean").get<double>() - c * mean_sqrt_h0 * 2.6), 0.01 * t2.at("std_error").get<double>());
  const json& grad = t2.at("gradient").at("e");
  EXPECT_LT(std::fabs(grad.at("mean").get<double>() - 2 * c * mean_sqrt_h0), 0.01 * grad.at("std_error").get<double>());
  // Points are random access: chunking and shards change nothing.
  sweep::StudyRun small;
  small.memory_budget = 30000;
  EXPECT_EQ(sweep::summary_json(run(study, small)).dump(), reference);
  std::vector<sweep::StudyResult> shards;
  for (int shard : {1, 0}) {
    sweep::StudyRun r;
    r.shard = shard;
    r.n_shards = 2;
    shards.push_back(run(study, r));
  }
  EXPECT_EQ(sweep::summary_json(sweep::merge_results(shards)).dump(), reference);
  // And they differ from the random points' study.
  EXPECT_NE(sweep::summary_json(run(ball_study(8192, false, false))).at("objectives").at("t2").at("mean"),
            t2.at("mean"));
}

TEST(Study, ScrambledSobolSaltelliDesignAgainstClosedForms) {
  json study = ball_study(4096, true, true);
  study["sampling"] = "scrambled_sobol";
  expect_ball_sobol_indices(sweep::summary_json(run(study)));
}

TEST(Study, BadStudiesNameTheKey) {
  auto expect_bad = [](json study, const std::string& key) {
    try {
      run(study);
      ADD_FAILURE() << "accepted a study with a bad " << key;
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  json s = ball_study(100, false, false);
  s["parameters"]["h0"] = json{{"dist", "beta"}, {"low", 1.0}, {"high", 2.0}};
  expect_bad(s, "parameters.h0.dist");
  s = ball_study(100, false, false);
  s["parameters"]["h0"]["low"] = 3.0;
  expect_bad(s, "parameters.h0");
  s = ball_study(100, false, false);
  s["parameters"]["h0"] = json{{"dist", "normal"}, {"mean", 1.0}, {"sigma", 0.0}};
  expect_bad(s, "parameters.h0");
  s = ball_study(100, false, false);
  s["parameters"]["e"] = json{{"design", 0.8}, {"dist", "uniform"}, {"low", 0.6}, {"high", 0.8}};
  expect_bad(s, "parameters.e");
  s = ball_study(100, false, false);
  s["samples"] = 0;
  expect_bad(s, "samples");
  s = ball_study(100, false, false);
  s["objectives"][0]["event_time"] = 16;
  expect_bad(s, "objectives[0].event_time");
  s = ball_study(100, false, false);
  s["objectives"][0]["event_time"] = json{{"event", 1}, {"guard", 1}};  // the ball has guard 0 only
  expect_bad(s, "objectives[0].event_time.guard");
  s = ball_study(100, false, false);
  s["objectives"][0]["event_time"] = json{{"event", 1}, {"guard", "ground"}};  // a C++ model's guards have no names
  expect_bad(s, "objectives[0].event_time.guard");
  s = ball_study(100, false, false);
  s["objectives"][0]["weight"] = 2;
  expect_bad(s, "objectives[0].weight");
  s = ball_study(100, false, false);
  s["parameters"].erase("v0");
  expect_bad(s, "parameters.v0");
  s = ball_study(100, false, false);
  s["sampels"] = 10;
  expect_bad(s, "sampels");
  s = ball_study(100, false, false);
  s["sampling"] = "latin_hypercube";
  expect_bad(s, "sampling");
  s = ball_study(100, false, false);
  s["parameters"]["h0"] = 1.5;
  s["sampling"] = "scrambled_sobol";
  expect_bad(s, "sampling");  // nothing sampled: no dimension for the points
}

using saltation::testing::run_cli;

TEST(SweepCli, SummaryHoldsTheDocumentedKeysAndShardsMergeToIt) {
  ASSERT_NE(std::getenv("SALTATION_CLI"), nullptr) << "ctest sets SALTATION_CLI";
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("saltation_sweep_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "study.json") << ball_study(9000, true, true).dump();
  const std::string study = "'" + (dir / "study.json").string() + "'";
  ASSERT_EQ(run_cli("sweep " + study + " --backend cpu --out '" + (dir / "whole").string() + "'"), 0);
  std::ifstream f(dir / "whole" / "summary.json");
  const json s = json::parse(f);
  const json& t2 = s.at("objectives").at("t2");
  for (const char* key : {"mean", "std_error"}) EXPECT_TRUE(t2.contains(key)) << key;
  for (const char* p : {"h0", "e"})
    for (const char* key : {"S1", "S1_conf", "ST", "ST_conf"})
      EXPECT_TRUE(t2.at("sobol").at(p).contains(key)) << p << key;
  for (const char* key : {"version", "git_hash", "seed", "backend", "options", "samples", "wall_seconds"})
    EXPECT_TRUE(s.at("provenance").contains(key)) << key;
  for (int shard = 0; shard < 2; ++shard)
    ASSERT_EQ(run_cli("sweep " + study + " --backend cpu --shard " + std::to_string(shard) + "/2 --out '" +
                      (dir / ("shard" + std::to_string(shard))).string() + "'"),
              0);
  EXPECT_FALSE(fs::exists(dir / "shard0" / "summary.json")) << "a shard alone is not the study";
  ASSERT_EQ(run_cli("merge '" + (dir / "shard0").string() + "' '" + (dir / "shard1").string() + "' --out '" +
                    (dir / "merged").string() + "'"),
            0);
  std::ifstream m(dir / "merged" / "summary.json");
  json merged = json::parse(m), whole = s;
  merged.erase("provenance");
  whole.erase("provenance");
  EXPECT_EQ(merged.dump(), whole.dump());
  EXPECT_EQ(run_cli("sweep " + study + " --shard 2/2"), 2) << "a bad shard is invalid input";
  fs::remove_all(dir);
}

// A design study's summary through the command: per objective and design parameter the chosen
// estimate with its estimator, the discontinuity diagnostic and the referee; the whole-trajectory
// share under its explicit name only.
TEST(SweepCli, SummaryHoldsEachGradientsEstimatorDiagnosticAndReferee) {
  ASSERT_NE(std::getenv("SALTATION_CLI"), nullptr) << "ctest sets SALTATION_CLI";
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("saltation_gradients_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  json study = ball_study(2000, false, false);
  study["objectives"].push_back({{"name", "bounces"}, {"event_count", true}});
  study["gradient_check"] = {{"delta", 0.01}};
  std::ofstream(dir / "study.json") << study.dump();
  ASSERT_EQ(
      run_cli("sweep '" + (dir / "study.json").string() + "' --backend cpu --out '" + (dir / "out").string() + "'"), 0);
  std::ifstream f(dir / "out" / "summary.json");
  const json s = json::parse(f);
  EXPECT_TRUE(s.contains("event_count_change_fraction"));
  EXPECT_FALSE(s.contains("topology_change_fraction"));
  for (const char* name : {"t2", "x", "bounces"}) {
    const json& g = s.at("objectives").at(name).at("gradient").at("e");
    EXPECT_EQ(g.at("estimator"), "corrected") << name;
    for (const char* key : {"mean", "std_error", "pathwise", "corrected", "discontinuity", "referee"})
      EXPECT_TRUE(g.contains(key)) << name << " " << key;
    for (const char* key : {"fraction", "std_error", "boundary_term", "boundary_term_std_error", "bandwidth"})
      EXPECT_TRUE(g.at("discontinuity").contains(key)) << name << " " << key;
    EXPECT_TRUE(g.at("referee").contains("agrees")) << name;
  }
  EXPECT_EQ(s.at("objectives").at("t2").at("gradient").at("e").at("discontinuity").at("fraction").get<double>(), 0.0);
  EXPECT_GT(s.at("objectives").at("bounces").at("gradient").at("e").at("discontinuity").at("fraction").get<double>(),
            0.0);
  fs::remove_all(dir);
}

TEST(SweepCli, SigintAndSigtermStopWithinASecondAndWriteNothing) {
  ASSERT_NE(std::getenv("SALTATION_CLI"), nullptr) << "ctest sets SALTATION_CLI";
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("saltation_interrupt_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "study.json") << ball_study(100000000, false, false).dump();  // hours of work
  for (const auto& [signal, code] : {std::pair<const char*, int>{"INT", 130}, {"TERM", 143}}) {
    const fs::path out = dir / signal;
    const auto start = std::chrono::steady_clock::now();
    // timeout sends the signal after 1 s and, with --preserve-status, exits as the command did. It
    // signals the command and then its process group: the CLI must take the two for one request.
    const int status = std::system(("timeout --preserve-status -s " + std::string(signal) + " 1 '" +
                                    std::getenv("SALTATION_CLI") + "' sweep '" + (dir / "study.json").string() +
                                    "' --backend cpu --per-sample --out '" + out.string() + "' > /dev/null 2>&1")
                                       .c_str());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), code) << "SIG" << signal;
    EXPECT_LT(seconds, 2.5) << "SIG" << signal << " must stop the run within a second";
    if (fs::exists(out))
      for (const auto& entry : fs::directory_iterator(out)) ADD_FAILURE() << "left behind: " << entry.path();
  }
  fs::remove_all(dir);
}

TEST(SweepCli, ResumeGoesOnFromAKeptPartialOrAShard) {
  ASSERT_NE(std::getenv("SALTATION_CLI"), nullptr) << "ctest sets SALTATION_CLI";
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("saltation_resume_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "study.json") << ball_study(9000, true, false).dump();  // 3 blocks
  const std::string study = "'" + (dir / "study.json").string() + "' --backend cpu";
  auto summary = [](const fs::path& folder) {
    json s = json::parse(std::ifstream(folder / "summary.json"));
    s.erase("provenance");
    return s.dump();
  };
  ASSERT_EQ(run_cli("sweep " + study + " --out '" + (dir / "whole").string() + "'"), 0);
  // The first shard's partial is what a run stopped after its first block keeps.
  ASSERT_EQ(run_cli("sweep " + study + " --shard 0/2 --out '" + (dir / "part").string() + "'"), 0);
  ASSERT_EQ(run_cli("sweep " + study + " --resume '" + (dir / "part").string() + "'"), 0);
  EXPECT_EQ(summary(dir / "part"), summary(dir / "whole"));
  EXPECT_EQ(run_cli("sweep " + study + " --resume '" + (dir / "part").string() + "' --out '" +
                    (dir / "again").string() + "'"),
            2)
      << "nothing is left to run";
  EXPECT_EQ(run_cli("sweep " + study + " --seed 8 --resume '" + (dir / "part").string() + "' --out '" +
                    (dir / "other").string() + "'"),
            2)
      << "another study's partial";
  EXPECT_EQ(run_cli("sweep " + study + " --keep-partial --per-sample --out '" + (dir / "both").string() + "'"), 2);

  // SIGINT with --keep-partial (a long study, small chunks): exit 130, no temporary file, and what
  // is kept, if a block finished within the 2 s, starts at block 0.
  std::ofstream(dir / "long.json") << ball_study(100000000, false, false).dump();
  const fs::path kept = dir / "kept";
  const int status =
      std::system(("timeout --preserve-status -s INT 2 '" + std::string(std::getenv("SALTATION_CLI")) + "' sweep '" +
                   (dir / "long.json").string() + "' --backend cpu --memory-budget 1M --keep-partial --out '" +
                   kept.string() + "' > /dev/null 2>&1")
                      .c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  if (fs::exists(kept))
    for (const auto& entry : fs::directory_iterator(kept)) {
      ASSERT_EQ(entry.path().filename(), "partial.json") << "left behind: " << entry.path();
      const json p = json::parse(std::ifstream(entry.path())).at("partial");
      EXPECT_EQ(p.at("first_block").get<int>(), 0);
      EXPECT_GT(p.at("end_block").get<int>(), 0);
    }
  fs::remove_all(dir);
}

namespace {

// The data of a little-endian float64 NPY file (format 1.0, as io::NpyWriter writes it).
std::vector<double> read_npy(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::size_t header = static_cast<unsigned char>(bytes.at(8)) | (static_cast<unsigned char>(bytes.at(9)) << 8);
  std::vector<double> data((bytes.size() - 10 - header) / sizeof(double));
  std::memcpy(data.data(), bytes.data() + 10 + header, data.size() * sizeof(double));
  return data;
}

}  // namespace

TEST(SweepCli, PerSampleSaltelliRowsInSalibLayout) {
  ASSERT_NE(std::getenv("SALTATION_CLI"), nullptr) << "ctest sets SALTATION_CLI";
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("saltation_salib_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "study.json") << ball_study(2048, true, true).dump();
  ASSERT_EQ(
      run_cli("sweep '" + (dir / "study.json").string() + "' --backend cpu --per-sample --out '" + dir.string() + "'"),
      0);
  const std::vector<double> x = read_npy(dir / "samples_salib_X.npy"), y = read_npy(dir / "samples_salib_Y_t2.npy");
  const int k = 2;  // h0 and e
  const std::size_t n = 2048;
  ASSERT_EQ(y.size(), n * (k + 2));
  ASSERT_EQ(x.size(), n * (k + 2) * k);
  // Row order per base sample: A, AB_h0, AB_e, B. AB_h0 takes h0 from B and e from A.
  for (std::size_t j = 0; j < n; ++j) {
    const double* rows = x.data() + j * (k + 2) * k;
    EXPECT_EQ(rows[1 * k + 0], rows[3 * k + 0]);
    EXPECT_EQ(rows[1 * k + 1], rows[0 * k + 1]);
    EXPECT_EQ(rows[2 * k + 1], rows[3 * k + 1]);
  }
  // Jansen's total effect from these rows equals the summary's (same samples, other summation).
  std::ifstream f(dir / "summary.json");
  const json sobol = json::parse(f).at("objectives").at("t2").at("sobol");
  double mean = 0.0, m2 = 0.0;
  for (std::size_t j = 0; j < n; ++j)
    for (int r : {0, k + 1}) mean += y[j * (k + 2) + r] / (2.0 * n);
  for (std::size_t j = 0; j < n; ++j)
    for (int r : {0, k + 1}) m2 += std::pow(y[j * (k + 2) + r] - mean, 2) / (2.0 * n);
  const char* names[] = {"h0", "e"};
  for (int i = 0; i < k; ++i) {
    double jansen = 0.0;
    for (std::size_t j = 0; j < n; ++j) jansen += std::pow(y[j * (k + 2)] - y[j * (k + 2) + 1 + i], 2) / (2.0 * n);
    EXPECT_NEAR(jansen / m2, sobol.at(names[i]).at("ST").get<double>(), 1e-3) << names[i];
  }
  fs::remove_all(dir);
}

TEST(Study, UserObjectiveByTheChainRule) {
  namespace fs = std::filesystem;
  const json study_json = ball_study(5000, false, false);
  const io::ModelChoice choice = io::parse_model_choice(study_json);
  const AnyModel model = configure_builtin_model(choice.name, choice.config);
  sweep::Study study = sweep::parse_study(study_json, model.info());
  const double c = 1.4;
  study.user_objectives.push_back({"miss", {"t2"}, [c](const double* y, double* df_dy) {
                                     df_dy[0] = 2.0 * (y[0] - c);
                                     return (y[0] - c) * (y[0] - c);
                                   }});
  const fs::path dir = fs::temp_directory_path() / ("saltation_user_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  sweep::StudyRun run;
  run.backend = Backend::Cpu;
  run.per_sample_prefix = (dir / "samples").string();
  const json s = sweep::summary_json(sweep::run_study(model, study, run));
  // From the per-sample t2: L = (t2 - c)^2, and dL/de = 2 (t2 - c) dt2/de with dt2/de = 2 t1 = t2 / 1.3.
  const std::vector<double> t2 = read_npy(dir / "samples_t2.npy");
  ASSERT_EQ(t2.size(), 5000u);
  double mean = 0.0, gradient = 0.0;
  for (double t : t2) mean += (t - c) * (t - c) / t2.size(), gradient += 2.0 * (t - c) * t / 1.3 / t2.size();
  const json& miss = s.at("objectives").at("miss");
  EXPECT_NEAR(miss.at("mean").get<double>(), mean, 1e-12 * mean);
  EXPECT_NEAR(miss.at("gradient").at("e").at("mean").get<double>(), gradient, 1e-9 * std::fabs(gradient));
  EXPECT_EQ(miss.at("definition").at("user_inputs"), json::array({"t2"}));
  // A user objective of a built-in one that does not exist is refused.
  study.user_objectives.push_back({"bad", {"t3"}, study.user_objectives.front().f});
  EXPECT_THROW(sweep::run_study(model, study, run), InvalidInput);
  fs::remove_all(dir);
}
