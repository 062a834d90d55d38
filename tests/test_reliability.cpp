// The one error format and the exit code of each class of failure, for every command
// (docs/reliability.md): JSON syntax errors carry their line and column, argument errors are
// invalid input, `saltation disks` writes nothing when interrupted.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "saltation/backend.hpp"
#include "saltation/c_api.h"
#include "saltation/cuda.hpp"
#include "saltation/errors.hpp"
#include "saltation/io/files.hpp"
#include "saltation/registry.hpp"
#include "saltation/sweep/partial_file.hpp"

namespace fs = std::filesystem;

namespace {

// The InvalidInput that parse_json throws for `text`.
saltation::InvalidInput parse_failure(const std::string& text) {
  try {
    saltation::io::parse_json(text);
  } catch (const saltation::InvalidInput& e) {
    return e;
  }
  ADD_FAILURE() << "parsed without error: " << text;
  return saltation::InvalidInput("", -1, "");
}

struct Outcome {
  int exit_code;
  std::string err;
  double seconds;  // wall time of the command
};

class Commands : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* cli = std::getenv("SALTATION_CLI");
    ASSERT_NE(cli, nullptr) << "SALTATION_CLI must point at the saltation binary (ctest sets it)";
    cli_ = cli;
    dir_ = fs::temp_directory_path() / ("saltation_reliability_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `saltation ARGS` (with `prefix` before it, e.g. a timeout) and returns its exit code and stderr.
  Outcome run(const std::string& args, const std::string& prefix = "") const {
    const fs::path err = dir_ / "err.txt";
    const auto start = std::chrono::steady_clock::now();
    const int status =
        std::system((prefix + "'" + cli_ + "' " + args + " > /dev/null 2> '" + err.string() + "'").c_str());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::ifstream e(err);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1,
            std::string((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>()), seconds};
  }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return "'" + (dir_ / name).string() + "'";
  }
  std::string path(const std::string& name) const { return "'" + (dir_ / name).string() + "'"; }
  bool nothing_but_inputs_left() const {
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      if (name != "err.txt" && name.find(".in.json") == std::string::npos) return false;
    }
    return true;
  }

  std::string cli_;
  fs::path dir_;
};

const char* kBall =
    R"({"model": "bouncing_ball", "options": {"t_final": 1.0, "dt": 0.01}, "theta": [[1.0, 0.0, 0.8]]})";

}  // namespace

TEST(JsonErrors, SyntaxErrorsNameLineAndColumn) {
  const auto e = parse_failure("{\n  \"model\": \"bouncing_ball\",\n  \"theta\": [[1, 2,]]\n}");
  EXPECT_EQ(e.parameter(), "input");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.column(), 19);  // the ']' after the trailing comma
  EXPECT_EQ(std::string(e.what()).rfind("invalid input: input (line 3, column 19): not valid JSON", 0), 0) << e.what();
  EXPECT_EQ(std::string(e.what()).find("[json.exception"), std::string::npos)
      << "nlohmann's prefix is dropped: " << e.what();

  const auto first = parse_failure("{\"a\" 1}");
  EXPECT_EQ(first.line(), 1);
  EXPECT_EQ(first.column(), 6) << first.what();

  const auto end = parse_failure("{\"a\": 1,\n");  // the end of the input, after the last newline
  EXPECT_EQ(end.line(), 2);
  EXPECT_EQ(end.column(), 1);
}

TEST(JsonErrors, ErrorsWithoutAPlaceKeepTheirFormat) {
  const saltation::InvalidInput e("e", 1, "theta[2] = 1.5 must be in [0, 1]");
  EXPECT_STREQ(e.what(), "invalid input: e (row 1): theta[2] = 1.5 must be in [0, 1]");
  EXPECT_EQ(e.line(), 0);
  const saltation::InvalidInput both("theta", 4, 7, 2, "bad");
  EXPECT_STREQ(both.what(), "invalid input: theta (row 4, line 7, column 2): bad");
}

