"""The Python face of the native module: dicts and NumPy arrays in, results out."""
import copy
import json
import math
import operator
import os

import numpy as np

from . import _saltation
from ._errors import InvalidInput


def models():
    """The built-in models (the registry): name, states, guards, parameters (name, domain),
    config keys with default and meaning, and the compiled-in variants (terrain_ball's bumps)."""
    return _saltation.models()


class Model:
    """A hybrid model of your own, defined as docs/models.md ("Your model in five minutes")
    describes: states, parameters, constants, modes, flows, guards and resets, with expressions.

    ``Model.from_file(path)`` names a model file; ``Model(definition)`` takes the same content as a
    dict. Either is checked at once (a mistake raises ``InvalidInput`` naming its JSON path, e.g.
    ``model.guards[0].reset.v`` for a file, ``model.define.guards[0].reset.v`` for a dict) and can
    then be given wherever a built-in model's name goes: ``solve``, ``model_info``,
    ``saltation.jax.solver`` and a study's ``"model"`` in ``sweep``. Its constants are the
    ``config`` keys. The model is compiled (by the C++ compiler for the CPU, nvcc for CUDA) the first
    time a backend runs it, and cached (SALTATION_CACHE_DIR); a compiler missing or failing raises
    ``CompileError``. A file is read again at every use, so an edit to it is a new model.
    """

    def __init__(self, definition):
        if isinstance(definition, Model):
            self._choice = copy.deepcopy(definition._choice)
        elif isinstance(definition, dict):
            # A copy through JSON: later changes to the caller's dict do not change this model.
            self._choice = {"define": json.loads(_json_text(definition, "model.define"))}
        else:
            raise InvalidInput(f"invalid input: model: saltation.Model takes a model definition (a dict, "
                               f"docs/models.md), not {type(definition).__name__}; for a model file use "
                               f"saltation.Model.from_file(path)", "model", -1)
        self._info = model_info(self)

    @classmethod
    def from_file(cls, path):
        """The model file at ``path`` (relative to the current folder; kept as an absolute path)."""
        try:
            path = os.path.abspath(os.fspath(path))
        except TypeError:
            raise InvalidInput(f"invalid input: model.file: {path!r} is not a path", "model.file", -1) from None
        model = cls.__new__(cls)
        model._choice = {"file": path}
        model._info = model_info(model)
        return model

    @property
    def name(self):
        return self._info["name"]

    @property
    def path(self):
        """The model file's absolute path, or None for a definition given as a dict."""
        return self._choice.get("file")

    @property
    def definition(self):
        """The definition given as a dict (a copy), or None for a model file."""
        return copy.deepcopy(self._choice.get("define"))

    def to_json(self):
        """The model as a request's or a study's ``"model"`` takes it (docs/models.md):
        ``{"file": absolute path}`` or ``{"define": {...}}``."""
        return copy.deepcopy(self._choice)

    def info(self, config=None):
        """``model_info(self, config)``."""
        return model_info(self, config)

    def __eq__(self, other):
        return isinstance(other, Model) and other._choice == self._choice

    def __hash__(self):
        return hash(json.dumps(self._choice, sort_keys=True))

    def __repr__(self):
        where = f"file {self.path!r}" if self.path else "definition"
        return f"<saltation.Model {self.name!r} ({where})>"


def _model_choice(model, key="model"):
    """A model as the JSON value of a request's "model": a built-in model's name (str), a
    ``Model``'s form, or that form given as a dict ({"file": path}, made absolute against the
    current folder, or {"define": {...}}). A bare definition is refused, pointing to ``Model``."""
    if isinstance(model, Model):
        return model.to_json()
    if isinstance(model, str):
        return model
    if isinstance(model, dict):
        if "file" in model or "define" in model:
            choice = dict(model)
            if isinstance(choice.get("file"), (str, os.PathLike)):
                choice["file"] = os.path.abspath(os.fspath(choice["file"]))
            return choice
        raise InvalidInput(f"invalid input: {key}: a model definition is given as saltation.Model(definition) "
                           f"(or as {{\"define\": definition}}); a dict here needs \"file\" or \"define\"", key, -1)
    raise InvalidInput(f"invalid input: {key}: must be a built-in model's name, a saltation.Model, "
                       f"{{\"file\": path}} or {{\"define\": definition}}; got {type(model).__name__}", key, -1)


