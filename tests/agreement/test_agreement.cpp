// The agreement policy exercised on every CI run without a GPU: the FMA-contracted CPU build
// (what nvcc does by default) against the plain one, and theta moved by one ulp against theta,
// each within the tolerances the CUDA-vs-CPU tests use (docs/agreement.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "agreement.hpp"
#include "agreement_cases.hpp"
#include "result_file.hpp"

using namespace saltation;

namespace {

// The probe binary `name` from SALTATION_PROBE_DIR (ctest sets it), "" when it is not there.
std::string probe(const std::string& name) {
  const char* dir = std::getenv("SALTATION_PROBE_DIR");
  if (!dir) return "";
  const std::string path = std::string(dir) + "/" + name;
  return std::ifstream(path).good() ? path : "";
}

// Writes to `name` in the temporary folder, made this process's own: ctest -j runs the tests of
// this file at once, and a probe must never read another's half-written file.
std::string run_probe(const std::string& binary, const std::string& name, const std::string& extra = "") {
  if (binary.empty()) return "";
  const std::string out = ::testing::TempDir() + std::to_string(::getpid()) + "_" + name;
  const std::string cmd = "'" + binary + "' '" + out + "' " + extra;
  return std::system(cmd.c_str()) == 0 ? out : "";
}

void expect_cases_agree(const std::string& got_file, const std::string& reference_file) {
  const auto got = agreement::read_results(got_file), reference = agreement::read_results(reference_file);
  ASSERT_FALSE(reference.empty());
  ASSERT_EQ(got.size(), reference.size());
  agreement::for_each_case([&](const char* name, const auto&, const Batch&, const Options&, double rtol) {
    for (const char* mode : {"/forward", "/sensitivities"}) {
      const std::string key = std::string(name) + mode;
      SCOPED_TRACE(key);
      ASSERT_TRUE(got.count(key) && reference.count(key));
      agreement::expect_agreement(got.at(key), reference.at(key), rtol);
    }
  });
}

class Agreement : public ::testing::Test {
 protected:
  void SetUp() override {
    plain_ = run_probe(probe("agreement_probe"), "agreement_plain.bin");
    ASSERT_FALSE(plain_.empty()) << "the plain probe did not run (SALTATION_PROBE_DIR names its folder; ctest sets it)";
  }
  std::string plain_;
};

}  // namespace

TEST_F(Agreement, FmaContractedBuildWithinTolerance) {
  if (probe("agreement_probe_fma").empty()) GTEST_SKIP() << "the compiler cannot build an FMA-contracted probe";
  if (!__builtin_cpu_supports("fma")) GTEST_SKIP() << "this CPU has no FMA instructions";
  const std::string fma = run_probe(probe("agreement_probe_fma"), "agreement_fma.bin");
  ASSERT_FALSE(fma.empty()) << "the FMA probe did not run";
  expect_cases_agree(fma, plain_);
}

TEST_F(Agreement, OneUlpChangeOfThetaWithinTolerance) {
  const std::string ulp = run_probe(probe("agreement_probe"), "agreement_ulp.bin", "ulp");
  ASSERT_FALSE(ulp.empty());
  expect_cases_agree(ulp, plain_);
}
