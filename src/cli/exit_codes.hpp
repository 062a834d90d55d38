#pragma once
// The CLI's exit codes, one per class of failure (documented in docs/schema.md).
namespace saltation::cli {
enum ExitCode : int {
  ExitOk = 0,
  ExitInternal = 1,      // a bug or an unexpected failure: the message says what
  ExitInvalidInput = 2,  // bad arguments, request, config or parameters (nothing was run)
  ExitIo = 3,            // a file could not be read or written (nothing half-written is left)
  ExitCuda = 4,          // the CUDA runtime or a kernel failed, CUDA was requested without a device, or a
                         // model file could not be compiled (no compiler, no nvcc, or it failed)
  // 128 + the signal (130 for SIGINT, 143 for SIGTERM): interrupted, nothing written
};
}  // namespace saltation::cli
