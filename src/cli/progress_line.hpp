#pragma once
// The progress line of long CLI runs, on standard error: percent, count, rate and time left,
// redrawn in place at most ten times a second, ended with a newline when done.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "saltation/progress.hpp"

namespace saltation::cli {

inline Progress progress_line(std::string command, std::string unit) {
  using clock = std::chrono::steady_clock;
  struct State {
    clock::time_point start = clock::now(), last{};
  };
  auto state = std::make_shared<State>();
  return [state, command = std::move(command), unit = std::move(unit)](std::size_t done, std::size_t total) {
    const clock::time_point now = clock::now();
    if (done < total && now - state->last < std::chrono::milliseconds(100)) return;
    state->last = now;
    const double seconds = std::chrono::duration<double>(now - state->start).count();
    const double rate = seconds > 0 ? done / seconds : 0.0;
    std::fprintf(stderr, "\rsaltation %s: %3.0f%% (%zu of %zu %s, %.3g/s", command.c_str(),
                 total ? 100.0 * done / total : 100.0, done, total, unit.c_str(), rate);
    if (done < total && rate > 0) std::fprintf(stderr, ", %.0f s left)   ", (total - done) / rate);
    else std::fprintf(stderr, ", %.1f s)   ", seconds);
    if (done == total) std::fputc('\n', stderr);
    std::fflush(stderr);
  };
}

}  // namespace saltation::cli