TEST_F(Commands, SyntaxErrorOfARequestFileIsInvalidInputWithItsPlace) {
  const Outcome r = run("solve " + file("bad.in.json", "{\"model\": \"bouncing_ball\",\n \"theta\": [[1, 2 3]]}") +
                        " --out " + path("out.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("saltation: invalid input: input (line 2, column 18): not valid JSON", 0), 0) << r.err;
  EXPECT_TRUE(nothing_but_inputs_left());
}

TEST_F(Commands, ArgumentErrorsAreInvalidInputInTheOneFormat) {
  for (const std::string& args : {"solve " + file("ball.in.json", kBall) + " --no-such-flag", std::string("solve"),
                                  std::string("no-such-command"), "solve " + path("ball.in.json") + " --threads many",
                                  "disks " + path("ball.in.json") + " --format xml", std::string("")}) {
    const Outcome r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err.rfind("saltation: invalid input: arguments: ", 0), 0) << args << ": " << r.err;
  }
  EXPECT_EQ(run("--help").exit_code, 0);
  EXPECT_EQ(run("solve --help").exit_code, 0);
  EXPECT_EQ(run("--version").exit_code, 0);
}

TEST_F(Commands, ExitCodePerClassForSweepMergeAndDisks) {
  const std::string study = file("study.in.json", R"({"model": "bouncing_ball",
    "options": {"t_final": 1.0, "dt": 0.01, "event_capacity": 4},
    "parameters": {"h0": {"dist": "uniform", "low": 1.0, "high": 2.0}, "v0": 0.0, "e": 0.8},
    "objectives": [{"name": "t0", "event_time": 0}], "samples": 64})");
  EXPECT_EQ(run("sweep " + study + " --backend cpu --out " + path("sweep")).exit_code, 0);
  const Outcome bad_study = run("sweep " + file("bad_study.in.json", R"({"model": "bouncing_ball", "samples": 0})") +
                                " --out " + path("bad"));
  EXPECT_EQ(bad_study.exit_code, 2);
  EXPECT_EQ(bad_study.err.rfind("saltation: invalid input: ", 0), 0) << bad_study.err;
  const Outcome missing_study = run("sweep " + path("missing.json") + " --out " + path("bad"));
  EXPECT_EQ(missing_study.exit_code, 3);
  EXPECT_EQ(missing_study.err.rfind("saltation: I/O error: ", 0), 0) << missing_study.err;

  const Outcome missing_partial = run("merge " + path("nowhere") + " --out " + path("merged"));
  EXPECT_EQ(missing_partial.exit_code, 3) << missing_partial.err;
  fs::create_directories(dir_ / "not_a_shard");
  std::ofstream(dir_ / "not_a_shard" / "partial.json") << R"({"samples": 3})";
  const Outcome not_a_partial = run("merge " + path("not_a_shard") + " --out " + path("merged"));
  EXPECT_EQ(not_a_partial.exit_code, 2) << not_a_partial.err;
  EXPECT_FALSE(fs::exists(dir_ / "merged" / "summary.json"));

  const Outcome bad_disks = run(
      "disks " +
      file("disks.in.json",
           R"({"n_disks": 2, "dt": 0.01, "n_frames": 2, "radius": "big", "mass": 1, "positions": [[0, 0], [1, 0]]})"));
  EXPECT_EQ(bad_disks.exit_code, 2);
  EXPECT_EQ(bad_disks.err.rfind("saltation: invalid input: radius", 0), 0) << bad_disks.err;
  EXPECT_EQ(run("disks " + path("missing.json")).exit_code, 3);
}

TEST_F(Commands, InterruptedDisksRunWritesNothing) {
  // Seconds of rollouts (5000 systems, 2.5 10^5 steps each: 2.7 s in a Release build on 2 cores);
  // SIGINT after half a second, and the CPU engine stops between systems. Few frames, so that the
  // result arrays stay small (1.6 MB): with 1000 frames (320 MB) this test failed in CI runs right
  // after the build (2.8-3.6 s; a traced run spent 0.77 s in the kernel and 0.04 s in user code),
  // timing the allocation of the results rather than the engine.
  nlohmann::json request = {{"n_systems", 5000},
                            {"n_disks", 2},
                            {"dt", 0.002},
                            {"n_frames", 10},
                            {"stride", 25000},
                            {"radius", 0.5},
                            {"mass", 1.0},
                            {"positions", {{-0.54, 0.0}, {0.54, 0.0}}},
                            {"velocities", {{0.5, 0.0}, {-0.5, 0.0}}}};
  const std::string in = file("long.in.json", request.dump());
  const Outcome r = run("disks " + in + " --backend cpu --format npy --out " + path("rollout"),
                        "timeout --preserve-status -s INT 0.5 ");
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_LT(r.seconds, 1.5) << "the engine stops between systems, well before the 3 s rollout ends";
  EXPECT_EQ(r.err.rfind("saltation: interrupted: signal 2", 0), 0) << r.err;
  EXPECT_TRUE(nothing_but_inputs_left());
}

// A bouncing ball recording 2 10^9 events: 96 GB of event arrays for one trajectory.
saltation::Options huge_event_capacity() {
  saltation::Options o;
  o.t_final = 1.0;
  o.dt = 0.01;
  o.event_capacity = 2000000000;
  return o;
}

// Where 96 GB are available the huge request is not huge.
bool has_96_gb() { return saltation::available_host_memory() > 96000000000ull; }

