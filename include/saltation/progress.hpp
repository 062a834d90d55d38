#pragma once
#include <cstddef>
#include <functional>

namespace saltation {

// Progress of a long solve: called on the thread that called solve(), with the number of
// trajectories finished so far and the batch size, about a hundred times at most (CPU) or once
// per launch chunk (CUDA), and a last time with done == total.
using Progress = std::function<void(std::size_t done, std::size_t total)>;

}  // namespace saltation
