// Built without CUDA: the CUDA entry point of the disk-contact engine says so.
#include "engine_internal.hpp"
#include "saltation/errors.hpp"

namespace saltation::dem::detail {
void run_cuda(Prepared&, int, const Progress*) {
  throw CudaError("saltation was built without CUDA (disk-contact engine)", __FILE__, __LINE__);
}
}  // namespace saltation::dem::detail