TEST(MemoryEstimate, HugeRecordIsRefusedBeforeAllocatingWithItsEstimate) {
  if (has_96_gb()) GTEST_SKIP() << "this machine has 96 GB available";
  const saltation::AnyModel ball = saltation::configure_builtin_model("bouncing_ball", nlohmann::json::object());
  saltation::Batch batch(1, 3);
  batch.theta = {1.0, 0.0, 0.8};
  try {
    ball.solve(batch, huge_event_capacity(), saltation::Backend::Cpu);
    FAIL() << "a 96 GB record was not refused";
  } catch (const saltation::InvalidInput& e) {
    EXPECT_EQ(e.parameter(), "memory");
    const std::string what = e.what();
    EXPECT_NE(what.find("1 trajectories x 96000000032 bytes would take about 89.4 GiB"), std::string::npos) << what;
    EXPECT_NE(what.find("options.event_capacity"), std::string::npos) << what;
  }
  // The same request with a normal capacity solves.
  saltation::Options normal = huge_event_capacity();
  normal.event_capacity = 64;
  EXPECT_EQ(ball.solve(batch, normal, saltation::Backend::Cpu).n_events[0] > 0, true);
}

TEST(MemoryEstimate, CApiRefusesAHugeResultBeforeSolving) {
  nlohmann::json request = nlohmann::json::parse(kBall);
  request["options"]["event_capacity"] = 2000000000;
  char* result = nullptr;
  char* error = nullptr;
  EXPECT_EQ(saltation_solve_json(request.dump().c_str(), &result, &error), SALTATION_INVALID_INPUT);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(
      std::string(error).rfind("invalid input: result_json: the result JSON of 1 trajectories would be about ", 0), 0)
      << error;
  EXPECT_EQ(result, nullptr);
  saltation_free(error);
}

TEST(MemoryEstimate, ResultBytesAndBudget) {
  // bouncing_ball: N = 2, P = 3. C = 4 without sensitivities: 4 (2 + 8) + 8 (1 + 2 + 4 + 16) = 224.
  EXPECT_EQ(saltation::result_bytes_per_trajectory(2, 3, 4, false), 224u);
  // With them: + 8 (6 + 12 + 24) = 560.
  EXPECT_EQ(saltation::result_bytes_per_trajectory(2, 3, 4, true), 560u);
  EXPECT_GT(saltation::available_host_memory(), 0u);
  EXPECT_NO_THROW(saltation::check_host_memory(1000, 1000, "a run", "way out", 1000000));
  EXPECT_THROW(saltation::check_host_memory(1000, 1001, "a run", "way out", 1000000), saltation::InvalidInput);
  // 10^10 rows of 10^10 bytes: the product saturates instead of wrapping into "fits".
  EXPECT_THROW(saltation::check_host_memory(10000000000ull, 10000000000ull, "a run", "way out"),
               saltation::InvalidInput);
}

TEST_F(Commands, HugeRequestIsRefusedByTheCommandWithItsEstimate) {
  if (has_96_gb()) GTEST_SKIP() << "this machine has 96 GB available";
  nlohmann::json request = nlohmann::json::parse(kBall);
  request["options"]["event_capacity"] = 2000000000;
  const std::string in = file("huge.in.json", request.dump());
  // NPY streams in chunks, but one trajectory alone is beyond the memory available.
  const Outcome npy = run("solve " + in + " --format npy --memory-budget 400G --out " + path("out"));
  EXPECT_EQ(npy.exit_code, 2) << npy.err;
  EXPECT_EQ(npy.err.rfind("saltation: invalid input: memory: the results of bouncing_ball of 1 trajectories x "
                          "96000000032 bytes would take about 89.4 GiB of host memory",
                          0),
            0)
      << npy.err;
  const Outcome json = run("solve " + in);
  EXPECT_EQ(json.exit_code, 2) << json.err;
  EXPECT_EQ(json.err.rfind("saltation: invalid input: format: --format json of 1 trajectories would be about", 0), 0)
      << json.err;
  // A normal request under a budget it fits in, and the same one under a budget too small for it.
  const std::string ball = file("ball.in.json", kBall);
  EXPECT_EQ(run("solve " + ball + " --memory-budget 1M --out " + path("ok.json")).exit_code, 0);
  const Outcome tight = run("solve " + ball + " --memory-budget 100 --out " + path("tight.json"));
  EXPECT_EQ(tight.exit_code, 2) << tight.err;
  EXPECT_NE(tight.err.find("GiB of --memory-budget; use --format npy"), std::string::npos) << tight.err;
  EXPECT_FALSE(fs::exists(dir_ / "tight.json"));
}

