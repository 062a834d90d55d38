"""The solver as a JAX function, differentiable by the exact forward sensitivities.

``solver(model, config, outputs, **options)`` returns ``f(theta) -> {name: array}`` usable under
``jax.jit``, ``jax.grad``, ``jax.jvp``, ``jax.vjp``, ``jax.jacfwd``/``jax.jacrev`` and ``jax.vmap``.
The solve is an XLA FFI target of the native module (``jax.ffi``): it writes the chosen result
arrays into XLA's buffers in the library's own layout, trajectories last, and a batch (theta of
shape (..., P), and any ``vmap`` on top) is one native solve. Derivatives come from one solve with
sensitivities: the JVP rule is J t with J the per-row sensitivity arrays (the saltation jump
included), computed by a second FFI target; its transpose, u^T J for ``grad`` and ``jacrev``, is a
third. No finite differences anywhere.

Event outputs past a trajectory's ``n_events`` are NaN and their derivatives are 0. Second
derivatives are not available (the sensitivities are first order). 64-bit floats must be on
(``jax.config.update("jax_enable_x64", True)``): the solver computes in float64.
"""
import math

import numpy as np

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from . import _api, _saltation
from ._errors import InvalidInput

if not hasattr(_saltation, "jax_ffi_targets"):
    raise ImportError(
        "saltation.jax: this build of saltation has no XLA FFI targets, because jaxlib was not importable by the "
        "Python that built it. Rebuild it with JAX present: `pip install .` (an isolated build fetches jaxlib), "
        "or `pip install jax` and then `pip install --no-build-isolation --force-reinstall .`")

for _target, _capsule in _saltation.jax_ffi_targets().items():
    jax.ffi.register_ffi_target(_target, _capsule, platform="cpu")

# Output name -> (result-table array, its derivative with respect to theta; None: not differentiable).
_OUTPUTS = {
    "qf": ("qf", "dqf_dtheta"),
    "event_times": ("events_t", "events_dt_dtheta"),
    "event_states": ("events_q", "events_dq_dtheta"),
    "status": ("status", None),
    "n_events": ("n_events", None),
}
# The result table's own names for the same arrays (docs/schema.md).
_SCHEMA_NAMES = {"events_t": "event_times", "events_q": "event_states"}


def native_solves():
    """``(count, seconds)``: the native solves run by ``saltation.jax`` functions in this process so
    far, and the library's own time in the latest one (as ``Result.solve_seconds``)."""
    return _saltation.jax_solve_stats()


# ---- The two products over the library's layout, as primitives: J (*GJ, K, P, n) with
# x (*GJ, *M, X, n), J's leading axes a prefix of x's (M operands per J, as jax.jacfwd and
# jax.jacrev batch them). J t maps t (.., P, n) to (.., K, n); u^T J maps u (.., K, n) to (.., P, n).
# Each is the other's transpose; both run as FFI targets, reading J once, row by row.

_jacobian_times = Primitive("saltation_jacobian_times")
_jacobian_transpose_times = Primitive("saltation_jacobian_transpose_times")


def _define_product(product, transpose, out_axis):
    """out_axis: the axis of J whose extent the product's rows have (-3: K, -2: P)."""

    def shape(J, x):
        return x.shape[:-2] + (J.shape[out_axis], x.shape[-1])

    product.def_abstract_eval(lambda J, x: jax.core.ShapedArray(shape(J, x), x.dtype))
    product.def_impl(lambda J, x: jax.ffi.ffi_call(product.name, jax.ShapeDtypeStruct(shape(J, x), x.dtype))(J, x))
    mlir.register_lowering(product, jax.ffi.ffi_lowering(product.name), platform="cpu")

    def transpose_rule(cotangent, J, x):
        assert not ad.is_undefined_primal(J) and ad.is_undefined_primal(x)
        if type(cotangent) is ad.Zero:
            return None, ad.Zero(x.aval)
        return None, transpose.bind(J, cotangent)

    ad.primitive_transposes[product] = transpose_rule

    def batch_rule(args, dims):
        (J, x), (J_axis, x_axis) = args, dims
        if J_axis is None:  # one J for every member: the new axis joins x's M axes, right after J's own
            axis = J.ndim - 3
            return product.bind(J, jnp.moveaxis(x, x_axis, axis)), axis
        J = jnp.moveaxis(J, J_axis, 0)
        x = jnp.moveaxis(x, x_axis, 0) if x_axis is not None else jnp.broadcast_to(x, (J.shape[0],) + x.shape)
        return product.bind(J, x), 0

    batching.primitive_batchers[product] = batch_rule


