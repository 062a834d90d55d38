"""saltation.solve from Python: closed forms, NumPy layouts and views, products, progress, the
GIL, and bad inputs raised as saltation.InvalidInput naming the parameter and the row."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import saltation

G = 9.81


def dropped_ball(h0, e, n_events):
    """Event times of a ball dropped from rest and their derivatives (seed 003's closed forms)."""
    t1 = np.sqrt(2 * h0 / G)
    j = np.arange(1, n_events)
    t = np.array([t1 * (1 + 2 * np.sum(e ** j[:k])) for k in range(n_events)])
    dt_de = np.array([2 * t1 * np.sum(j[:k] * e ** (j[:k] - 1)) for k in range(n_events)])
    return t, t / (2 * h0), dt_de


def test_models_come_from_the_registry():
    by_name = {m["name"]: m for m in saltation.models()}
    assert {"bouncing_ball", "thermostat", "terrain_ball"} <= set(by_name)
    ball = by_name["bouncing_ball"]
    assert ball["states"] == ["h", "v"]
    assert [p["name"] for p in ball["parameters"]] == ["h0", "v0", "e"]
    assert ball["config"]["g"]["default"] == pytest.approx(G)
    terrain = by_name["terrain_ball"]
    assert terrain["variants"]["key"] == "bumps" and {3, 24, 192} <= set(terrain["variants"]["values"])
    for bumps, P in ((3, 14), (24, 77), (192, 581)):  # the seed's parameter counts
        assert saltation.model_info("terrain_ball", {"bumps": bumps})["P"] == P
    assert set(saltation.options()) >= {"t_final", "dt", "event_capacity", "sensitivities", "probes"}


# A valid theta row for every built-in model (default config); a new model must be added here.
SAMPLE_ROWS = {
    "bouncing_ball": [1.0, 0.0, 0.8],
    "thermostat": [20.0, 10.0, 1.0, 30.0, 18.0, 22.0],  # T0, T_env, tau, Q, T_low, T_high
    "terrain_ball": [1.0, 0.5, 0.05, 0.8, 0.1],  # no bumps: flat ground
}


@pytest.mark.parametrize("model", [m["name"] for m in saltation.models()])
def test_every_registered_model_solves_from_python(model):
    assert model in SAMPLE_ROWS, f"add a theta row for {model}"
    info = saltation.model_info(model)
    r = saltation.solve(model, SAMPLE_ROWS[model], t_final=2.0, sensitivities=True)
    assert r.state_names == info["state_names"] and r.parameter_names == info["param_names"]
    assert r.qf.shape == (1, info["N"]) and r.dqf_dtheta.shape == (1, info["N"], info["P"])
    assert r.status[0] == 0 and r.n_events[0] > 0 and np.all(np.isfinite(r.dqf_dtheta))


# "auto" runs dopri5 on the CPU backend (named here all the same).
DOPRI5 = {"method": "dopri5", "rtol": 1e-11, "atol": 1e-11, "backend": "cpu"}


@pytest.mark.parametrize("stepping", [{"dt": 1e-3}, DOPRI5], ids=["rk4", "dopri5"])
def test_bouncing_ball_event_times_and_derivatives_match_the_closed_form(stepping):
    rows = np.array([[1.0, 0.0, 0.8], [2.0, 0.0, 0.5]])
    r = saltation.solve("bouncing_ball", rows, t_final=2.5, event_capacity=4, sensitivities=True, **stepping)
    assert r.status.dtype == np.int32 and r.status.shape == (2,)
    assert r.qf.shape == (2, 2) and r.event_times.shape == (2, 4) and r.event_states.shape == (2, 4, 2)
    assert r.dqf_dtheta.shape == (2, 2, 3) and r.events_dt_dtheta.shape == (2, 4, 3)
    assert r.events_dq_dtheta.shape == (2, 4, 2, 3)
    assert r.state_names == ["h", "v"] and r.parameter_names == ["h0", "v0", "e"]
    for i, (h0, _, e) in enumerate(rows):
        k = int(r.n_events[i])
        assert k >= 3
        t, dt_dh0, dt_de = dropped_ball(h0, e, k)
        np.testing.assert_allclose(r.event_times[i, :k], t, rtol=1e-9)
        np.testing.assert_allclose(r.events_dt_dtheta[i, :k, 0], dt_dh0, rtol=1e-7)
        np.testing.assert_allclose(r.events_dt_dtheta[i, :k, 2], dt_de, rtol=1e-7, atol=1e-12)
        np.testing.assert_allclose(r.event_states[i, :k, 0], 0.0, atol=1e-9)  # on the ground at impact


def test_absolute_tolerance_one_per_state():
    rows = np.array([[1.0, 0.0, 0.8]])
    per_state = saltation.solve("bouncing_ball", rows, t_final=1.0, **{**DOPRI5, "atol": [1e-11, 1e-11]})
    single = saltation.solve("bouncing_ball", rows, t_final=1.0, **DOPRI5)
    np.testing.assert_array_equal(per_state.qf, single.qf)  # equal entries are the one number
    assert per_state.provenance["options"]["atol"] == [1e-11, 1e-11]
    with pytest.raises(saltation.InvalidInput) as caught:
        saltation.solve("bouncing_ball", rows, t_final=1.0, **{**DOPRI5, "atol": [1e-11, 1e-11, 1e-11]})
    assert caught.value.parameter == "options.atol" and "2 states" in str(caught.value)


def test_arrays_follow_the_result_table_and_unreached_events_are_nan():
    r = saltation.solve("bouncing_ball", [1.0, 0.0, 0.8], t_final=1.0, event_capacity=5, sensitivities=True)
    assert set(r.arrays) == {"status", "t_end", "qf", "n_events", "events_t", "events_guard", "events_flags",
                             "events_q", "events_q_plus", "dqf_dtheta", "events_dt_dtheta", "events_dq_dtheta"}
    assert len(r) == 1 and r.provenance["backend"] == "cpu" and r.provenance["options"]["event_capacity"] == 5
    k = int(r.n_events[0])
    assert 0 < k < 5
    for name in ("events_t", "events_q", "events_q_plus", "events_dt_dtheta", "events_dq_dtheta"):
        assert np.all(np.isfinite(r.arrays[name][0, :k])), name
        assert np.all(np.isnan(r.arrays[name][0, k:])), name
    assert np.all(r.events_guard[0, k:] == -1)
    without = saltation.solve("bouncing_ball", [1.0, 0.0, 0.8], t_final=1.0, event_capacity=5)
    assert "dqf_dtheta" not in without.arrays
    with pytest.raises(AttributeError, match="no array 'dqf_dtheta'"):
        without.dqf_dtheta


def test_results_are_views_of_the_solver_storage():
    rows = np.array([[1.0, 0.0, 0.8], [2.0, 0.0, 0.5], [0.5, 1.0, 0.9]])
    r = saltation.solve("bouncing_ball", rows, t_final=1.0, event_capacity=3, sensitivities=True)
    n = len(rows)
    # SoA storage seen trajectory-first: strided views, no copy.
    assert not r.qf.flags.owndata and r.qf.strides == (8, 8 * n)
    assert r.events_q.strides == (8, 8 * n * 2, 8 * n)
    assert r.events_dq_dtheta.strides == (8, 8 * n * 2 * 3, 8 * n * 3, 8 * n)
    # The products read the same memory: a write through the view changes what they see.
    y = r.outputs()
    r.qf[1, 0] += 1.0
    assert r.outputs()[1, 0] == y[1, 0] + 1.0
    # The arrays outlive the Result object.
    qf = r.qf
    expected = qf.copy()
    del r
    np.testing.assert_array_equal(qf, expected)


def test_theta_layouts_give_the_same_result():
    rows = np.array([[1.0, 0.0, 0.8], [2.0, 0.5, 0.5], [0.5, 1.0, 0.9], [3.0, -1.0, 0.2]])
    reference = saltation.solve("bouncing_ball", rows, t_final=1.0)
    for theta in (np.asfortranarray(rows), rows.T.copy().T, rows.tolist(), np.repeat(rows, 2, axis=0)[::2]):
        other = saltation.solve("bouncing_ball", theta, t_final=1.0)
        np.testing.assert_array_equal(other.qf, reference.qf)
        np.testing.assert_array_equal(other.t_end, reference.t_end)


def test_products_agree_with_the_sensitivity_arrays(terrain):
    model, config, options, theta = terrain
    rows = np.array([theta, theta]) * np.array([1.0, 1.1] + [1.0] * 12)[None, :]
    rows[1, 0] = 1.2
    r = saltation.solve(model, rows, config=config, sensitivities=True, **options)
    n, N, C, P = 2, 4, options["event_capacity"], 14
    assert r.output_size == N + C * (1 + N)
    J = r.jacobian()
    assert J.shape == (n, r.output_size, P)
    np.testing.assert_array_equal(J[:, :N, :], r.dqf_dtheta)
    k = int(r.n_events[0])
    np.testing.assert_array_equal(J[0, N + (k - 1) * (1 + N), :], r.events_dt_dtheta[0, k - 1])
    assert k < C
    np.testing.assert_array_equal(J[0, N + k * (1 + N):, :], 0.0)  # unreached event slots
    rng = np.random.default_rng(1)
    v, w = rng.normal(size=(n, P)), rng.normal(size=(n, r.output_size))
    np.testing.assert_allclose(r.jvp(v), np.einsum("nrp,np->nr", J, v), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(r.vjp(w), np.einsum("nrp,nr->np", J, w), rtol=1e-13, atol=1e-13)
    value, gradient = r.landing(impact=1, coordinate=0, target=2.0)
    miss = r.event_states[:, 1, 0] - 2.0
    np.testing.assert_allclose(value, miss ** 2, rtol=1e-15)
    np.testing.assert_allclose(gradient, 2 * miss[:, None] * r.events_dq_dtheta[:, 1, 0, :], rtol=1e-15)


def test_sensitivities_match_central_differences(terrain):
    model, config, options, theta = terrain
    r = saltation.solve(model, theta, config=config, sensitivities=True, **options)
    k = int(r.n_events[0])
    assert k >= 2
    h = 1e-6
    for p in (0, 1, 3, 5, 9):  # vx0, vy0, e, a_1, a_2
        plus, minus = np.array(theta), np.array(theta)
        plus[p] += h
        minus[p] -= h
        rp = saltation.solve(model, plus, config=config, **options)
        rm = saltation.solve(model, minus, config=config, **options)
        assert rp.n_events[0] == rm.n_events[0] == k  # same event topology
        fd_t = (rp.event_times[0, :k] - rm.event_times[0, :k]) / (2 * h)
        fd_x = (rp.event_states[0, :k, 0] - rm.event_states[0, :k, 0]) / (2 * h)
        np.testing.assert_allclose(r.events_dt_dtheta[0, :k, p], fd_t, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(r.events_dq_dtheta[0, :k, 0, p], fd_x, rtol=1e-6, atol=1e-7)


def test_progress_reports_and_a_raising_callback_stops_the_run():
    rows = np.tile([1.0, 0.0, 0.8], (2000, 1))
    calls = []
    r = saltation.solve("bouncing_ball", rows, t_final=1.0, threads=1, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (2000, 2000) and len(calls) > 10
    assert all(t == 2000 for _, t in calls) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert np.all(r.status == 0)

    class Stop(Exception):
        pass

    def stop_early(done, total):
        if done >= 100:
            raise Stop(done)

    with pytest.raises(Stop):
        saltation.solve("bouncing_ball", rows, t_final=1.0, threads=1, progress=stop_early)
    # The stop request was cleared: the next solve runs whole.
    again = saltation.solve("bouncing_ball", rows, t_final=1.0, threads=1)
    np.testing.assert_array_equal(again.qf, r.qf)


def test_ctrl_c_stops_a_solve_at_the_next_progress_report():
    rows = np.tile([1.0, 0.0, 0.8], (200000, 1))  # about twenty seconds on one core
    # Ctrl-C as Python turns it into KeyboardInterrupt: a process that started with SIGINT ignored
    # (the test suite run as a background job of a shell without job control) keeps it ignored,
    # and the solve would run whole.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        start = time.perf_counter()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            saltation.solve("bouncing_ball", rows, t_final=3.0, threads=1)
        assert time.perf_counter() - start < 5.0
        timer.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    # The stop request was cleared: the next solve runs whole.
    assert np.all(saltation.solve("bouncing_ball", rows[:100], t_final=3.0).status == 0)


def test_the_gil_is_released_while_solving():
    rows = np.tile([1.0, 0.0, 0.8], (20000, 1))
    finished = threading.Event()
    worker = threading.Thread(target=lambda: (saltation.solve("bouncing_ball", rows, t_final=2.0, threads=1),
                                              finished.set()))
    worker.start()
    spins = 0
    while not finished.is_set():
        spins += 1
    worker.join()
    # Holding the GIL for the whole solve would leave this thread a handful of iterations.
    assert spins > 10000


@pytest.mark.parametrize("call, parameter, row", [
    (lambda: saltation.solve("bouncing_ball", [[1.0, 0.0, 0.5], [1.0, 0.0, 1.5]]), "e", 1),
    (lambda: saltation.solve("bouncing_ball", [[-1.0, 0.0, 0.5]]), "h0", 0),
    (lambda: saltation.solve("bouncing_ball", [[1.0, np.nan, 0.5]]), "v0", 0),
    (lambda: saltation.solve("bouncing_ball", [[1.0, 0.0]]), "theta", -1),
    (lambda: saltation.solve("bouncing_ball", np.zeros((0, 3))), "theta", -1),
    (lambda: saltation.solve("bouncing_ball", np.zeros((2, 2, 3))), "theta", -1),
    (lambda: saltation.solve("no_such_model", [[1.0]]), "model", -1),
    (lambda: saltation.solve("bouncing_ball", [[1.0, 0.0, 0.5]], config={"gravity": 3}), "config.gravity", -1),
    (lambda: saltation.solve("terrain_ball", [[1.0] * 14], config={"bumps": 5}), "config.bumps", -1),
    (lambda: saltation.solve("bouncing_ball", [[1.0, 0.0, 0.5]], dt=-1.0), "options.dt", -1),
    (lambda: saltation.solve("bouncing_ball", [[1.0, 0.0, 0.5]], dtt=1e-3), "options.dtt", -1),
    (lambda: saltation.solve("bouncing_ball", [[1.0, 0.0, 0.5]], event_capacity="many"), "options.event_capacity", -1),
    (lambda: saltation.solve("bouncing_ball", [[1.0, 0.0, 0.5]], t_final=float("inf")), "options.t_final", -1),
    (lambda: saltation.solve("bouncing_ball", [[1.0, 0.0, 0.5]], dt=float("nan")), "options.dt", -1),
    (lambda: saltation.solve("bouncing_ball", [[1.0, 0.0, 0.5]], t_final=0.0), "options.t_final", -1),
    (lambda: saltation.solve("bouncing_ball", [[1.0, 0.0, 0.5]], threads=10**6), "options.threads", -1),
    (lambda: saltation.solve("bouncing_ball", [[1.0, 0.0, 0.5 + 0.1j]]), "theta", -1),
    (lambda: saltation.solve("bouncing_ball", np.array([[1.0, 0.0, 0.5]], dtype=complex)), "theta", -1),
    (lambda: saltation.solve("bouncing_ball", [[1.0, 0.0, 0.5]], backend="gpu"), "backend", -1),
])
def test_bad_input_raises_invalid_input_naming_parameter_and_row(call, parameter, row):
    with pytest.raises(saltation.InvalidInput) as caught:
        call()
    assert caught.value.parameter == parameter and caught.value.row == row
    assert isinstance(caught.value, ValueError)
    assert parameter in str(caught.value)


def test_mark_invalid_rows_gives_status_invalid_input():
    r = saltation.solve("bouncing_ball", [[1.0, 0.0, 0.5], [1.0, 0.0, 1.5]], mark_invalid_rows=True,
                        sensitivities=True)
    assert saltation.status_names()[int(r.status[1])] == "invalid_input" and r.status[0] == 0
    assert np.all(np.isnan(r.dqf_dtheta[1])) and r.n_events[1] == 0


def test_cuda_without_a_device_is_a_cuda_error():
    if saltation.cuda_device_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(saltation.CudaError):
        saltation.solve("bouncing_ball", [[1.0, 0.0, 0.5]], backend="cuda")