// The CUDA driver's chunk loop runs through run_reporting_completed_rows; here a loop of 4 chunks of
// 250 rows whose third chunk fails, as a CUDA call would, without a device.
TEST(CudaFailure, NamesTheRowsThatCompleted) {
  try {
    saltation::cuda::run_reporting_completed_rows(1000, [](std::size_t& completed) {
      for (std::size_t first = 0; first < 1000; first += 250) {
        if (first == 500) throw saltation::CudaError("cudaStreamSynchronize: an illegal memory access", "solve.cuh", 1);
        completed = first + 250;
      }
    });
    FAIL() << "the failure did not come out";
  } catch (const saltation::cuda::ChunkFailure& e) {
    EXPECT_EQ(e.completed(), 500u);
    EXPECT_EQ(e.rows(), 1000u);
    EXPECT_STREQ(e.what(),
                 "solve.cuh:1: cudaStreamSynchronize: an illegal memory access; rows [0, 500) of 1000 had completed");
    // An outer loop (saltation solve's chunks) rewraps it in its own rows, keeping the cause.
    const saltation::cuda::ChunkFailure outer(e, 4000 + e.completed(), 10000);
    EXPECT_STREQ(outer.what(),
                 "solve.cuh:1: cudaStreamSynchronize: an illegal memory access; rows [0, 4500) of 10000 had completed");
  }
  // Anything else passes through unchanged.
  EXPECT_THROW(
      saltation::cuda::run_reporting_completed_rows(10, [](std::size_t&) { throw saltation::IoError("x", "y"); }),
      saltation::IoError);
}

namespace {

// The first dimension an NPY file's header gives, and the file's size.
std::pair<long, std::uintmax_t> npy_rows(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string header(128, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header.size()));
  const std::size_t at = header.find("'shape': (");
  if (at == std::string::npos) return {-1, 0};
  return {std::stol(header.substr(at + 10)), fs::file_size(file)};
}

}  // namespace

TEST_F(Commands, InterruptedSolveKeepsTheWrittenChunksOnlyWhenAsked) {
  // 40000 bouncing balls of up to 2 10^4 RK4 steps (each ends at its sixteenth bounce, about
  // 14000 steps) in chunks of a few rows: over 2 s even in AVX-512 lanes on one core; the signal
  // comes after one.
  constexpr int kRows = 40000;
  nlohmann::json request = nlohmann::json::parse(kBall);
  request["options"] = {{"t_final", 20.0}, {"dt", 0.001}, {"event_capacity", 16}};
  request["theta"] = nlohmann::json::array();
  for (int i = 0; i < kRows; ++i) request["theta"].push_back({1.0 + 0.00001 * i, 0.0, 0.99});
  const std::string in = file("long.in.json", request.dump());
  const std::string args = "solve " + in + " --backend cpu --format npy --memory-budget 8K --out " + path("run");

  const Outcome plain = run(args, "timeout --preserve-status -s INT 1 ");
  EXPECT_EQ(plain.exit_code, 130) << plain.err;
  EXPECT_NE(plain.err.find("nothing was written"), std::string::npos) << plain.err;
  EXPECT_TRUE(nothing_but_inputs_left());

  const Outcome kept = run(args + " --keep-partial", "timeout --preserve-status -s TERM 1 ");
  EXPECT_EQ(kept.exit_code, 143) << kept.err;
  EXPECT_EQ(kept.err.rfind("saltation: interrupted: signal 15: the run stopped before it finished; rows [0, ", 0), 0)
      << kept.err;
  EXPECT_FALSE(fs::exists(dir_ / "run.json"));
  const nlohmann::json index = nlohmann::json::parse(std::ifstream(dir_ / "run.partial.json"));
  const long rows = index.at("partial").at("rows").at(1).get<long>();
  EXPECT_GT(rows, 0);
  EXPECT_LT(rows, kRows);
  EXPECT_EQ(index.at("partial").at("of"), kRows);
  EXPECT_NE(kept.err.find("rows [0, " + std::to_string(rows) + ") of " + std::to_string(kRows) + " kept in "),
            std::string::npos)
      << kept.err;
  // Every array holds exactly the kept rows, and no temporary is left.
  for (const auto& [name, entry] : index.at("arrays").items()) {
    EXPECT_EQ(entry.at("shape").at(0).get<long>(), rows) << name;
    const auto [header_rows, bytes] = npy_rows(entry.at("file").get<std::string>());
    EXPECT_EQ(header_rows, rows) << name;
    std::uintmax_t row_bytes = entry.at("dtype") == "float64" ? 8 : 4;
    for (std::size_t d = 1; d < entry.at("shape").size(); ++d)
      row_bytes *= entry.at("shape").at(d).get<std::uintmax_t>();
    // The header (a multiple of 64 bytes) and the rows' data, nothing more.
    const std::uintmax_t data = static_cast<std::uintmax_t>(rows) * row_bytes;
    ASSERT_GT(bytes, data) << name;
    EXPECT_EQ((bytes - data) % 64, 0u) << name;
    EXPECT_LE(bytes - data, 256u) << name;
  }
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();

  // Only NPY output is written in chunks.
  EXPECT_EQ(run("solve " + in + " --keep-partial --out " + path("x.json")).exit_code, 2);
}

// ---- Nothing silently wrong (issue 40): overrides, edge values, output folders, merges.

