"""saltation's terrain ball as a Tesseract: launches over a terrain of Gaussian bumps, with their
final states, impact points and impact times, differentiable with respect to the launch velocity,
drag, restitution, friction and every bump parameter (docs/tesseract.md).

One request holds n launches (rows of ``launch_velocity``) over one terrain and one material, so
each row solves theta = [vx0, vy0, c, e, mu, a_1, b_1, w_1, ..., a_K, b_K, w_K] with the shared
parameters repeated. Every derivative comes from the solver's forward sensitivities through the
library's products (``Result.jvp``, ``Result.vjp``, ``Result.jacobian``): one solve per request,
never a Jacobian formed to answer a product. Derivatives are exact at a fixed event topology.

The optional input ``model`` chooses the model that runs: ``"terrain_ball"`` (the default, the
built-in model) or a model definition, the content of a model file as a JSON object
(docs/models.md, "Your model in five minutes"), compiled by the server the first time it runs
and cached (SALTATION_CACHE_DIR). A definition keeps the terrain ball's interface, since every
other input and output is laid out by it: the states ``x, y, vx, vy``; the parameters ``vx0, vy0,
c, e, mu, a_1, b_1, w_1, ..., a_K, b_K, w_K`` in that order, K the number of bumps this request
gives; and the constants ``x0, y0, g`` (set from the inputs x0, y0 and gravity). What it may
change is everything else: the flow, the terrain and the guard, the impact law, the parameters'
domains. A definition that breaks the interface, or has a mistake, is refused with HTTP 422 at
``inputs.model`` (a mistake's message names its JSON path, ``model.define...``), as is any other
built-in model's name. A model file's path is not accepted: a client never makes the server read
a file. A model the server cannot compile (no C++ compiler in its image) is a server error.
"""

from typing import Any, Literal, Union

import numpy as np
import saltation
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, Field, FiniteFloat, model_validator

from tesseract_core.runtime import Array, Differentiable, Float64, Int32, ShapeDType

MODEL = "terrain_ball"
STATE_SIZE = 4  # q = (x, y, vx, vy)
# A request's sensitivities take n (N + C (1 + N)) P doubles; past this many the request is
# refused up front rather than exhausting the server's memory.
MAX_DERIVATIVE_VALUES = 2**27


class InputSchema(BaseModel):
    launch_velocity: Differentiable[Array[(None, 2), Float64]] = Field(
        description="(vx0, vy0) of each launch, shape (n, 2); one trajectory per row"
    )
    drag: Differentiable[Float64] = Field(description="linear drag c >= 0, shared by every launch")
    restitution: Differentiable[Float64] = Field(description="normal restitution e in [0, 1]")
    friction: Differentiable[Float64] = Field(description="tangential loss mu in [0, 1] (retention 1 - mu)")
    bump_heights: Differentiable[Array[(None,), Float64]] = Field(description="a_k of the K bumps")
    bump_centers: Differentiable[Array[(None,), Float64]] = Field(description="b_k of the K bumps")
    bump_widths: Differentiable[Array[(None,), Float64]] = Field(description="w_k > 0 of the K bumps")
    x0: FiniteFloat = Field(default=0.0, description="launch point x (model constant)")
    y0: FiniteFloat = Field(default=1.0, description="launch point y, on or above the terrain")
    gravity: FiniteFloat = Field(default=9.81, description="gravitational acceleration g")
    t_final: FiniteFloat = Field(default=3.0, description="integrate over [0, t_final]")
    dt: FiniteFloat = Field(default=1e-3, description="fixed RK4 step")
    method: Literal["rk4", "dopri5"] = Field(
        default="rk4", description="rk4 (fixed steps of dt) or dopri5 (adaptive steps to rtol and atol; auto runs it on the CPU)"
    )
    rtol: FiniteFloat = Field(default=1e-6, description="dopri5: relative tolerance of each step's local error")
    atol: Union[FiniteFloat, list[FiniteFloat]] = Field(
        default=1e-9,
        description="dopri5: absolute tolerance of each step's local error, one number or one per state (x, y, vx, vy)",
    )
    event_capacity: int = Field(
        default=4, ge=1, description="impacts recorded (C); the next one ends the trajectory with status 1"
    )
    v_stop: FiniteFloat = Field(default=0.0, description="settle (status 2) below this normal impact speed; 0: off")
    probes: int = Field(default=3, ge=0, description="interior guard probes per step")
    backend: Literal["cpu", "cuda", "auto"] = Field(default="auto", description="where the solver runs")
    model: Union[str, dict[str, Any]] = Field(
        default=MODEL,
        description='"terrain_ball", or a model definition (docs/models.md) with the terrain ball\'s states, '
        "parameters (for this request's bumps) and constants x0, y0, g; compiled by the server on first use",
    )

    # Also checks the shapes of abstract_eval's inputs (their arrays are ShapeDType there).
    @model_validator(mode="after")
    def _one_terrain_of_bounded_size(self):
        K, K_centers, K_widths = (field.shape[0] for field in (self.bump_heights, self.bump_centers, self.bump_widths))
        if K_centers != K or K_widths != K:
            raise ValueError(
                f"bump_heights, bump_centers and bump_widths must have one entry per bump; got "
                f"{K}, {K_centers} and {K_widths}"
            )
        n = self.launch_velocity.shape[0]
        values = n * (STATE_SIZE + self.event_capacity * (1 + STATE_SIZE)) * (5 + 3 * K)
        if values > MAX_DERIVATIVE_VALUES:
            raise ValueError(
                f"launch_velocity and event_capacity: {n} launches with {self.event_capacity} impact slots "
                f"need {values} derivative values, above this server's limit of {MAX_DERIVATIVE_VALUES}; "
                f"split the batch"
            )
        return self


