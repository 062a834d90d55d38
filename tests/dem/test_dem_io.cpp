// The disks request reader and result tables (saltation/dem/dem_io.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "saltation/dem/dem_io.hpp"
#include "saltation/errors.hpp"
#include "saltation/io/writers.hpp"

using namespace saltation;
using namespace saltation::dem;
using nlohmann::json;

namespace {
json seed_request() {
  return json::parse(R"({"n_systems": 2, "n_disks": 2, "dt": 0.002, "n_frames": 4, "stride": 5,
    "materials": [{"stiffness": 1.0, "restitution": 0.9}],
    "radius": 0.5, "mass": [1.0, 2.0], "positions": [[-0.54, 0.0], [0.54, 0.0]],
    "velocities": [[[0.5, 0.0], [-0.5, 0.0]], [[0.35, 0.0], [-0.35, 0.0]]],
    "log_stiffness": [3.7, 3.0], "tangents": ["log_stiffness", {"v0": [1, 0]}]})");
}
std::string invalid_parameter(const json& request) {
  try {
    parse_disks_request(request);
  } catch (const InvalidInput& e) {
    return e.parameter();
  }
  return "";
}
}  // namespace

TEST(DemIo, ReadsEveryLayoutIntoTheEngineArrays) {
  const DisksRequest r = parse_disks_request(seed_request());
  EXPECT_EQ(r.mode, DisksMode::Rollout);
  ASSERT_EQ(r.batch.n_systems, 2);
  EXPECT_EQ(r.batch.mass, (std::vector<double>{1.0, 1.0, 2.0, 2.0}));  // [d*n_systems + b]
  EXPECT_EQ(r.batch.x0[2 * 2 + 1], 0.54);                              // disk 1, x, system 1
  EXPECT_EQ(r.batch.v0[2 * 2 + 1], -0.35);
  EXPECT_EQ(r.batch.log_stiffness, (std::vector<double>{3.7, 3.0}));
  ASSERT_EQ(r.options.tangents.size(), 2u);
  EXPECT_EQ(r.options.tangents[1].kind, TangentKind::InitialVelocity);
  EXPECT_EQ(r.options.materials[0].restitution, 0.9);
  EXPECT_FALSE(r.loss.has_value());
}

TEST(DemIo, OverridesReplaceTheRequestAndProvenanceRecordsThem) {
  DisksOverrides o;
  o.dt = 0.001;
  o.n_frames = 3;
  const DisksRequest r = parse_disks_request(seed_request(), o);
  EXPECT_EQ(r.options.dt, 0.001);
  const json p = provenance(r, Backend::Cpu);
  EXPECT_EQ(p["options"]["dt"], 0.001);
  EXPECT_EQ(p["options"]["n_frames"], 3);
  EXPECT_EQ(p["options"]["neighbors"], "auto");
  EXPECT_EQ(p["options"]["cell_capacity"], 8) << "defaults are recorded too";
  EXPECT_EQ(p["options"]["tangents"][1], json::parse(R"({"v0": [1, 0]})"));
  EXPECT_EQ(p["backend"], "cpu");
}

TEST(DemIo, ErrorsNameTheKeyAndRejectUnknownKeys) {
  json bad = seed_request();
  bad["n_frame"] = 3;
  EXPECT_EQ(invalid_parameter(bad), "n_frame");
  bad = seed_request();
  bad["materials"][0]["frction"] = 0.1;
  EXPECT_EQ(invalid_parameter(bad), "materials[0].frction");
  bad = seed_request();
  bad["normal"] = "hooke";
  EXPECT_EQ(invalid_parameter(bad), "normal");
  bad = seed_request();
  bad["mass"] = {{1.0, 2.0}, {1.0}};
  EXPECT_EQ(invalid_parameter(bad), "mass");
  bad = seed_request();
  bad.erase("positions");
  EXPECT_EQ(invalid_parameter(bad), "positions");
  bad = seed_request();
  bad["mode"] = "fit";
  EXPECT_EQ(invalid_parameter(bad), "observed");
}

