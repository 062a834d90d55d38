// `saltation disks` end to end: rollout to NPY, fit from JSON, errors name the parameter.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {
std::string cli() {
  const char* c = std::getenv("SALTATION_CLI");
  return c ? c : "";
}
std::string tmpdir() {
  char t[] = "/tmp/saltation_dem_cli_XXXXXX";
  return mkdtemp(t);
}
// The command's exit code; `output` gets its standard output, then its standard error only when it
// failed (a sanitizer's warning on stderr must not land inside the JSON a test parses).
int run(const std::string& args, std::string* output = nullptr) {
  const std::string dir = tmpdir(), err = dir + "/stderr.txt";
  const std::string cmd = cli() + " " + args + " 2> " + err;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  const int rc = WEXITSTATUS(pclose(p));
  if (rc != 0) text += std::string(std::istreambuf_iterator<char>(std::ifstream(err).rdbuf()), {});
  std::remove(err.c_str());
  std::remove(dir.c_str());
  if (output) *output = text;
  return rc;
}
void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
const char* kSeed = R"({"n_systems": 1, "n_disks": 2, "dt": 0.002, "n_frames": 80, "stride": 5,
  "radius": 0.5, "mass": 1.0, "positions": [[-0.54, 0.0], [0.54, 0.0]],
  "velocities": [[0.5, 0.0], [-0.5, 0.0]], "log_stiffness": 3.6888794541139363, "tangents": ["log_stiffness"]})";
}  // namespace

TEST(DemCli, RolloutThenFitRecoversSeedStiffness) {
  if (cli().empty()) GTEST_SKIP() << "SALTATION_CLI not set";
  const std::string dir = tmpdir();
  write(dir + "/r.json", kSeed);
  ASSERT_EQ(run("disks " + dir + "/r.json -o " + dir + "/out -f npy"), 0);
  std::ifstream npy(dir + "/out_positions.npy", std::ios::binary);
  std::string magic(6, '\0');
  npy.read(&magic[0], 6);
  EXPECT_EQ(magic, "\x93NUMPY");
  std::ifstream(dir + "/out_positions.npy.tmp").good() ? ADD_FAILURE() << "temporary file left behind" : void();
  const auto index = nlohmann::json::parse(std::ifstream(dir + "/out.json"));
  EXPECT_EQ(index["arrays"]["positions"]["shape"], nlohmann::json::parse("[1, 80, 2, 2]"));
  EXPECT_EQ(index["provenance"]["options"]["dt"], 0.002);
  std::string text;
  ASSERT_EQ(run("disks " + dir + "/r.json", &text), 0) << text;
  const auto out = nlohmann::json::parse(text);
  EXPECT_EQ(out["systems"][0]["status"], 0);
  auto cfg = nlohmann::json::parse(kSeed);
  cfg["mode"] = "fit";
  cfg.erase("tangents");
  // push_back, not {positions}: a one-element brace list of a json is the element itself under
  // clang (the ASan build) and an array of it under g++.
  cfg["observed"] = nlohmann::json::array();
  cfg["observed"].push_back(out["systems"][0]["positions"]);
  cfg["loss_scale"] = 0.5;
  cfg["log_stiffness"] = std::log(10.0);
  write(dir + "/fit.json", cfg.dump());
  ASSERT_EQ(run("disks " + dir + "/fit.json", &text), 0) << text;
  const auto fit = nlohmann::json::parse(text);
  EXPECT_NEAR(fit["systems"][0]["stiffness_factor"].get<double>(), 40.0, 40.0 * 1e-3);
  EXPECT_EQ(fit["outcome_counts"]["converged"], 1);
  ASSERT_EQ(run("disks " + dir + "/fit.json -f csv -o " + dir + "/fit", &text), 0) << text;
  std::string header;
  std::getline(std::ifstream(dir + "/fit.csv"), header);
  EXPECT_EQ(header.rfind("system,log_stiffness,stiffness_factor,", 0), 0u) << header;
  EXPECT_TRUE(std::ifstream(dir + "/fit.json").good()) << "meta and provenance next to the CSV";
}

TEST(DemCli, BadInputExitsNonZeroNamingTheParameter) {
  if (cli().empty()) GTEST_SKIP() << "SALTATION_CLI not set";
  const std::string dir = tmpdir();
  auto cfg = nlohmann::json::parse(kSeed);
  cfg["radius"] = -0.5;
  write(dir + "/bad.json", cfg.dump());
  std::string text;
  EXPECT_NE(run("disks " + dir + "/bad.json -o " + dir + "/never", &text), 0);
  EXPECT_NE(text.find("radius"), std::string::npos) << text;
  EXPECT_FALSE(std::ifstream(dir + "/never.json").good()) << "no output on failure";
  write(dir + "/r.json", kSeed);
  EXPECT_NE(run("disks " + dir + "/r.json --dt 0", &text), 0);
  EXPECT_NE(text.find("dt"), std::string::npos) << text;
  cfg = nlohmann::json::parse(kSeed);
  cfg["stiffnes"] = 1.0;
  write(dir + "/typo.json", cfg.dump());
  EXPECT_EQ(run("disks " + dir + "/typo.json", &text), 2) << "invalid input exits 2";
  EXPECT_NE(text.find("stiffnes"), std::string::npos) << text;
}
