// The `saltation solve` command: JSON in, JSON out, and bad input that names the parameter and
// the row, exits non-zero and leaves no output file behind.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "saltation/backend.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct CliRun {
  int exit_code;
  std::string err;
};

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* cli = std::getenv("SALTATION_CLI");
    ASSERT_NE(cli, nullptr) << "SALTATION_CLI must point at the saltation binary (ctest sets it)";
    cli_ = cli;
    dir_ = fs::temp_directory_path() / ("saltation_cli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CliRun solve(const std::string& input_text, const std::string& extra = "") {
    const fs::path in = dir_ / "in.json", err = dir_ / "err.txt";
    std::ofstream(in) << input_text;
    const std::string cmd = "'" + cli_ + "' solve '" + in.string() + "' --out '" + out().string() + "' " + extra +
                            " 2> '" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    std::ifstream e(err);
    std::stringstream ss;
    ss << e.rdbuf();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ss.str()};
  }
  fs::path out() const { return dir_ / "out.json"; }
  json output() const {
    std::ifstream f(out());
    return json::parse(f);
  }
  void expect_rejected(const std::string& input, const std::string& must_mention, const std::string& row = "") {
    const CliRun r = solve(input);
    EXPECT_EQ(r.exit_code, 2) << "invalid input exits with 2: " << input;
    EXPECT_NE(r.err.find(must_mention), std::string::npos) << "error should name " << must_mention << ": " << r.err;
    if (!row.empty()) {
      EXPECT_NE(r.err.find(row), std::string::npos) << "error should name " << row << ": " << r.err;
    }
    EXPECT_FALSE(fs::exists(out())) << "no output file may be written on failure";
    for (const auto& entry : fs::directory_iterator(dir_))
      EXPECT_EQ(entry.path().filename().string().find("out.json.tmp"), std::string::npos) << "leftover temporary file";
  }

  std::string cli_;
  fs::path dir_;
};

const char* kBall = R"({"model": "bouncing_ball", "config": {"g": 9.81},
  "options": {"t_final": 3.0, "dt": 0.001, "event_capacity": 8},
  "theta": [[2.0, 0.0, 0.8], [1.0, 1.0, 0.5]]})";

const char* kTerrain = R"({"model": "terrain_ball", "config": {"x0": 0.0, "y0": 1.0, "g": 9.81, "bumps": 3},
  "options": {"t_final": 2.0, "dt": 0.001, "event_capacity": 8, "sensitivities": true},
  "theta": [[1.2, 0.3, 0.1, 0.85, 0.2, 0.1, 0.5, 0.3, 0.15, 1.5, 0.25, 0.1, 2.5, 0.4],
            [1.4, 0.1, 0.1, 0.8, 0.1, 0.2, 0.7, 0.3, 0.05, 1.2, 0.25, 0.1, 2.2, 0.4],
            [1.0, 0.0, 0.1, 0.8, 0.3, 0.1, 0.5, 0.3, 0.15, 1.5, 0.25, 0.1, 2.5, 0.4]]})";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

}  // namespace