// A disk count the positions do not back is refused before the batch is allocated (a fuzzer's
// request with n_disks = 222222222 and no positions ran out of memory).
TEST(DemIo, DiskCountWithoutItsPositionsIsRefusedBeforeAllocating) {
  EXPECT_EQ(invalid_parameter(json::parse(R"({"n_systems": 2, "n_disks": 222222222, "radius": 1, "mass": 1})")),
            "positions");
  json short_positions = seed_request();
  short_positions["n_disks"] = 222222222;
  EXPECT_EQ(invalid_parameter(short_positions), "positions");
  json short_system = seed_request();
  short_system["positions"] = json::parse("[[[0, 0], [1, 0]], [[0, 0]]]");
  EXPECT_EQ(invalid_parameter(short_system), "positions");
  json per_system = seed_request();
  per_system["positions"] = json::parse("[[[-0.54, 0], [0.54, 0]], [[-0.6, 0], [0.6, 0]]]");
  EXPECT_EQ(parse_disks_request(per_system).batch.x0[2 * 2 + 1], 0.6);  // disk 1, x, system 1
}

TEST(DemIo, RolloutTableViewsTheResultInTheTablesLayout) {
  const DisksRequest r = parse_disks_request(seed_request());
  const RolloutResult res = rollout(r.batch, r.options, Backend::Cpu);
  const io::ArrayTable t = rollout_table(r, res, Backend::Cpu);
  ASSERT_EQ(t.rows(), 2u);
  const json j = io::table_to_json(t);
  EXPECT_EQ(j["systems"][1]["status"], 0);
  EXPECT_EQ(j["systems"][1]["positions"][3][1][0].get<double>(), res.pos(3, 1, 1, 0));
  EXPECT_EQ(j["systems"][0]["d_velocities"][2][1][0][0].get<double>(), res.dvel(2, 1, 0, 0, 0));
  EXPECT_EQ(j["status_names"]["8"], "coincident");
  EXPECT_NEAR(j["frame_times"][3].get<double>(), 0.04, 1e-15);
  EXPECT_EQ(j["provenance"]["options"]["n_systems"], 2);
}

TEST(DemIo, FitTableHasTheSummaryAndHistories) {
  json req = seed_request();
  req["n_frames"] = 80;  // long enough for the disks to collide
  const DisksRequest truth = parse_disks_request(req);
  const RolloutResult obs = rollout(truth.batch, truth.options, Backend::Cpu);
  const json observed = io::table_to_json(rollout_table(truth, obs, Backend::Cpu));
  req["mode"] = "fit";
  req.erase("tangents");
  req["observed"] = {observed["systems"][0]["positions"], observed["systems"][1]["positions"]};
  req["loss_scale"] = 0.5;
  req["log_stiffness"] = std::log(10.0);
  req["fit"] = {{"history", true}};
  const DisksRequest r = parse_disks_request(req);
  const FitResult fit = fit_log_stiffness(r.batch, r.options, *r.loss, r.fit, Backend::Cpu);
  const FitSummary s = summarize_fit(fit);
  const double k0 = std::exp(3.7), k1 = std::exp(3.0);
  EXPECT_NEAR(s.stiffness_factor_mean, (k0 + k1) / 2, 1e-3 * k0);
  EXPECT_NEAR(s.stiffness_factor_sd, std::fabs(k0 - k1) / std::sqrt(2.0), 1e-3 * k0);
  EXPECT_EQ(s.outcome_count[FitConverged], 2);
  const json j = io::table_to_json(fit_table(r, fit, Backend::Cpu));
  EXPECT_NEAR(j["systems"][1]["stiffness_factor"].get<double>(), k1, 1e-3 * k1);
  EXPECT_EQ(j["outcome_names"][std::to_string(j["systems"][0]["outcome"].get<int>())], "converged");
  EXPECT_EQ(j["systems"][0]["history_log_stiffness"].size(), (size_t)j["systems"][0]["history_length"].get<int>());
  EXPECT_EQ(j["provenance"]["options"]["fit"]["history"], true);
}