def _model_json(model):
    """``_model_choice`` as the JSON text the native module reads (parse_model_choice)."""
    return _json_text(_model_choice(model), "model")


def model_info(model, config=None):
    """The model ``model`` (a built-in model's name or a ``Model``) configured by ``config``: name,
    N (states), P (parameters), M (guards), state_names, param_names, param_domains, guard_names
    (a model file's guards; empty for a built-in model) and the config in force."""
    return _saltation.model_info(_model_json(model), _json_text(config, "config"))


def options():
    """Every solve option, ``{name: {"default": ..., "meaning": ...}}`` (docs/schema.md)."""
    return {name: {"default": default, "meaning": meaning} for name, meaning, default in _saltation.options()}


def status_names():
    """Status code -> name (``saltation_status_name`` of the C API)."""
    return _saltation.status_names()


def _json_text(value, key):
    try:
        return json.dumps({} if value is None else value, allow_nan=False)
    except (TypeError, ValueError) as error:
        where, bad = _non_finite(value, key)
        if where:  # NaN and Inf have no JSON form: name the key that holds one
            raise InvalidInput(f"invalid input: {where}: {bad!r} is not a finite number", where, -1) from None
        raise InvalidInput(f"invalid input: {key}: {error}", key, -1) from None


def _non_finite(value, path):
    """The path and value of the first NaN or infinity inside ``value``, or (None, None)."""
    if isinstance(value, float) and not math.isfinite(value):
        return path, value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, (list, tuple)) else ()
    for k, v in items:
        found = _non_finite(v, f"{path}.{k}" if isinstance(value, dict) else f"{path}[{k}]")
        if found[0]:
            return found
    return None, None


def _integer_text(value, key, units=False):
    """An override as the text the library's one rule reads (io/overrides.hpp): "" when not given;
    an integer (not a bool or a float) as its digits; with ``units``, also a string like "512M"."""
    if value is None:
        return ""
    if units and isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise InvalidInput(f"invalid input: {key}: {value!r} is not a whole number", key, -1)
    try:
        return str(operator.index(value))
    except TypeError:
        raise InvalidInput(f"invalid input: {key}: {value!r} is not a whole number", key, -1) from None


class Result:
    """A solved batch: the arrays of the result table (docs/schema.md) by name, trajectory first.

    ``r.status`` (n,) int32, ``r.t_end`` (n,), ``r.qf`` (n, N), ``r.n_events`` (n,),
    ``r.events_t`` (n, C) (also ``r.event_times``), ``r.events_q`` (n, C, N) (also
    ``r.event_states``), ``r.events_q_plus``, ``r.events_guard``, ``r.events_flags`` and, with
    sensitivities, ``r.dqf_dtheta`` (n, N, P), ``r.events_dt_dtheta`` (n, C, P),
    ``r.events_dq_dtheta`` (n, C, N, P). Event slots past ``n_events`` hold NaN. The arrays are
    views of the solver's own storage (no copy), strided because the library stores them SoA.
    """

    def __init__(self, native, arrays, meta):
        self._native = native
        self.arrays = arrays
        self.meta = meta

    def __getattr__(self, name):
        arrays = self.__dict__.get("arrays", {})
        if name in arrays:
            return arrays[name]
        raise AttributeError(f"saltation.Result has no array {name!r}; it has {', '.join(arrays)}")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.arrays))

    def __len__(self):
        return self.arrays["status"].shape[0]

    def __repr__(self):
        statuses = np.bincount(self.status, minlength=1)
        counts = ", ".join(f"{self.status_names[str(s)]}={c}" for s, c in enumerate(statuses) if c)
        return f"<saltation.Result {self.meta['model']}: {len(self)} trajectories ({counts})>"

    @property
    def event_times(self):
        return self.arrays["events_t"]

    @property
    def event_states(self):
        return self.arrays["events_q"]

    @property
    def state_names(self):
        return self.meta["state_names"]

    @property
    def parameter_names(self):
        return self.meta["param_names"]

    @property
    def status_names(self):
        return self.meta["status_names"]

    @property
    def provenance(self):
        return self.meta["provenance"]

    @property
    def solve_seconds(self):
        """Wall time of the library's solve alone, without this binding's conversions."""
        return self.meta["solve_seconds"]

    # Derivative products (products.hpp) over y = [qf, then per event slot c: t_e, q-_e], R
    # entries per trajectory; unreached event slots count as 0 there. They need sensitivities.
    @property
    def output_size(self):
        return self._native.output_size

    def outputs(self):
        """y, (n, R)."""
        return self._native.outputs()

    def jacobian(self):
        """dy/dtheta, (n, R, P)."""
        return self._native.jacobian()

    def jvp(self, v):
        """J v for tangents v (n, P): (n, R)."""
        return self._native.jvp(np.asarray(v, dtype=np.float64).reshape(len(self), -1))

    def vjp(self, w):
        """w^T J for cotangents w (n, R): (n, P)."""
        return self._native.vjp(np.asarray(w, dtype=np.float64).reshape(len(self), -1))

    def landing(self, impact, coordinate, target, qf_weights=(), qf_target=()):
        """products.hpp's LandingObjective, L = (q-_impact[coordinate] - target)^2
        + sum_j qf_weights[j] (qf[j] - qf_target[j])^2: (value (n,), gradient (n, P)); NaN for
        trajectories with fewer events."""
        return self._native.landing(impact, coordinate, target, list(qf_weights), list(qf_target))