class OutputSchema(BaseModel):
    qf: Differentiable[Array[(None, STATE_SIZE), Float64]] = Field(
        description="final state (x, y, vx, vy) of each launch; what it is depends on status"
    )
    impact_times: Differentiable[Array[(None, None), Float64]] = Field(
        description="time of each impact, (n, C); NaN past n_impacts"
    )
    impact_points: Differentiable[Array[(None, None, 2), Float64]] = Field(
        description="(x, y) of each impact (the pre-impact state), (n, C, 2); NaN past n_impacts"
    )
    status: Array[(None,), Int32] = Field(
        description="0 ran to t_final, 1 event capacity reached, 2 settled, 3 non-finite, 5 Zeno, "
        "9 step size underflow, 10 step limit (dopri5)"
    )
    n_impacts: Array[(None,), Int32] = Field(description="impacts recorded")
    t_end: Array[(None,), Float64] = Field(description="time at which each trajectory ended")


# Where each differentiable input sits in a theta row: its columns, and whether the input has
# one value per launch (a row of launch_velocity) or one shared by every launch.
THETA_COLUMNS = {
    "launch_velocity": (slice(0, 2), True),
    "drag": (2, False),
    "restitution": (3, False),
    "friction": (4, False),
    "bump_heights": (slice(5, None, 3), False),
    "bump_centers": (slice(6, None, 3), False),
    "bump_widths": (slice(7, None, 3), False),
}
OUTPUT_KEYS = ("qf", "impact_times", "impact_points")

# The library names a bad value by its own name (solve_io's readers and the model's domain
# checks); a client knows the schema's. Bump parameters are a_k, b_k, w_k (k from 1).
PARAMETER_FIELDS = {
    "vx0": "launch_velocity", "vy0": "launch_velocity", "c": "drag", "e": "restitution", "mu": "friction",
    "a": "bump_heights", "b": "bump_centers", "w": "bump_widths",
    "config.x0": "x0", "config.y0": "y0", "config.g": "gravity", "config.bumps": "bump_heights",
    "initial state": "y0",  # the launch point is below the terrain
    "theta": "launch_velocity",  # the rows themselves (none)
}


def _input_location(parameter: str, row: int) -> tuple:
    """The schema path of the library's parameter name (and batch row)."""
    if parameter.startswith("options."):
        return ("inputs", parameter.removeprefix("options."))
    if parameter == "model" or parameter.startswith("model."):
        return _definition_location(parameter)
    name, _, bump = parameter.partition("_")
    field = PARAMETER_FIELDS.get(parameter) or (PARAMETER_FIELDS.get(name) if bump.isdigit() else None)
    if field is None:
        return ("inputs",)
    if parameter in ("vx0", "vy0") and row >= 0:
        return ("inputs", field, row, ("vx0", "vy0").index(parameter))
    if bump.isdigit():
        return ("inputs", field, int(bump) - 1)
    return ("inputs", field)


def _refuse(location: tuple, message: str):
    """A validation error naming ``location`` in the request: HTTP 422, like the schema's own."""
    raise RequestValidationError([{"type": "value_error", "loc": ("body", *location), "msg": message}])


def _definition_location(parameter: str) -> tuple:
    """The request path of a definition's mistake, from the library's JSON path of it
    ("model.define.guards[0].reset.vx" -> inputs.model.guards.0.reset.vx)."""
    location = ["inputs", "model"]
    path = parameter.removeprefix("model.define") if parameter.startswith("model.define") else parameter[len("model"):]
    for part in path.split("."):
        name, *indices = part.replace("]", "").split("[")
        location += ([name] if name else []) + [int(i) for i in indices if i.isdigit()]
    return tuple(location)


