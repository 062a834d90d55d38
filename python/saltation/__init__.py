"""saltation: batches of hybrid-system trajectories with exact event-aware sensitivities.

The package binds the C++ library (docs/python.md): ``solve`` a built-in model over rows of
parameters, ``sweep`` a Monte Carlo study, run the disk-contact engine (``disks``,
``fit_stiffness``); ``saltation.jax`` makes the solver a JAX function.
"""
from . import _saltation
from ._errors import CudaError, InvalidInput, IoError
from ._api import Result, disks, fit_stiffness, model_info, models, options, solve, status_names, sweep

_saltation._set_error_types(InvalidInput, IoError, CudaError)

__version__ = _saltation.version()
git_hash = _saltation.git_hash()
cuda_compiled = _saltation.cuda_compiled
cuda_device_available = _saltation.cuda_device_available

__all__ = [
    "CudaError", "InvalidInput", "IoError", "Result", "cuda_compiled", "cuda_device_available", "disks",
    "fit_stiffness", "model_info", "models", "options", "solve", "status_names", "sweep",
]
