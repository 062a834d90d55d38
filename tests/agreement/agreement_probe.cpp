// Solves the agreement cases with the CPU driver of this build and writes every result to a file.
// CMake builds it twice, plainly and with FMA contraction (-mfma -ffp-contract=fast), so that
// test_agreement holds the two against the stated tolerances: the perturbation a GPU's contracted
// arithmetic causes, measured on every CI run. Header-only, so no library code compiled with
// other flags leaks in. Usage: agreement_probe OUT_FILE [ulp]; with `ulp` every parameter is
// first moved up by one unit in the last place (the other perturbation the tolerances rest on).
#include <cmath>
#include <cstdio>
#include <string>

#include "agreement_cases.hpp"
#include "result_file.hpp"
#include "saltation/cpu.hpp"
#include "saltation/solve.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s OUT_FILE [ulp]\n", argv[0]);
    return 2;
  }
  static const bool nudge = argc == 3 && std::string(argv[2]) == "ulp";
  static std::FILE* out = std::fopen(argv[1], "wb");
  if (!out) return 3;
  saltation::agreement::for_each_case(
      [](const char* name, const auto& model, saltation::Batch batch, saltation::Options o, double) {
        if (nudge)
          for (double& x : batch.theta) x = std::nextafter(x, HUGE_VAL);
        for (bool sens : {false, true}) {
          o.sensitivities = sens;
          const saltation::Options opts = saltation::normalize_options(o);
          saltation::validate_batch(model, batch);
          saltation::Result r(batch.n, model.N, model.P, opts.event_capacity, sens);
          saltation::cpu::solve(model, batch.theta.data(), batch.n, opts, r.view());
          saltation::agreement::write_result(out, std::string(name) + (sens ? "/sensitivities" : "/forward"), r);
        }
      });
  return std::fclose(out) == 0 ? 0 : 3;
}