namespace {

// A quick study: 4 blocks of 4096 samples of a bouncing ball (100 steps each).
const char* kStudy = R"({"model": "bouncing_ball",
  "options": {"t_final": 1.0, "dt": 0.01, "event_capacity": 4},
  "parameters": {"h0": {"dist": "uniform", "low": 1.0, "high": 2.0}, "v0": 0.0, "e": 0.8},
  "objectives": [{"name": "t0", "event_time": 0}, {"name": "bounces", "event_count": true}],
  "samples": 16384, "seed": 3})";

nlohmann::json read_json(const fs::path& path) { return nlohmann::json::parse(std::ifstream(path)); }

void write_json(const fs::path& path, const nlohmann::json& j) { std::ofstream(path) << j.dump(); }

// The partial.json of `dir` after `edit`, sealed again (valid hashes): only the invariants can
// tell it from a real one.
void edit_and_reseal(const fs::path& dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = read_json(dir / "partial.json");
  edit(j["partial"]);
  const saltation::sweep::PartialHashes h = saltation::sweep::partial_hashes(j);
  j["header_hash"] = h.header_hash;
  j["checksum"] = h.checksum;
  write_json(dir / "partial.json", j);
}

}  // namespace

TEST_F(Commands, NumericOverridesAreStrictRangeCheckedAndNamed) {
  const std::string study = file("study.in.json", kStudy);
  const std::vector<std::pair<std::string, std::string>> bad = {{"--samples 0", "--samples"},
                                                                {"--samples -5", "--samples"},
                                                                {"--samples 10000000000000000000", "--samples"},
                                                                {"--samples 1e3", "--samples"},
                                                                {"--samples 64.0", "--samples"},
                                                                {"--samples +64", "--samples"},
                                                                {"--seed -1", "--seed"},
                                                                {"--seed 18446744073709551615", "--seed"},
                                                                {"--seed 0x10", "--seed"},
                                                                {"--threads -2", "--threads"},
                                                                {"--threads 100000", "--threads"},
                                                                {"--threads 2.5", "--threads"},
                                                                {"--memory-budget inf", "--memory-budget"},
                                                                {"--memory-budget 1e30", "--memory-budget"},
                                                                {"--memory-budget 0.5", "--memory-budget"},
                                                                {"--memory-budget 0", "--memory-budget"},
                                                                {"--memory-budget 99999999999G", "--memory-budget"},
                                                                {"--memory-budget -1M", "--memory-budget"},
                                                                {"--shard 1/0", "--shard"},
                                                                {"--shard 2/2", "--shard"},
                                                                {"--shard -1/2", "--shard"},
                                                                {"--shard 1/2x", "--shard"},
                                                                {"--shard /2", "--shard"}};
  for (const auto& [args, flag] : bad) {
    const Outcome r = run("sweep " + study + " --backend cpu " + args + " --out " + path("out"));
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("saltation: invalid input: " + flag + ": ", 0), 0) << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "out")) << args << ": a refused run leaves no folder";
  }
  // The same rule for solve's --threads and --memory-budget.
  const std::string ball = file("ball.in.json", kBall);
  for (const std::string args : {"--threads 100000", "--threads -1", "--memory-budget 0.5", "--memory-budget inf"}) {
    const Outcome r = run("solve " + ball + " " + args + " --out " + path("out.json"));
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("saltation: invalid input: --" + args.substr(2, args.find(' ') - 2) + ": ", 0), 0)
        << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "out.json"));
  }
  // Values in range run as given, and the summary records them.
  const Outcome ok = run("sweep " + study +
                         " --backend cpu --samples 100 --seed 7 --threads 1 --memory-budget 1M --out " + path("ok"));
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const nlohmann::json summary = read_json(dir_ / "ok" / "summary.json");
  EXPECT_EQ(summary.at("samples"), 100);
  EXPECT_EQ(summary.at("seed"), 7);
  EXPECT_EQ(summary.at("objectives").at("bounces").at("n"), 100);
  EXPECT_EQ(run("sweep " + study + " --backend cpu --seed 9223372036854775807 --out " + path("max")).exit_code, 0);
  EXPECT_EQ(read_json(dir_ / "max" / "summary.json").at("seed"), 9223372036854775807ull);
}

TEST_F(Commands, EventCapacityZeroIsAValidResultInEveryFormat) {
  nlohmann::json request = nlohmann::json::parse(kBall);
  request["options"]["event_capacity"] = 0;
  const std::string in = file("zero.in.json", request.dump());
  for (const std::string format : {"json", "csv", "npy"}) {
    const Outcome r = run("solve " + in + " --format " + format + " --out " + path("out_" + format));
    EXPECT_EQ(r.exit_code, 0) << format << ": " << r.err;
  }
  const nlohmann::json j = read_json(dir_ / "out_json");
  EXPECT_EQ(j.at("trajectories").at(0).at("n_events"), 0);
  EXPECT_TRUE(j.at("trajectories").at(0).at("events_t").empty());
  EXPECT_EQ(run("solve " + in + " --summary").exit_code, 0);
  EXPECT_EQ(run("solve " + in).exit_code, 0);  // JSON on standard output
}