def _model(inputs: InputSchema) -> tuple:
    """The model and config of saltation.solve for this request: the built-in terrain ball, or the
    request's model definition once it is found to keep the terrain ball's interface."""
    K = len(inputs.bump_heights)
    constants = {"x0": inputs.x0, "y0": inputs.y0, "g": inputs.gravity}
    if isinstance(inputs.model, str):
        if inputs.model != MODEL:
            _refuse(("inputs", "model"), f"model {inputs.model!r}: this Tesseract runs {MODEL!r} or a model "
                    f"definition with its interface (a JSON object, docs/models.md)")
        return MODEL, {"bumps": K, **constants}
    if "file" in inputs.model or "define" in inputs.model:
        _refuse(("inputs", "model"), "model: give the model definition itself (the content of a model file), "
                "not {\"file\": ...} or {\"define\": ...}; this server reads no files")
    try:
        model = saltation.Model(inputs.model)
    except saltation.InvalidInput as error:
        _refuse(_definition_location(error.parameter), str(error))
    info = model.info()
    parameters = ["vx0", "vy0", "c", "e", "mu"] + [f"{p}_{k}" for k in range(1, K + 1) for p in ("a", "b", "w")]
    expected = {"states": ["x", "y", "vx", "vy"], "parameters": parameters, "constants": sorted(constants)}
    found = {"states": info["state_names"], "parameters": info["param_names"], "constants": sorted(info["config"])}
    for key in expected:
        if found[key] != expected[key]:
            _refuse(("inputs", "model", key), f"model {info['name']!r} has the {key} {', '.join(found[key])}; this "
                    f"Tesseract's interface (with {K} bumps) needs {', '.join(expected[key])}")
    return model, constants


def _theta(inputs: InputSchema) -> np.ndarray:
    n = len(inputs.launch_velocity)
    K = len(inputs.bump_heights)
    theta = np.empty((n, 5 + 3 * K))
    for field, (columns, _) in THETA_COLUMNS.items():
        theta[:, columns] = np.asarray(getattr(inputs, field), dtype=np.float64)
    return theta


def _solve(inputs: InputSchema, sensitivities: bool) -> saltation.Result:
    """One solve of every launch; the library's refusals become validation errors that name the
    input (HTTP 422), never a server error."""
    model, config = _model(inputs)
    try:
        return saltation.solve(
            model,
            _theta(inputs),
            config=config,
            backend=inputs.backend,
            sensitivities=sensitivities,
            t_final=inputs.t_final,
            dt=inputs.dt,
            method=inputs.method,
            rtol=inputs.rtol,
            atol=inputs.atol,
            event_capacity=inputs.event_capacity,
            v_stop=inputs.v_stop,
            probes=inputs.probes,
        )
    except saltation.InvalidInput as error:
        _refuse(_input_location(error.parameter, error.row), str(error))
    except saltation.CudaError as error:
        if inputs.backend != "cuda" or saltation.cuda_device_available():
            raise
        _refuse(("inputs", "backend"), str(error))


def _impact_slots(y: np.ndarray, n: int, C: int) -> dict:
    """The outputs' entries of the library's per-trajectory vector y = [qf, (t_e, q-_e) per event
    slot] (or of anything laid out like it, with trailing axes): {output key: array}."""
    rest = y.shape[2:]
    slots = y[:, STATE_SIZE:].reshape(n, C, 1 + STATE_SIZE, *rest)
    return {"qf": y[:, :STATE_SIZE], "impact_times": slots[:, :, 0], "impact_points": slots[:, :, 1:3]}


def _valid_slots(result: saltation.Result) -> np.ndarray:
    C = result.event_times.shape[1]
    return np.arange(C)[None, :] < np.asarray(result.n_events)[:, None]


def apply(inputs: InputSchema) -> OutputSchema:
    r = _solve(inputs, sensitivities=False)
    return OutputSchema(
        qf=r.qf,
        impact_times=r.event_times,
        impact_points=r.event_states[:, :, :2],
        status=r.status,
        n_impacts=r.n_events,
        t_end=r.t_end,
    )


def _theta_tangent(inputs: InputSchema, tangent_vector: dict) -> np.ndarray:
    """Tangents of the inputs as tangents of each launch's theta row (n, P)."""
    v = np.zeros_like(_theta(inputs))
    for field, tangent in tangent_vector.items():
        v[:, THETA_COLUMNS[field][0]] = np.asarray(tangent, dtype=np.float64)
    return v


