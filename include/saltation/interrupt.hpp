#pragma once
// Interrupting a long run: a signal handler (or any thread) records a request, the drivers and the
// study runner look at it between trajectories and chunks, and the run ends by throwing
// Interrupted before anything is written. Outputs are atomic, so nothing half-written remains.
#include <atomic>
#include <stdexcept>
#include <string>

namespace saltation {

// The signal that asked for the stop (SIGINT, SIGTERM, ...), or 0. Lock-free, so a signal handler
// may store to it. A model compiled at run time is a library of its own: it reads the loading
// process's (user_model/plugin.hpp), so that a signal stops its runs too.
#if defined(SALTATION_RUNTIME_PLUGIN)
std::atomic<int>& interrupt_request();
#else
inline std::atomic<int>& interrupt_request() {
  static std::atomic<int> request{0};
  return request;
}
#endif
inline void request_interrupt(int signal) { interrupt_request().store(signal, std::memory_order_relaxed); }
inline bool interrupt_requested() { return interrupt_request().load(std::memory_order_relaxed) != 0; }

class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal)
      : std::runtime_error("interrupted (signal " + std::to_string(signal) +
                           ") before the run finished; nothing was written"),
        signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Throws Interrupted when a stop was requested.
inline void throw_if_interrupted() {
  const int signal = interrupt_request().load(std::memory_order_relaxed);
  if (signal != 0) throw Interrupted(signal);
}

}  // namespace saltation