TEST_F(Commands, TFinalZeroIsRefusedNamingIt) {
  nlohmann::json request = nlohmann::json::parse(kBall);
  request["options"]["t_final"] = 0.0;
  const Outcome r = run("solve " + file("t0.in.json", request.dump()) + " --out " + path("out.json"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("saltation: invalid input: options.t_final: must be finite and > 0", 0), 0) << r.err;
  const Outcome flag = run("solve " + path("t0.in.json") + " --t-final 0 --out " + path("out.json"));
  EXPECT_EQ(flag.err.rfind("saltation: invalid input: --t-final: ", 0), 0) << flag.err;
  EXPECT_FALSE(fs::exists(dir_ / "out.json"));
}

TEST_F(Commands, AFolderWhereAFileBelongsIsAnIoErrorNamingIt) {
  fs::create_directories(dir_ / "folder.in.json");
  fs::create_directories(dir_ / "shard" / "partial.json");
  const std::string folder = (dir_ / "folder.in.json").string();
  for (const std::string command : {"solve", "sweep", "disks"}) {
    const Outcome r = run(command + " " + path("folder.in.json") + " --out " + path("out"));
    EXPECT_EQ(r.exit_code, 3) << command << ": " << r.err;
    EXPECT_EQ(r.err.rfind("saltation: I/O error: " + folder + ": is a folder", 0), 0) << command << ": " << r.err;
  }
  const Outcome merge = run("merge " + path("shard") + " --out " + path("merged"));
  EXPECT_EQ(merge.exit_code, 3) << merge.err;
  EXPECT_EQ(merge.err.rfind("saltation: I/O error: " + (dir_ / "shard" / "partial.json").string() + ": is a folder", 0),
            0)
      << merge.err;
  EXPECT_FALSE(fs::exists(dir_ / "merged"));
}

TEST_F(Commands, DisksAreCheckedBeforeAllocatingAndWallsNameTheirKey) {
  const nlohmann::json disks = {{"n_disks", 2},  {"dt", 0.01},  {"n_frames", 2000000000},
                                {"radius", 0.5}, {"mass", 1.0}, {"positions", {{-1.0, 0.0}, {1.0, 0.0}}}};
  if (saltation::available_host_memory() < 128000000000ull) {  // 2e9 frames x 2 disks x 4 values x 8 bytes
    const Outcome huge = run("disks " + file("huge.in.json", disks.dump()) + " --backend cpu");
    EXPECT_EQ(huge.exit_code, 2) << huge.err;
    EXPECT_EQ(huge.err.rfind("saltation: invalid input: memory: the frames of the disk rollout", 0), 0) << huge.err;
  }
  if (saltation::available_host_memory() < 208000000000ull) {  // 2e9 systems x 2 disks x 52 bytes
    nlohmann::json systems = disks;
    systems["n_frames"] = 2;
    systems["n_systems"] = 2000000000;  // the listed disks broadcast to every system
    const Outcome huge = run("disks " + file("systems.in.json", systems.dump()) + " --backend cpu");
    EXPECT_EQ(huge.exit_code, 2) << huge.err;
    EXPECT_EQ(huge.err.rfind("saltation: invalid input: memory: the disks of the request", 0), 0) << huge.err;
  }
  nlohmann::json walls = disks;
  walls["n_frames"] = 2;
  walls["walls"] = {{"lo", {-5.0, -5.0}}, {"hi", {5.0, -6.0}}};
  const Outcome r = run("disks " + file("walls.in.json", walls.dump()) + " --backend cpu");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("saltation: invalid input: walls.hi[1]: ", 0), 0) << r.err;
}