TEST_F(Cli, BouncingBallResultsAndProvenance) {
  const CliRun r = solve(kBall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = output();
  ASSERT_EQ(j["trajectories"].size(), 2u);
  const json& t = j["trajectories"][0];
  EXPECT_EQ(t["status"], 0);
  EXPECT_EQ(j["status_names"]["0"], "finished");
  EXPECT_EQ(j["state_names"], json::array({"h", "v"}));
  EXPECT_NEAR(t["events_t"][0].get<double>(), std::sqrt(2 * 2.0 / 9.81), 1e-10);
  // Event arrays hold n_events entries (the unused capacity is trimmed).
  EXPECT_EQ(t["events_t"].size(), t["n_events"].get<std::size_t>());
  EXPECT_EQ(t["events_q"][0].size(), 2u);
  EXPECT_EQ(t["events_q_plus"][0].size(), 2u);
  EXPECT_EQ(t["qf"].size(), 2u);
  EXPECT_FALSE(t.contains("dqf_dtheta"));
  EXPECT_EQ(j["provenance"]["model"], "bouncing_ball");
  EXPECT_EQ(j["provenance"]["config"]["g"], 9.81);
  // The provenance records the normalised options, derived fields included.
  EXPECT_GT(j["provenance"]["options"]["event_capacity"].get<int>(), 0);
  EXPECT_EQ(j["provenance"]["options"]["dt"], 0.001);
  EXPECT_TRUE(j["provenance"].contains("version"));
  EXPECT_TRUE(j["provenance"].contains("git_hash"));
  EXPECT_EQ(j["provenance"]["backend"].get<std::string>().empty(), false);
}

TEST_F(Cli, TerrainBallWithSensitivities) {
  const CliRun r = solve(kTerrain, "--backend cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = output();
  ASSERT_EQ(j["param_names"].size(), 14u);
  EXPECT_EQ(j["param_names"][11], "a_3");
  EXPECT_EQ(j["provenance"]["config"]["bumps"], 3);
  for (const json& t : j["trajectories"]) {
    ASSERT_EQ(t["dqf_dtheta"].size(), 4u);
    EXPECT_EQ(t["dqf_dtheta"][0].size(), 14u);
    const std::size_t events = t["n_events"].get<std::size_t>();
    ASSERT_GE(events, 1u);
    ASSERT_EQ(t["events_dt_dtheta"].size(), events);
    ASSERT_EQ(t["events_dq_dtheta"].size(), events);
    for (std::size_t c = 0; c < events; ++c) {
      EXPECT_EQ(t["events_dt_dtheta"][c].size(), 14u);
      ASSERT_EQ(t["events_dq_dtheta"][c].size(), 4u);
      EXPECT_EQ(t["events_dq_dtheta"][c][3].size(), 14u);
      EXPECT_EQ(t["events_flags"][c].get<int>() & 1, 0) << "not grazing";
    }
  }
}

TEST_F(Cli, ThermostatAndCommandLineOverrides) {
  const CliRun r = solve(R"({"model": "thermostat", "config": {"initial_mode": "on"},
    "theta": [[19, 18, 12, 8, 20, 22]]})",
                         "--t-final 48 --dt 0.01 --event-capacity 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = output();
  const json& t = j["trajectories"][0];
  EXPECT_EQ(j["status_names"][std::to_string(t["status"].get<int>())], "event_capacity");
  EXPECT_EQ(t["events_t"].size(), 3u);
  EXPECT_NEAR(t["events_t"][0].get<double>(), 12 * std::log(7.0 / 4.0), 1e-10);
  EXPECT_EQ(j["provenance"]["options"]["t_final"], 48.0);
  EXPECT_EQ(j["provenance"]["options"]["dt"], 0.01);
  EXPECT_EQ(j["provenance"]["options"]["event_capacity"], 3);
}

TEST_F(Cli, AdaptiveMethodFromTheFileOrTheCommandLine) {
  // The thermostat's first switch, 12 ln(7/4), by dopri5 chosen in the request and by the flags.
  const char* request = R"({"model": "thermostat", "config": {"initial_mode": "on"},
    "options": {"t_final": 48, "method": "dopri5", "rtol": 1e-12, "atol": 1e-12},
    "theta": [[19, 18, 12, 8, 20, 22]]})";
  for (const std::string flags : {"--backend cpu", "--backend cpu --method dopri5 --rtol 1e-12 --atol 1e-12"}) {
    const bool from_flags = flags.find("--method") != std::string::npos;
    const CliRun r = solve(from_flags ? replace(request, "\"method\": \"dopri5\", ", "") : request, flags);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = output();
    EXPECT_NEAR(j["trajectories"][0]["events_t"][0].get<double>(), 12 * std::log(7.0 / 4.0), 1e-10) << flags;
    EXPECT_EQ(j["provenance"]["options"]["method"], "dopri5") << flags;
    EXPECT_EQ(j["provenance"]["options"]["rtol"], 1e-12) << flags;
  }
  fs::remove(out());
  expect_rejected(replace(request, "\"dopri5\"", "\"tsit5\""), "options.method");
  expect_rejected(replace(request, "\"rtol\": 1e-12", "\"rtol\": 0"), "options.rtol");
  // atol is one number or one per state: the thermostat has one state.
  expect_rejected(replace(request, "\"atol\": 1e-12", "\"atol\": [1e-12, 1e-9]"), "options.atol", "has 1 state");
}

