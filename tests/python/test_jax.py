"""saltation.jax: jit, grad, jvp, vjp, jacfwd/jacrev and vmap through the solver, against the C++
sensitivity arrays and products (to 1e-12) and against central finite differences."""
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import saltation
import saltation.jax as sj


@pytest.fixture
def rows(terrain):
    """Three launches over the same terrain, all with at least three impacts."""
    theta = np.array(terrain[3])
    out = np.tile(theta, (3, 1))
    out[:, 0] = [1.0, 1.1, 0.9]
    out[:, 1] = [0.5, 0.4, 0.6]
    return out


def test_outputs_under_jit_equal_the_solve(terrain, rows):
    model, config, options, _ = terrain
    f = jax.jit(sj.solver(model, config, outputs=("qf", "event_times", "event_states", "n_events"), **options))
    out = f(rows)
    r = saltation.solve(model, rows, config=config, **options)
    np.testing.assert_array_equal(out["qf"], r.qf)
    np.testing.assert_array_equal(out["event_times"], r.event_times)  # NaN past n_events on both sides
    np.testing.assert_array_equal(out["event_states"], r.event_states)
    np.testing.assert_array_equal(out["n_events"], r.n_events)
    assert out["qf"].dtype == jnp.float64 and out["n_events"].dtype == jnp.int32
    single = f(rows[0])
    assert single["qf"].shape == (4,) and single["event_states"].shape == (options["event_capacity"], 4)
    np.testing.assert_array_equal(single["qf"], r.qf[0])


@pytest.mark.parametrize("stepping", [{}, {"method": "dopri5", "rtol": 1e-10, "atol": 1e-10, "backend": "cpu"}],
                         ids=["rk4", "dopri5"])
def test_jacobians_are_the_sensitivity_arrays(terrain, rows, stepping):
    model, config, options, _ = terrain
    options = {**options, **stepping}
    f = sj.solver(model, config, **options)
    r = saltation.solve(model, rows[0], config=config, sensitivities=True, **options)
    k = int(r.n_events[0])
    for jac in (jax.jacrev, jax.jacfwd):
        J = jac(f)(jnp.asarray(rows[0]))
        np.testing.assert_array_equal(J["qf"], r.dqf_dtheta[0])
        np.testing.assert_array_equal(J["event_times"][:k], r.events_dt_dtheta[0, :k])
        np.testing.assert_array_equal(J["event_states"][:k], r.events_dq_dtheta[0, :k])
        # Unreached event slots: NaN values, zero derivatives.
        assert np.all(J["event_times"][k:] == 0) and np.all(J["event_states"][k:] == 0)


def test_grad_of_a_landing_objective_equals_the_cpp_product(terrain, rows):
    model, config, options, _ = terrain
    f = sj.solver(model, config, outputs=("event_states", "qf"), **options)
    target, weights = 2.0, np.array([0.0, 0.5, 0.1, 0.0])

    def loss(theta):
        out = f(theta)
        miss = out["event_states"][:, 1, 0] - target
        return jnp.sum(miss ** 2 + jnp.sum(weights * out["qf"] ** 2, axis=-1))

    value, gradient = jax.jit(jax.value_and_grad(loss))(jnp.asarray(rows))
    r = saltation.solve(model, rows, config=config, sensitivities=True, **options)
    cpp_value, cpp_gradient = r.landing(impact=1, coordinate=0, target=target, qf_weights=weights,
                                        qf_target=np.zeros(4))
    assert np.all(np.isfinite(cpp_gradient))
    np.testing.assert_allclose(value, np.sum(cpp_value), rtol=1e-12)
    np.testing.assert_allclose(gradient, cpp_gradient, rtol=1e-12, atol=1e-12)
    # Per-row gradients by vmap over grad: the same rows of the C++ product.
    per_row = jax.vmap(jax.grad(loss))(jnp.asarray(rows)[:, None, :])[:, 0, :]
    np.testing.assert_allclose(per_row, cpp_gradient, rtol=1e-12, atol=1e-12)