TEST_F(Commands, OutputFoldersAreRemovedWhenNothingWasWrittenIntoThem) {
  const std::string study = file("study.in.json", kStudy);
  // Refused after the flags were read: a shard without samples (4 blocks, 8 shards).
  const Outcome empty_shard = run("sweep " + study + " --backend cpu --shard 0/8 --out " + path("a/b/c"));
  EXPECT_EQ(empty_shard.exit_code, 2) << empty_shard.err;
  EXPECT_FALSE(fs::exists(dir_ / "a")) << "the folders the run created are gone";
  // Interrupted: the folder it created goes too.
  nlohmann::json long_study = nlohmann::json::parse(kStudy);
  long_study["samples"] = 100000000;
  const Outcome stopped =
      run("sweep " + file("long.in.json", long_study.dump()) + " --backend cpu --out " + path("stopped"),
          "timeout --preserve-status -s INT 1 ");
  EXPECT_EQ(stopped.exit_code, 130) << stopped.err;
  EXPECT_FALSE(fs::exists(dir_ / "stopped"));
  // A folder that was there stays, and only the lock is taken away.
  fs::create_directories(dir_ / "there");
  EXPECT_EQ(run("sweep " + study + " --backend cpu --shard 0/8 --out " + path("there")).exit_code, 2);
  EXPECT_TRUE(fs::is_directory(dir_ / "there"));
  EXPECT_TRUE(fs::is_empty(dir_ / "there"));
  // A file where the folder belongs is left as it is.
  std::ofstream(dir_ / "a_file") << "keep";
  const Outcome file_out = run("sweep " + study + " --backend cpu --out " + path("a_file"));
  EXPECT_EQ(file_out.exit_code, 3) << file_out.err;
  EXPECT_EQ(
      file_out.err.rfind("saltation: I/O error: " + (dir_ / "a_file").string() + ": exists and is not a folder", 0), 0)
      << file_out.err;
  EXPECT_TRUE(fs::is_regular_file(dir_ / "a_file"));
}

TEST_F(Commands, ASecondRunIntoALockedFolderIsRefusedNamingTheOther) {
  const std::string study = file("study.in.json", kStudy);
  fs::create_directories(dir_ / "busy");
  std::ofstream(dir_ / "busy" / ".saltation.lock") << ::getpid() << "\n";  // this test: alive
  const Outcome busy = run("sweep " + study + " --backend cpu --out " + path("busy"));
  EXPECT_EQ(busy.exit_code, 3) << busy.err;
  EXPECT_NE(busy.err.find("is in use by another saltation run (pid " + std::to_string(::getpid()) + ","),
            std::string::npos)
      << busy.err;
  EXPECT_FALSE(fs::exists(dir_ / "busy" / "summary.json"));
  EXPECT_TRUE(fs::exists(dir_ / "busy" / ".saltation.lock")) << "the other run's lock is not touched";
  // A lock whose process is gone (killed) is taken over, and released at the end.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  std::ofstream(dir_ / "busy" / ".saltation.lock", std::ios::trunc) << child << "\n";
  const Outcome stale = run("sweep " + study + " --backend cpu --out " + path("busy"));
  EXPECT_EQ(stale.exit_code, 0) << stale.err;
  EXPECT_TRUE(fs::exists(dir_ / "busy" / "summary.json"));
  EXPECT_FALSE(fs::exists(dir_ / "busy" / ".saltation.lock"));
}

class Merges : public Commands {
 protected:
  // Shards `shards` ("0/2", ...) of kStudy, each in folder "s<i>_<N>".
  void run_shards(std::initializer_list<const char*> shards) {
    const std::string study = file("study.in.json", kStudy);
    for (const std::string shard : shards) {
      const Outcome r = run("sweep " + study + " --backend cpu --shard " + shard + " --out " + path(folder(shard)));
      ASSERT_EQ(r.exit_code, 0) << shard << ": " << r.err;
    }
  }
  static std::string folder(std::string shard) { return "s" + shard.replace(shard.find('/'), 1, "_"); }
  Outcome merge(const std::string& dirs, const std::string& out = "merged") {
    std::string args;
    std::istringstream s(dirs);
    for (std::string d; s >> d;) args += path(d) + " ";
    return run("merge " + args + "--out " + path(out));
  }
  // The refusal names `file`'s path and says `what`; nothing is written.
  void expect_refused(const Outcome& r, const std::string& shard, const std::string& what) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("saltation: invalid input: " + (dir_ / shard / "partial.json").string() + ": ", 0), 0)
        << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "merged"));
  }
};

TEST_F(Merges, AnIncompleteCoverIsRefusedNamingTheMissingBlocksAndTheCommand) {
  run_shards({"0/2", "1/2", "0/3", "2/3", "1/3"});
  const Outcome half = merge("s0_2");
  EXPECT_EQ(half.exit_code, 2) << half.err;
  EXPECT_NE(half.err.find("missing blocks [2, 4) (samples [8192, 16384))"), std::string::npos) << half.err;
  EXPECT_NE(half.err.find("saltation sweep STUDY.json --samples 16384 --seed 3 --shard 1/2 --out SHARD_1"),
            std::string::npos)
      << half.err;
  EXPECT_FALSE(fs::exists(dir_ / "merged"));
  const Outcome gap = merge("s0_3 s2_3");
  EXPECT_NE(gap.err.find("missing blocks [1, 2) (samples [4096, 8192))"), std::string::npos) << gap.err;
  EXPECT_NE(gap.err.find("--shard 1/3 "), std::string::npos) << gap.err;
  const Outcome overlap = merge("s0_2 s1_3 s1_2");
  EXPECT_EQ(overlap.exit_code, 2) << overlap.err;
  EXPECT_NE(overlap.err.find("overlap"), std::string::npos) << overlap.err;
  EXPECT_FALSE(fs::exists(dir_ / "merged"));
  const Outcome whole = merge("s1_3 s2_3 s0_3");
  EXPECT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_TRUE(fs::exists(dir_ / "merged" / "summary.json"));
}