TEST_F(Cli, RejectsUnknownModel) { expect_rejected(replace(kBall, "bouncing_ball", "bouncing_cube"), "model"); }
TEST_F(Cli, RejectsWrongThetaLength) {
  expect_rejected(replace(kBall, "[1.0, 1.0, 0.5]", "[1.0, 1.0]"), "theta", "row 1");
}
TEST_F(Cli, RejectsNonPositiveDt) {
  expect_rejected(replace(kBall, "\"dt\": 0.001", "\"dt\": 0"), "options.dt");
  expect_rejected(replace(kBall, "\"dt\": 0.001", "\"dt\": -0.1"), "options.dt");
}
TEST_F(Cli, RejectsRestitutionOutsideUnitInterval) {
  // The whole place: a bare "e" would be found in any message ("theta", "be", "must").
  expect_rejected(replace(kBall, "[1.0, 1.0, 0.5]", "[1.0, 1.0, 1.2]"), "saltation: invalid input: e (row 1): ");
}
TEST_F(Cli, RejectsFrictionOutsideUnitInterval) {
  // As above: "mu" alone is in "must".
  expect_rejected(replace(kTerrain, "[1.0, 0.0, 0.1, 0.8, 0.3,", "[1.0, 0.0, 0.1, 0.8, -0.3,"),
                  "saltation: invalid input: mu (row 2): ");
}
TEST_F(Cli, RejectsNonPositiveBumpWidth) {
  expect_rejected(replace(kTerrain, "0.05, 1.2, 0.25", "0.05, 1.2, 0.0"), "w_2", "row 1");
}
TEST_F(Cli, RejectsNaN) {
  expect_rejected(replace(kBall, "[2.0, 0.0, 0.8]", "[NaN, 0.0, 0.8]"), "NaN");
  expect_rejected(replace(kBall, "[2.0, 0.0, 0.8]", "[null, 0.0, 0.8]"), "h0", "row 0");
  expect_rejected(replace(kBall, "\"t_final\": 3.0", "\"t_final\": \"nan\""), "options.t_final");
}
TEST_F(Cli, RejectsDuplicateKeysAndOverflowingNumbers) {
  expect_rejected(replace(kBall, "\"dt\": 0.001", "\"dt\": 0.001, \"dt\": 0.002"), "options.dt: is given twice");
  expect_rejected(
      replace(kBall, "\"model\": \"bouncing_ball\"", "\"model\": \"bouncing_ball\", \"model\": \"thermostat\""),
      "model: is given twice");
  expect_rejected(replace(kBall, "\"t_final\": 3.0", "\"t_final\": 1e400"), "t_final: a number does not fit a double");
}