def solve(model, theta, config=None, *, backend="auto", progress=None, **options):
    """Solve ``model`` for every row of ``theta`` ((n, P) or (P,), float64): a built-in model's
    name, or a ``Model`` of your own (its first run compiles it; ``CompileError`` if that fails).

    ``config``: the model's constants (registry keys, e.g. ``{"bumps": 3, "y0": 1.0}``; a
    ``Model``'s constants by name);
    ``options``: every solve option by its JSON name (``t_final``, ``dt``, ``event_capacity``,
    ``sensitivities``, ... : ``saltation.options()``); ``backend``: "cpu", "cuda" or "auto";
    ``progress(done, total)``: called now and then from the solving thread. The GIL is released
    while the batch runs. Raises ``InvalidInput`` (``.parameter``, ``.row``) before any work.
    """
    rows = np.asarray(theta)
    if np.iscomplexobj(rows):  # float64 would keep the real parts without a word
        raise InvalidInput("invalid input: theta: complex values are not parameters (give real numbers)", "theta", -1)
    rows = np.asarray(rows, dtype=np.float64)
    if rows.ndim == 1:
        rows = rows[None, :]
    if rows.ndim != 2:
        raise InvalidInput(f"invalid input: theta: must be (n, P) or (P,), got shape {rows.shape}", "theta", -1)
    native, arrays, meta = _saltation.solve(_model_json(model), _json_text(config, "config"), rows,
                                            _json_text(options, "options"), backend, progress)
    return Result(native, arrays, json.loads(meta))


def sweep(study, *, samples=None, seed=None, backend=None, memory_budget=None, progress=None):
    """Run the Monte Carlo study ``study`` (a dict in the schema of docs/sweep.md) and return its
    summary (what ``saltation sweep`` writes to summary.json). The study's ``"model"`` is a built-in
    model's name, a ``Model``, ``{"file": path}`` (a relative path is taken from the current folder)
    or ``{"define": definition}``. ``samples`` (>= 1) and ``seed`` (>= 0) override the study's;
    ``memory_budget`` is bytes, an integer or a string like "512M"; ``progress(done, total)``
    counts samples. A bad override raises ``InvalidInput`` naming it."""
    if isinstance(study, dict) and "model" in study:
        study = {**study, "model": _model_choice(study["model"])}
    summary = _saltation.sweep(_json_text(study, "study"), _integer_text(samples, "samples"),
                               _integer_text(seed, "seed"), backend or "auto",
                               _integer_text(memory_budget, "memory_budget", units=True), progress)
    return json.loads(summary)


def disks(config, *, backend=None, progress=None):
    """Run a disk-contact request (docs/disks.md): a rollout, or with ``"mode": "fit"`` a batched
    stiffness fit. Returns the result table: ``{array name: ndarray (systems first), "meta": {...}}``."""
    arrays, meta = _saltation.disks(_json_text(config, "config"), backend or "", progress)
    arrays["meta"] = json.loads(meta)
    return arrays


def fit_stiffness(config, *, backend=None):
    """The stiffness inference of seed 002: ``disks`` with ``"mode": "fit"`` (the request needs
    ``observed``). Returns the fit table (log_stiffness, stiffness_factor, loss, outcome, ...)."""
    return disks({**config, "mode": "fit"}, backend=backend)