TEST_F(Merges, NeverWritesIntoOneOfItsInputs) {
  run_shards({"0/2", "1/2"});
  const std::string before = read_json(dir_ / "s0_2" / "partial.json").dump();
  const Outcome r = merge("s0_2 s1_2", "s0_2");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("saltation: invalid input: --out: ", 0), 0) << r.err;
  EXPECT_EQ(read_json(dir_ / "s0_2" / "partial.json").dump(), before);
  EXPECT_FALSE(fs::exists(dir_ / "s0_2" / "summary.json"));
  EXPECT_EQ(merge("s0_2 s1_2", "s1_2/.").exit_code, 2) << "the same folder spelled otherwise";
}

TEST_F(Merges, AnEditedOrDamagedPartialIsRefusedNamingItsPath) {
  run_shards({"0/2", "1/2"});
  const fs::path partial = dir_ / "s1_2" / "partial.json";
  const std::string original = read_json(partial).dump();
  auto restore = [&] { std::ofstream(partial) << original; };

  // Edited without resealing: the checksum no longer matches.
  nlohmann::json j = read_json(partial);
  j["partial"]["nodes"][0]["value"]["objectives"][0]["moments"]["mean"][0] = 0.5;
  write_json(partial, j);
  expect_refused(merge("s0_2 s1_2"), "s1_2", "checksum");
  j = read_json(partial);
  j["header"]["seed"] = 4;
  write_json(partial, j);
  expect_refused(merge("s0_2 s1_2"), "s1_2", "header_hash");

  // Truncated, a summary in its place, a string where a number belongs.
  std::ofstream(partial) << original.substr(0, original.size() / 2);
  expect_refused(merge("s0_2 s1_2"), "s1_2", "not a whole JSON file");
  restore();
  run_shards({"0/1"});
  fs::copy_file(dir_ / "s0_1" / "summary.json", partial, fs::copy_options::overwrite_existing);
  expect_refused(merge("s0_2 s1_2"), "s1_2", "is a summary.json");
  restore();
  edit_and_reseal(dir_ / "s1_2", [](nlohmann::json& p) { p["nodes"][0]["value"]["outcomes"]["n_finite"] = "128"; });
  expect_refused(merge("s0_2 s1_2"), "s1_2", "n_finite: must be a whole number");

  // Resealed edits that break an invariant.
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> edits = {
      {[](nlohmann::json& p) { p["nodes"][0]["value"]["objectives"][0]["moments"]["weight"] = -128.0; },
       "moments.weight"},
      {[](nlohmann::json& p) { p["nodes"][0]["value"]["objectives"][0]["moments"]["weight"] = 128000.0; },
       "moments.weight"},
      {[](nlohmann::json& p) { p["nodes"][0]["value"]["objectives"][0]["moments"]["mean"][0] = 1000.0; },
       "min <= mean <= max"},
      {[](nlohmann::json& p) { p["nodes"][0]["value"]["objectives"][0]["histograms"][0]["counts"][3] = 99999; },
       "histograms[0]: counts"},
      {[](nlohmann::json& p) {
         auto& s = p["nodes"][0]["value"]["objectives"][0];
         s["n_finite"] = s["n_finite"].get<int>() + 1000;
       },
       "n_finite + n_non_finite"},
      {[](nlohmann::json& p) { p["end_block"] = 3; }, "end_block"},
      // libFuzzer's find: a count beyond uint64_t in a summary missing a key reached the reader.
      {[](nlohmann::json& p) {
         auto& s = p["nodes"][0]["value"]["outcomes"];
         s.erase("n_finite");
         s["histograms"][0]["counts"][0] = 7.11845e22;
       },
       "outcomes.n_finite: must be a whole number"}};
  for (const auto& [edit, what] : edits) {
    restore();
    edit_and_reseal(dir_ / "s1_2", edit);
    expect_refused(merge("s0_2 s1_2"), "s1_2", what);
  }
  restore();
  EXPECT_EQ(merge("s0_2 s1_2").exit_code, 0);
}

TEST_F(Merges, ResumeVerifiesTheKeptPartialToo) {
  run_shards({"0/1"});
  nlohmann::json j = read_json(dir_ / "s0_1" / "partial.json");
  j["partial"]["first_block"] = 1;
  write_json(dir_ / "s0_1" / "partial.json", j);
  const Outcome r = run("sweep " + path("study.in.json") + " --backend cpu --resume " + path("s0_1"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("saltation: invalid input: " + (dir_ / "s0_1" / "partial.json").string() + ": checksum", 0), 0)
      << r.err;
}