def test_jvp_and_vjp_equal_the_cpp_products(terrain, rows):
    model, config, options, _ = terrain
    f = sj.solver(model, config, outputs=("qf", "event_times", "event_states"), **options)
    r = saltation.solve(model, rows, config=config, sensitivities=True, **options)
    n, N, C = len(rows), 4, options["event_capacity"]
    rng = np.random.default_rng(7)
    v = rng.normal(size=rows.shape)
    _, tangent = jax.jvp(f, (jnp.asarray(rows),), (jnp.asarray(v),))
    Jv = r.jvp(v)  # y = [qf, then per slot: t_e, q-_e]
    np.testing.assert_allclose(tangent["qf"], Jv[:, :N], rtol=1e-12, atol=1e-14)
    slots = Jv[:, N:].reshape(n, C, 1 + N)
    np.testing.assert_allclose(tangent["event_times"], slots[:, :, 0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tangent["event_states"], slots[:, :, 1:], rtol=1e-12, atol=1e-14)

    w = rng.normal(size=(n, r.output_size))
    reached = np.arange(C)[None, :] < r.n_events[:, None]
    w_slots = w[:, N:].reshape(n, C, 1 + N) * reached[:, :, None]
    _, pullback = jax.vjp(f, jnp.asarray(rows))
    (cotangent,) = pullback({"qf": jnp.asarray(w[:, :N]), "event_times": jnp.asarray(w_slots[:, :, 0]),
                             "event_states": jnp.asarray(w_slots[:, :, 1:])})
    np.testing.assert_allclose(cotangent, r.vjp(w), rtol=1e-12, atol=1e-13)


def test_gradient_matches_central_differences(terrain):
    model, config, options, theta = terrain
    f = sj.solver(model, config, outputs=("event_times", "event_states"), **options)

    def second_impact(theta):
        out = f(theta)
        return out["event_times"][1] + out["event_states"][1, 0]

    gradient = jax.grad(second_impact)(jnp.asarray(theta))
    h = 1e-6
    for p in range(len(theta)):
        step = np.zeros(len(theta))
        step[p] = h
        fd = (second_impact(jnp.asarray(theta) + step) - second_impact(jnp.asarray(theta) - step)) / (2 * h)
        np.testing.assert_allclose(gradient[p], fd, rtol=1e-6, atol=1e-7, err_msg=f"parameter {p}")


def test_vmap_is_one_native_solve(terrain, rows):
    model, config, options, _ = terrain
    f = sj.solver(model, config, outputs=("qf",), **options)
    expected = saltation.solve(model, rows, config=config, **options).qf

    def solves(run):
        """run()'s value and how many native solves it made."""
        before = sj.native_solves()[0]
        value = jax.block_until_ready(run())
        return value, sj.native_solves()[0] - before

    vmapped = jax.jit(jax.vmap(lambda t: f(t)["qf"]))
    out, count = solves(lambda: vmapped(jnp.asarray(rows)))
    assert count == 1
    np.testing.assert_array_equal(out, expected)
    jacobians, count = solves(lambda: jax.vmap(jax.jacrev(lambda t: f(t)["qf"]))(jnp.asarray(rows)))
    assert count == 1 and jacobians.shape == (3, 4, 14)
    np.testing.assert_array_equal(jacobians, saltation.solve(model, rows, config=config, sensitivities=True,
                                                             **options).dqf_dtheta)
    # vmap over a batch of batches: still one solve, of all rows.
    stacked = jnp.stack([jnp.asarray(rows), jnp.asarray(rows)[::-1]])
    out2, count = solves(lambda: jax.vmap(lambda t: f(t)["qf"])(stacked))
    assert count == 1 and out2.shape == (2, 3, 4)
    np.testing.assert_array_equal(out2[1], out[::-1])
    # The library's own time of the latest solve is kept, as Result.solve_seconds.
    assert sj.native_solves()[1] > 0


def test_unreached_events_give_zero_gradient_when_masked(terrain):
    model, config, options, theta = terrain
    f = sj.solver(model, config, outputs=("event_times", "n_events"), **options)

    def last_slot_or_zero(theta):
        out = f(theta)
        t = out["event_times"][-1]  # never reached here: NaN
        return jnp.where(jnp.isnan(t), 0.0, t)

    assert int(f(jnp.asarray(theta))["n_events"]) < options["event_capacity"]
    gradient = jax.grad(last_slot_or_zero)(jnp.asarray(theta))
    np.testing.assert_array_equal(gradient, 0.0)


def test_bad_solver_arguments(terrain):
    model, config, options, _ = terrain
    with pytest.raises(saltation.InvalidInput) as caught:
        sj.solver(model, config, outputs=("t_end",), **options)
    assert caught.value.parameter == "outputs"
    with pytest.raises(saltation.InvalidInput):
        sj.solver(model, config, sensitivities=True)
    f = sj.solver(model, config, **options)
    with pytest.raises(saltation.InvalidInput) as caught:
        f(jnp.ones(5))
    assert caught.value.parameter == "theta"
    # 32-bit JAX cannot hold the solver's float64: refused with the setting to change.
    jax.config.update("jax_enable_x64", False)
    try:
        with pytest.raises(RuntimeError, match="jax_enable_x64"):
            f(jnp.ones(14))
    finally:
        jax.config.update("jax_enable_x64", True)
    # A bad value is found when the solve runs: JAX's runtime error, with the library's message.
    ball = jax.jit(sj.solver("bouncing_ball", outputs=("qf",), t_final=1.0))
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"invalid input: e \(row 0\)"):
        ball(jnp.array([1.0, 0.0, 1.5]))


def test_a_build_without_the_ffi_targets_says_how_to_rebuild():
    # What a module built where jaxlib was absent lacks (python/CMakeLists.txt); in a process of its own.
    code = ("import saltation._saltation as m; del m.jax_ffi_targets\n"
            "try:\n    import saltation.jax\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.PIPE, text=True).stdout
    assert "no XLA FFI targets" in out and "pip install" in out
