"""saltation: batches of hybrid-system trajectories with exact event-aware sensitivities.

The package binds the C++ library (docs/python.md): ``solve`` a built-in model or a model of
your own (``Model``, docs/models.md) over rows of parameters, ``sweep`` a Monte Carlo study, run
the disk-contact engine (``disks``, ``fit_stiffness``); ``saltation.jax`` makes the solver a JAX
function.
"""
import os as _os

from . import _saltation
from ._errors import CompileError, CudaError, InvalidInput, IoError
from ._api import Model, Result, disks, fit_stiffness, model_info, models, options, solve, status_names, sweep

_saltation._set_error_types(InvalidInput, IoError, CudaError, CompileError)

# Model files are compiled against saltation's headers: this package's own copy where it has one
# (an installed package; SALTATION_INCLUDE_DIR still comes first).
_include = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "include")
if _os.path.isfile(_os.path.join(_include, "saltation", "user_model", "plugin.hpp")):
    _saltation._set_include_dir(_include)

__version__ = _saltation.version()
git_hash = _saltation.git_hash()
cuda_compiled = _saltation.cuda_compiled
cuda_device_available = _saltation.cuda_device_available

__all__ = [
    "CompileError", "CudaError", "InvalidInput", "IoError", "Model", "Result", "cuda_compiled",
    "cuda_device_available", "disks", "fit_stiffness", "model_info", "models", "options", "solve", "status_names",
    "sweep",
]
