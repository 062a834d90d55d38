// Digest of every CPU result array on the benchmark batch (bench/terrain_batch.hpp): a refactor
// that must not change results shows the same lines before and after. `result_digest [n]`.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "saltation/models/terrain_ball.hpp"
#include "saltation/solve.hpp"
#include "terrain_batch.hpp"

namespace {

template <class T>
void mix(std::uint64_t& h, const std::vector<T>& v) {
  const unsigned char* b = reinterpret_cast<const unsigned char*>(v.data());
  for (std::size_t k = 0; k < v.size() * sizeof(T); ++k) h = (h ^ b[k]) * 1099511628211ull;
}

template <int K>
void digest(std::size_t n) {
  const saltation::Batch batch = saltation_bench::terrain_batch(n, K);
  for (bool sens : {false, true}) {
    const saltation::Result r =
        saltation::solve(saltation::TerrainBall<K>{}, batch, saltation_bench::seed_options(sens, 2), saltation::Backend::Cpu);
    std::uint64_t h = 1469598103934665603ull;
    mix(h, r.status); mix(h, r.t_end); mix(h, r.qf); mix(h, r.n_events); mix(h, r.ev_t); mix(h, r.ev_guard);
    mix(h, r.ev_flags); mix(h, r.ev_q); mix(h, r.ev_q_plus); mix(h, r.dqf); mix(h, r.ev_dt); mix(h, r.ev_dq);
    std::printf("K=%d P=%d n=%zu sensitivities=%d digest=%016llx\n", K, 5 + 3 * K, n, int(sens),
                static_cast<unsigned long long>(h));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 512;
  digest<3>(n);
  digest<24>(n);
  digest<192>(n / 8);
  return 0;
}
