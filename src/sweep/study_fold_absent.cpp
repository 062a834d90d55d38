// The device fold where the library is built without CUDA: no study can reach it (resolve_backend
// refuses the CUDA backend first), but the symbol must exist.
#include "saltation/sweep/study.hpp"

#include "saltation/errors.hpp"

namespace saltation::sweep {

std::vector<StudyAccumulator> fold_study_blocks_on_device(const StudyAccumulator&, std::uint64_t, std::uint64_t,
                                                          std::uint64_t, const double*, std::uint64_t) {
  throw CudaError("this saltation was built without the CUDA backend", __FILE__, __LINE__);
}

}  // namespace saltation::sweep
