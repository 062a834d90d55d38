"""saltation's errors as Python exceptions (the C++ classes of saltation/errors.hpp)."""


class InvalidInput(ValueError):
    """Bad input, found before any work ran. ``parameter`` names it (``"e"``, ``"options.dt"``,
    ``"config.bumps"``, ``"theta"``) and ``row`` is the batch row, or -1 when not per row."""

    def __init__(self, message, parameter="", row=-1):
        super().__init__(message)
        self.parameter = parameter
        self.row = row


class IoError(OSError):
    """A file that could not be read or written; ``path`` names it."""

    def __init__(self, message, path=""):
        super().__init__(message)
        self.path = path


class CudaError(RuntimeError):
    """A CUDA runtime failure, or the CUDA backend asked for where there is no device."""


class CompileError(RuntimeError):
    """A model file (``saltation.Model``) could not be compiled: no C++ compiler (or no nvcc for
    CUDA), or the compiler failed. The message says which, what to install or set, and where the
    compiler's log and the generated source are (docs/models.md, "What compiling needs")."""
