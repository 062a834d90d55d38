#pragma once
// The CLI's exit codes, one per class of failure (documented in docs/schema.md).
namespace saltation::cli {
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,      // a bug or an unexpected failure: the message says what
  kExitInvalidInput = 2,  // bad arguments, request, config or parameters (nothing was run)
  kExitIo = 3,            // a file could not be read or written (nothing half-written is left)
  kExitCuda = 4,          // the CUDA runtime or a kernel failed, or CUDA was requested without a device
  // 128 + the signal (130 for SIGINT, 143 for SIGTERM): interrupted, nothing written
};
}  // namespace saltation::cli
