// Built without CUDA: the CUDA entry points of the disk-contact engine say so.
#include "saltation/dem/engine.hpp"
#include "saltation/errors.hpp"

namespace saltation::dem::detail {
void run_cuda(const RolloutConfig&, int) {
  throw CudaError("saltation was built without CUDA (disk-contact engine)", __FILE__, __LINE__);
}
}  // namespace saltation::dem::detail