TEST_F(Cli, FullDiskIsAnIoErrorAndLeavesNoFile) {
  // A file-size limit of 4 KiB stands in for a full disk: the result (26 KB) does not fit. Not less:
  // LLVM's OpenMP runtime (clang builds: the ASan preset) sizes a 1 KiB registration file at start
  // and aborts when the limit forbids it.
  const fs::path in = dir_ / "in.json";
  std::ofstream(in) << kTerrain;
  const std::string cmd = "sh -c \"ulimit -f 8; exec '" + cli_ + "' solve '" + in.string() + "' --out '" +
                          out().string() + "'\" 2> '" + (dir_ / "err.txt").string() + "'";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  std::ifstream e(dir_ / "err.txt");
  const std::string err((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>());
  EXPECT_NE(err.find("write failed"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(out()));
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << "leftover " << entry.path();
}

TEST_F(Cli, RejectsUnknownKeys) {
  expect_rejected(replace(kBall, "\"dt\": 0.001", "\"dt\": 0.001, \"step\": 2"), "options.step");
  expect_rejected(replace(kBall, "{\"g\": 9.81}", "{\"g\": 9.81, \"x0\": 1}"), "config.x0");
  expect_rejected(replace(kTerrain, "\"bumps\": 3", "\"bumps\": 5"), "config.bumps");
}
TEST_F(Cli, RejectsStartBelowTerrain) {
  expect_rejected(replace(kTerrain, "\"y0\": 1.0", "\"y0\": -1.0"), "initial state", "row 0");
}
TEST_F(Cli, WritesJsonToStdoutWithoutOut) {
  const fs::path in = dir_ / "in.json", o = dir_ / "stdout.json";
  std::ofstream(in) << kBall;
  const std::string cmd = "'" + cli_ + "' solve '" + in.string() + "' > '" + o.string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream f(o);
  EXPECT_EQ(json::parse(f)["trajectories"].size(), 2u);
}

TEST_F(Cli, NpyFormatWritesIndexedArraysMatchingJson) {
  ASSERT_EQ(solve(kTerrain).exit_code, 0);
  const json j = output();
  const std::string cmd =
      "'" + cli_ + "' solve '" + (dir_ / "in.json").string() + "' --format npy --out '" + (dir_ / "res").string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream idx(dir_ / "res.json");
  const json index = json::parse(idx);
  EXPECT_FALSE(index.contains("trajectories"));
  ASSERT_TRUE(index["arrays"].contains("events_dq_dtheta"));
  EXPECT_EQ(index["arrays"]["events_dq_dtheta"]["shape"], json::array({3, 8, 4, 14}));
  // qf: shape (3, 4), float64, row-major by trajectory.
  std::ifstream f(index["arrays"]["qf"]["file"].get<std::string>(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  const std::size_t header = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_NE(bytes.find("'shape': (3, 4)"), std::string::npos);
  ASSERT_EQ(bytes.size(), 10 + header + 12 * sizeof(double));
  const double* qf = reinterpret_cast<const double*>(bytes.data() + 10 + header);
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 4; ++k) EXPECT_EQ(qf[i * 4 + k], j["trajectories"][i]["qf"][k].get<double>());
}

TEST_F(Cli, CsvFormatHasOneLinePerTrajectory) {
  const fs::path in = dir_ / "in.json", csv = dir_ / "res.csv";
  std::ofstream(in) << kBall;
  const std::string cmd = "'" + cli_ + "' solve '" + in.string() + "' --format csv --out '" + csv.string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream f(csv);
  std::string header, line;
  std::getline(f, header);
  EXPECT_EQ(header.rfind("trajectory,status,t_end,qf[0],qf[1],n_events,events_t[0]", 0), 0u) << header;
  int lines = 0;
  while (std::getline(f, line)) ++lines;
  EXPECT_EQ(lines, 2);
}

TEST_F(Cli, ExitCodesPerClassOfFailure) {
  const fs::path in = dir_ / "in.json";
  std::ofstream(in) << kBall;
  auto run = [&](const std::string& args) {
    const int status = std::system(("'" + cli_ + "' " + args + " 2>/dev/null >/dev/null").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(run("solve '" + in.string() + "' --out '" + out().string() + "'"), 0);
  EXPECT_EQ(run("solve '" + in.string() + "' --no-such-flag"), 2) << "argument errors are invalid input";
  EXPECT_EQ(run("solve '" + (dir_ / "missing.json").string() + "'"), 3) << "an unreadable input is an I/O error";
  EXPECT_EQ(run("solve '" + in.string() + "' --out '" + (dir_ / "no_dir" / "out.json").string() + "'"), 3)
      << "an unwritable output is an I/O error";
  EXPECT_EQ(run("solve '" + in.string() + "' --backend cuda --out '" + out().string() + "2'"),
            saltation::cuda_device_available() ? 0 : 4)
      << "CUDA without a device is a CUDA error";
}

TEST_F(Cli, ModelsCommandListsTheRegistry) {
  const fs::path o = dir_ / "models.json";
  ASSERT_EQ(std::system(("'" + cli_ + "' models --json > '" + o.string() + "'").c_str()), 0);
  std::ifstream f(o);
  const json models = json::parse(f);
  ASSERT_EQ(models.size(), 3u);
  EXPECT_EQ(models[0]["name"], "bouncing_ball");
  EXPECT_EQ(models[0]["config"]["g"]["default"], 9.81);
  EXPECT_EQ(models[1]["config"]["initial_mode"]["choices"], json::array({"on", "off"}));
  EXPECT_EQ(models[2]["name"], "terrain_ball");
  EXPECT_EQ(models[2]["variants"]["values"], json::array({0, 3, 24, 192}));
  EXPECT_EQ(models[2]["states"], json::array({"x", "y", "vx", "vy"}));
}

namespace {

// A terrain-ball request of `rows` trajectories with sensitivities: kTerrain's three rows repeated
// with shifted launch speeds, so that every row differs.
std::string terrain_rows(int rows) {
  json request = json::parse(kTerrain);
  const json base = request["theta"];
  request["theta"] = json::array();
  for (int i = 0; i < rows; ++i) {
    json row = base[i % 3];
    row[0] = row[0].get<double>() + 0.01 * i;
    request["theta"].push_back(row);
  }
  return request.dump();
}

std::string file_bytes(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_F(Cli, NpySolvedInManyChunksIsByteIdenticalToOneChunk) {
  const fs::path in = dir_ / "in.json";
  std::ofstream(in) << terrain_rows(40);
  auto run = [&](const std::string& prefix, const std::string& budget) {
    const fs::path summary = dir_ / (prefix + ".txt");
    const std::string cmd = "'" + cli_ + "' solve '" + in.string() + "' --backend cpu --format npy --summary --out '" +
                            (dir_ / prefix).string() + "' " + budget + " > '" + summary.string() + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return file_bytes(summary);
  };
  const std::string whole = run("whole", "");
  EXPECT_EQ(whole.find("chunks"), std::string::npos) << "the default budget holds the batch in one chunk: " << whole;
  // One trajectory of this request takes 5728 bytes: 6K holds one per chunk, 20K three (the last chunk one).
  EXPECT_NE(run("single", "--memory-budget 6K").find("(40 chunks)"), std::string::npos);
  EXPECT_NE(run("triple", "--memory-budget 20K").find("(14 chunks)"), std::string::npos);
  const json index = json::parse(file_bytes(dir_ / "whole.json"));
  ASSERT_EQ(index["arrays"].size(), 12u);
  for (const std::string chunked : {"single", "triple"}) {
    json chunked_index = json::parse(file_bytes(dir_ / (chunked + ".json")));
    for (const auto& [name, entry] : index["arrays"].items()) {
      const std::string bytes = file_bytes(entry["file"].get<std::string>());
      EXPECT_GT(bytes.size(), 128u) << name;
      EXPECT_EQ(file_bytes(chunked_index["arrays"][name]["file"].get<std::string>()), bytes) << chunked << ": " << name;
      chunked_index["arrays"][name]["file"] = entry["file"];
    }
    EXPECT_EQ(chunked_index, index) << "the index (meta, shapes, provenance) does not depend on the chunking";
  }
}

TEST_F(Cli, RefusesJsonAndCsvBeyondTheSizeLimit) {
  // Two trajectories of a million event slots: about 448 MiB of JSON, refused before solving.
  const std::string huge = replace(kBall, "\"event_capacity\": 8", "\"event_capacity\": 1000000");
  expect_rejected(huge, "--format npy");
  EXPECT_NE(solve(huge).err.find("invalid input: format"), std::string::npos);
  const CliRun csv = solve(huge, "--format csv");
  EXPECT_EQ(csv.exit_code, 2);
  EXPECT_NE(csv.err.find("--format csv of 2 trajectories"), std::string::npos) << csv.err;
  EXPECT_FALSE(fs::exists(out()));
}

TEST_F(Cli, RejectsBadMemoryBudget) {
  const fs::path in = dir_ / "in.json", err = dir_ / "err.txt";
  std::ofstream(in) << kTerrain;
  for (const std::string budget : {"abc", "0", "-1M", "12X", "1K"}) {
    const std::string cmd = "'" + cli_ + "' solve '" + in.string() + "' --format npy --out '" +
                            (dir_ / "res").string() + "' --memory-budget " + budget + " 2> '" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2) << budget;
    EXPECT_NE(file_bytes(err).find("memory-budget"), std::string::npos) << budget << ": " << file_bytes(err);
    for (const auto& entry : fs::directory_iterator(dir_))
      EXPECT_EQ(entry.path().filename().string().rfind("res", 0), std::string::npos) << "left behind: " << entry.path();
  }
}