def _input_cotangents(inputs: InputSchema, g: np.ndarray, vjp_inputs: set) -> dict:
    """Cotangents of theta rows (n, P) as cotangents of the inputs: a launch keeps its row, a
    shared input sums over the launches."""
    out = {}
    for field in vjp_inputs:
        columns, per_launch = THETA_COLUMNS[field]
        out[field] = g[:, columns] if per_launch else g[:, columns].sum(axis=0)
    return out


def jacobian_vector_product(inputs: InputSchema, jvp_inputs: set, jvp_outputs: set, tangent_vector: dict):
    r = _solve(inputs, sensitivities=True)
    y_dot = r.jvp(_theta_tangent(inputs, {field: tangent_vector[field] for field in jvp_inputs}))
    products = _impact_slots(np.asarray(y_dot), len(r), r.event_times.shape[1])
    return {key: products[key] for key in jvp_outputs}


def vector_jacobian_product(inputs: InputSchema, vjp_inputs: set, vjp_outputs: set, cotangent_vector: dict):
    n, C = len(inputs.launch_velocity), inputs.event_capacity
    output_shapes = {"qf": (n, STATE_SIZE), "impact_times": (n, C), "impact_points": (n, C, 2)}
    u = {key: np.asarray(cotangent_vector[key], dtype=np.float64) if key in vjp_outputs else None for key in OUTPUT_KEYS}
    for key in vjp_outputs:
        # The schema's shapes are polymorphic in n and C; this request's are fixed.
        if u[key].shape != output_shapes[key]:
            _refuse(("cotangent_vector", key), f"cotangent of {key} has shape {u[key].shape}; this request's "
                    f"{key} has shape {output_shapes[key]}")
    r = _solve(inputs, sensitivities=True)
    valid = _valid_slots(r)
    w_qf = np.zeros((n, STATE_SIZE)) if u["qf"] is None else u["qf"]
    w_slots = np.zeros((n, C, 1 + STATE_SIZE))
    # Slots past n_impacts hold NaN values with zero derivatives: whatever a client sends for
    # them must not turn the product into NaN.
    if u["impact_times"] is not None:
        w_slots[:, :, 0] = np.where(valid, u["impact_times"], 0.0)
    if u["impact_points"] is not None:
        w_slots[:, :, 1:3] = np.where(valid[:, :, None], u["impact_points"], 0.0)
    w = np.concatenate([w_qf, w_slots.reshape(n, -1)], axis=1)
    return _input_cotangents(inputs, np.asarray(r.vjp(w)), vjp_inputs)


def jacobian(inputs: InputSchema, jac_inputs: set, jac_outputs: set):
    n, C, K = len(inputs.launch_velocity), inputs.event_capacity, len(inputs.bump_heights)
    # Dense blocks (*output shape, *input shape); launch_velocity's is n x n block diagonal.
    output_sizes = {"qf": n * STATE_SIZE, "impact_times": n * C, "impact_points": n * C * 2}
    input_sizes = {"launch_velocity": 2 * n, "drag": 1, "restitution": 1, "friction": 1,
                   "bump_heights": K, "bump_centers": K, "bump_widths": K}
    values = sum(output_sizes[o] for o in jac_outputs) * sum(input_sizes[i] for i in jac_inputs)
    if values > MAX_DERIVATIVE_VALUES:
        _refuse(("jac_inputs",), f"the Jacobian would hold {values} values, above this server's limit of "
                f"{MAX_DERIVATIVE_VALUES}; ask for jacobian_vector_product or vector_jacobian_product, or fewer launches")
    r = _solve(inputs, sensitivities=True)
    blocks = _impact_slots(np.asarray(r.jacobian()), n, r.event_times.shape[1])  # (n, *output, P)
    result = {}
    for key in jac_outputs:
        d = blocks[key]
        result[key] = {}
        for field in jac_inputs:
            columns, per_launch = THETA_COLUMNS[field]
            if per_launch:
                # Launch i moves only row i: d out[i, ...] / d launch_velocity[j, k] = delta_ij d[i, ..., k].
                result[key][field] = np.einsum("i...k,ij->i...jk", d[..., columns], np.eye(n))
            else:
                result[key][field] = d[..., columns]
    return result


def abstract_eval(abstract_inputs):
    n = abstract_inputs.launch_velocity.shape[0]
    C = abstract_inputs.event_capacity

    def f64(*shape):
        return ShapeDType(shape=shape, dtype="float64")

    return {
        "qf": f64(n, STATE_SIZE),
        "impact_times": f64(n, C),
        "impact_points": f64(n, C, 2),
        "status": ShapeDType(shape=(n,), dtype="int32"),
        "n_impacts": ShapeDType(shape=(n,), dtype="int32"),
        "t_end": f64(n),
    }