_define_product(_jacobian_times, _jacobian_transpose_times, -3)
_define_product(_jacobian_transpose_times, _jacobian_times, -2)


def solver(model, config=None, outputs=("qf", "event_times", "event_states"), *, backend="cpu", **options):
    """``model`` (configured by ``config``) as ``f(theta) -> {output: jax array}``: a built-in
    model's name or a ``saltation.Model`` of your own (compiled on its first solve).

    theta: (P,) or (..., P), float64. outputs: any of ``qf`` (..., N), ``event_times`` (..., C),
    ``event_states`` (..., C, N) (pre-event states), ``status`` and ``n_events`` (..., int32,
    not differentiable); ``events_t`` / ``events_q`` are accepted for event_times / event_states.
    Only the chosen outputs and their derivatives cross into JAX (the event states' derivatives are
    most of J). ``options``: solve options by their JSON names (``t_final``, ``dt``,
    ``event_capacity``, ...); ``sensitivities`` is chosen by the transformation (on only when
    derivatives are asked for). Needs ``jax_enable_x64``.
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
    model_json = _api._model_json(model)  # what the FFI target reads (tables.cpp, model_from_json)
    C = options.get("event_capacity", _api.options()["event_capacity"]["default"])
    inner = {"qf": (N,), "event_times": (C,), "event_states": (C, N), "status": (), "n_events": ()}
    differentiable = tuple(name for name in names if _OUTPUTS[name][1] is not None)
    attributes = {
        False: dict(model=model_json, config=_api._json_text(config, "config"), backend=backend,
                    options=_api._json_text({**options, "sensitivities": False}, "options"),
                    columns=",".join(_OUTPUTS[name][0] for name in names)),
        True: dict(model=model_json, config=_api._json_text(config, "config"), backend=backend,
                   options=_api._json_text({**options, "sensitivities": True}, "options"),
                   columns=",".join([_OUTPUTS[name][0] for name in names] +
                                    [_OUTPUTS[name][1] for name in differentiable])),
    }

    def rows_of(theta):
        if not jax.config.jax_enable_x64:
            raise RuntimeError("saltation.jax needs 64-bit floats (the solver's): "
                               "jax.config.update('jax_enable_x64', True)")
        theta = jnp.asarray(theta, jnp.float64)
        if theta.ndim == 0 or theta.shape[-1] != P:
            raise InvalidInput(f"invalid input: theta: must be (..., {P}) for {info['name']}, got shape {theta.shape}",
                               "theta", -1)
        return theta.reshape(-1, P), theta.shape[:-1]

    def native(rows, with_jacobians):
        """The solve of rows (n, P): values (*S, n), then with_jacobians derivatives (*S, P, n)."""
        n = rows.shape[0]
        shapes = [jax.ShapeDtypeStruct(inner[name] + (n,), jnp.float64 if _OUTPUTS[name][1] else jnp.int32)
                  for name in names]
        if with_jacobians:
            shapes += [jax.ShapeDtypeStruct(inner[name] + (P, n), jnp.float64) for name in differentiable]
        # broadcast_all: under vmap the call gets theta (*vmapped, n, P), still one native solve.
        call = jax.ffi.ffi_call("saltation_solve", shapes, vmap_method="broadcast_all")
        return call(rows, **attributes[with_jacobians])

    def user_layout(soa, batch):
        """(*S, n) in the library's layout -> (*batch, *S)."""
        return jnp.moveaxis(soa, -1, 0).reshape(batch + soa.shape[:-1])

    @jax.custom_jvp
    def f(theta):
        rows, batch = rows_of(theta)
        return {name: user_layout(value, batch) for name, value in zip(names, native(rows, False))}

    @f.defjvp
    def f_jvp(primals, tangents):
        (theta,), (tangent,) = primals, tangents
        rows, batch = rows_of(theta)
        n = rows.shape[0]
        solved = native(rows, bool(differentiable))
        values = {name: user_layout(value, batch) for name, value in zip(names, solved)}
        t = jnp.asarray(tangent, jnp.float64).reshape(n, P).T  # (P, n), the library's layout
        tangent_out = {name: np.zeros(values[name].shape, jax.dtypes.float0) for name in names}
        for name, J in zip(differentiable, solved[len(names):]):
            K = math.prod(inner[name])
            Jt = _jacobian_times.bind(J.reshape(K, P, n), t)
            tangent_out[name] = user_layout(Jt.reshape(inner[name] + (n,)), batch)
        return values, tangent_out

    return f
