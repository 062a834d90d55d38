"""The solver as a JAX function, differentiable by the exact forward sensitivities.

``solver(model, config, outputs, **options)`` returns ``f(theta) -> {name: array}`` usable under
``jax.jit``, ``jax.grad``, ``jax.jvp``, ``jax.vjp``, ``jax.jacfwd``/``jax.jacrev`` and ``jax.vmap``.
The solve runs on the host through ``jax.pure_callback``; a batch (theta of shape (..., P), and
any ``vmap`` on top) is one native call. Derivatives come from one solve with sensitivities: the
JVP rule is J t with J the per-row sensitivity arrays (the saltation jump included), and JAX
transposes it into the VJP t^T J for ``grad`` and ``jacrev``. No finite differences anywhere.

Event outputs past a trajectory's ``n_events`` are NaN and their derivatives are 0. Second
derivatives are not available (the sensitivities are first order).
"""
import numpy as np

import jax
import jax.numpy as jnp

from . import _api
from ._errors import InvalidInput

# Output name -> (result array, its derivative with respect to theta; None: not differentiable).
_OUTPUTS = {
    "qf": ("qf", "dqf_dtheta"),
    "event_times": ("events_t", "events_dt_dtheta"),
    "event_states": ("events_q", "events_dq_dtheta"),
    "status": ("status", None),
    "n_events": ("n_events", None),
}
# The result table's own names for the same arrays (docs/schema.md).
_SCHEMA_NAMES = {"events_t": "event_times", "events_q": "event_states"}


def _float_dtype():
    return jnp.float64 if jax.config.jax_enable_x64 else jnp.float32


def solver(model, config=None, outputs=("qf", "event_times", "event_states"), *, backend="cpu", **options):
    """The built-in ``model`` (configured by ``config``) as ``f(theta) -> {output: jax array}``.

    theta: (P,) or (..., P). outputs: any of ``qf`` (..., N), ``event_times`` (..., C),
    ``event_states`` (..., C, N) (pre-event states), ``status`` and ``n_events`` (..., int32,
    not differentiable); ``events_t`` / ``events_q`` are accepted for event_times / event_states.
    ``options``: solve options by their JSON names (``t_final``, ``dt``, ``event_capacity``, ...);
    ``sensitivities`` is chosen by the transformation (on only when derivatives are asked for).
    Floats are float64 when ``jax_enable_x64`` is on (recommended), else float32.
    """
    if "sensitivities" in options:
        raise InvalidInput("invalid input: options.sensitivities: saltation.jax turns sensitivities on when JAX "
                           "differentiates; do not pass it", "options.sensitivities", -1)
    names = tuple(_SCHEMA_NAMES.get(name, name) for name in outputs)
    for name in names:
        if name not in _OUTPUTS:
            raise InvalidInput(f"invalid input: outputs: {name!r} is not one of {', '.join(_OUTPUTS)}", "outputs", -1)
    info = _api.model_info(model, config)
    P, N = info["P"], info["N"]
    C = options.get("event_capacity", _api.options()["event_capacity"]["default"])
    inner = {"qf": (N,), "event_times": (C,), "event_states": (C, N), "status": (), "n_events": ()}
    differentiable = tuple(name for name in names if _OUTPUTS[name][1] is not None)

    def shapes(batch, dtype, with_jacobians):
        values = tuple(jax.ShapeDtypeStruct(batch + inner[name], dtype if _OUTPUTS[name][1] else jnp.int32)
                       for name in names)
        if not with_jacobians:
            return values
        return values + tuple(jax.ShapeDtypeStruct(batch + inner[name] + (P,), dtype) for name in differentiable)

    def host_solve(theta, with_jacobians, dtype):
        # theta is (*batch, P), vmapped axes included (vmap_method="expand_dims" puts them first).
        theta = np.asarray(theta, dtype=np.float64)
        batch = theta.shape[:-1]
        result = _api.solve(model, theta.reshape(-1, P), config, backend=backend, sensitivities=with_jacobians,
                            **options)
        # Row-major copies made by the library's side (a blocked transpose of its SoA storage);
        # derivatives in unreached event slots are 0, values there NaN.
        arrays = [result._native.row_major(_OUTPUTS[name][0], False) if _OUTPUTS[name][1]
                  else result.arrays[_OUTPUTS[name][0]] for name in names]
        if with_jacobians:
            arrays += [result._native.row_major(_OUTPUTS[name][1], True) for name in differentiable]
        return tuple(np.asarray(a, dtype=kind.dtype).reshape(kind.shape)
                     for a, kind in zip(arrays, shapes(batch, dtype, with_jacobians)))

    def call(theta, with_jacobians):
        theta = jnp.asarray(theta, _float_dtype())
        if theta.ndim == 0 or theta.shape[-1] != P:
            raise InvalidInput(f"invalid input: theta: must be (..., {P}) for {model}, got shape {theta.shape}",
                               "theta", -1)
        dtype = theta.dtype
        return jax.pure_callback(lambda t: host_solve(t, with_jacobians, dtype),
                                 shapes(theta.shape[:-1], dtype, with_jacobians), theta, vmap_method="expand_dims")

    @jax.custom_jvp
    def f(theta):
        return dict(zip(names, call(theta, False)))

    @f.defjvp
    def f_jvp(primals, tangents):
        (theta,), (tangent,) = primals, tangents
        solved = call(theta, True)
        values = dict(zip(names, solved[:len(names)]))
        jacobians = dict(zip(differentiable, solved[len(names):]))
        tangent = jnp.asarray(tangent, _float_dtype())
        tangent_out = {}
        for name in names:
            if name in jacobians:
                # J t per row, J (*batch, *S, P) row-major: XLA reads it contiguously here and in
                # the transpose (u^T J) that grad and jacrev make of it.
                t = tangent.reshape(tangent.shape[:-1] + (1,) * len(inner[name]) + (P,))
                tangent_out[name] = jnp.sum(jacobians[name] * t, axis=-1)
            else:
                tangent_out[name] = np.zeros(values[name].shape, jax.dtypes.float0)
        return values, tangent_out

    return f
