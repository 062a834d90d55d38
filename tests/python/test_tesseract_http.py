"""The Tesseract over HTTP: a `tesseract-runtime serve` on a free loopback port, started and
stopped by this module, answering /apply, the derivative endpoints and /abstract_eval, and
refusing bad input with 422 naming the input while staying up."""

import base64
import copy
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import requests
import saltation

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tesseract"))
from local_server import served  # noqa: E402
from conftest import terrain_ball_definition  # noqa: E402

PAYLOAD = json.loads((REPO / "tesseract" / "example_inputs.json").read_text())
TIMEOUT = 120  # seconds for one request


@pytest.fixture(scope="module")
def url():
    with served() as url:
        yield url


def post(url, endpoint, body, accept=None):
    headers = {"Accept": accept} if accept else {}
    return requests.post(f"{url}/{endpoint}", json=body, headers=headers, timeout=TIMEOUT)


def decode(encoded):
    """An array as the runtime encodes it (json or base64 buffer)."""
    data = encoded["data"]
    if data["encoding"] == "base64":
        flat = np.frombuffer(base64.b64decode(data["buffer"]), dtype=encoded["dtype"])
        return flat.reshape(encoded["shape"])
    return np.asarray(data["buffer"], dtype=encoded["dtype"]).reshape(encoded["shape"])


def encode_base64(array):
    array = np.ascontiguousarray(array, dtype=np.float64)
    return {"object_type": "array", "shape": list(array.shape), "dtype": "float64",
            "data": {"buffer": base64.b64encode(array.tobytes()).decode(), "encoding": "base64"}}


def inputs(**changes):
    body = copy.deepcopy(PAYLOAD)
    body["inputs"].update(changes)
    return body


def theta_rows(x):
    """The example's launches as the solver's theta rows (docs/tesseract.md's layout)."""
    bumps = np.stack([x["bump_heights"], x["bump_centers"], x["bump_widths"]], axis=1).ravel()
    shared = [x["drag"], x["restitution"], x["friction"], *bumps]
    return np.array([[*launch, *shared] for launch in x["launch_velocity"]])


def solve_in_process(x, sensitivities=False):
    return saltation.solve("terrain_ball", theta_rows(x), config={"bumps": 3, "x0": x["x0"], "y0": x["y0"]},
                           backend="cpu", sensitivities=sensitivities, t_final=x["t_final"], dt=x["dt"],
                           event_capacity=x["event_capacity"])


def apply_outputs(url, body):
    response = post(url, "apply", body)
    assert response.status_code == 200, response.text
    return {key: decode(value) for key, value in response.json().items()}


def test_health(url):
    assert requests.get(f"{url}/health", timeout=TIMEOUT).json() == {"status": "ok"}


def test_apply_is_the_library_solve(url):
    out = apply_outputs(url, PAYLOAD)
    r = solve_in_process(PAYLOAD["inputs"])
    assert out["qf"].shape == (2, 4) and out["impact_points"].shape == (2, 3, 2) and out["impact_times"].shape == (2, 3)
    np.testing.assert_array_equal(out["status"], r.status)
    np.testing.assert_array_equal(out["status"], [1, 1])  # the capacity (3) fills every impact slot
    np.testing.assert_array_equal(out["n_impacts"], r.n_events)
    np.testing.assert_array_equal(out["qf"], r.qf)
    np.testing.assert_array_equal(out["impact_times"], r.event_times)
    np.testing.assert_array_equal(out["impact_points"], r.event_states[:, :, :2])
    np.testing.assert_array_equal(out["t_end"], r.t_end)


def test_apply_with_adaptive_steps_is_the_library_solve(url):
    body = inputs(method="dopri5", rtol=1e-10, atol=1e-10, backend="cpu")
    out = apply_outputs(url, body)
    x = body["inputs"]
    r = saltation.solve("terrain_ball", theta_rows(x), config={"bumps": 3, "x0": x["x0"], "y0": x["y0"]},
                        backend="cpu", t_final=x["t_final"], event_capacity=x["event_capacity"], method="dopri5",
                        rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(out["impact_times"], r.event_times)
    np.testing.assert_array_equal(out["qf"], r.qf)
    # The same impacts as RK4's to the tolerances' order.
    np.testing.assert_allclose(out["impact_times"], apply_outputs(url, PAYLOAD)["impact_times"], atol=1e-8)


def test_base64_round_trip_matches_json(url):
    x = PAYLOAD["inputs"]
    body = inputs(launch_velocity=encode_base64(x["launch_velocity"]), bump_widths=encode_base64(x["bump_widths"]))
    response = post(url, "apply", body, accept="application/json+base64")
    assert response.status_code == 200, response.text
    assert response.json()["impact_points"]["data"]["encoding"] == "base64"
    out = {key: decode(value) for key, value in response.json().items()}
    reference = apply_outputs(url, PAYLOAD)
    for key in reference:
        np.testing.assert_array_equal(out[key], reference[key])


DIFFERENTIABLE_INPUTS = ["launch_velocity", "drag", "restitution", "friction", "bump_heights", "bump_centers",
                         "bump_widths"]
DIFFERENTIABLE_OUTPUTS = ["qf", "impact_times", "impact_points"]


def test_vjp_jvp_and_jacobian_are_one_linear_map(url):
    """<u, J v> from /jacobian_vector_product equals <J^T u, v> from /vector_jacobian_product and
    u^T J v from /jacobian, for random u and v over every differentiable input and output."""
    rng = np.random.default_rng(7)
    x = PAYLOAD["inputs"]
    shapes_in = {key: np.shape(x[key]) for key in DIFFERENTIABLE_INPUTS}
    shapes_out = {"qf": (2, 4), "impact_times": (2, 3), "impact_points": (2, 3, 2)}
    v = {key: rng.standard_normal(shape) for key, shape in shapes_in.items()}
    u = {key: rng.standard_normal(shape) for key, shape in shapes_out.items()}
    listify = lambda d: {key: value.tolist() for key, value in d.items()}  # noqa: E731

    jvp = post(url, "jacobian_vector_product", {**PAYLOAD, "jvp_inputs": DIFFERENTIABLE_INPUTS,
                                                "jvp_outputs": DIFFERENTIABLE_OUTPUTS, "tangent_vector": listify(v)})
    vjp = post(url, "vector_jacobian_product", {**PAYLOAD, "vjp_inputs": DIFFERENTIABLE_INPUTS,
                                                "vjp_outputs": DIFFERENTIABLE_OUTPUTS, "cotangent_vector": listify(u)})
    jac = post(url, "jacobian", {**PAYLOAD, "jac_inputs": DIFFERENTIABLE_INPUTS, "jac_outputs": DIFFERENTIABLE_OUTPUTS})
    for response in (jvp, vjp, jac):
        assert response.status_code == 200, response.text
    jv = {key: decode(value) for key, value in jvp.json().items()}
    ju = {key: decode(value) for key, value in vjp.json().items()}
    blocks = jac.json()

    u_jv = sum(np.sum(u[key] * jv[key]) for key in shapes_out)
    ju_v = sum(np.sum(ju[key] * v[key]) for key in shapes_in)
    u_j_v = 0.0
    for o in shapes_out:
        for i in shapes_in:
            block = decode(blocks[o][i])
            assert block.shape == (*shapes_out[o], *shapes_in[i])
            u_j_v += np.einsum(u[o], list(range(u[o].ndim)), block, list(range(block.ndim)),
                               v[i], list(range(u[o].ndim, block.ndim)), [])
    assert u_jv == pytest.approx(ju_v, rel=1e-12)
    assert u_j_v == pytest.approx(ju_v, rel=1e-12)
    # A launch moves only its own trajectory.
    launch_block = decode(blocks["qf"]["launch_velocity"])
    assert np.all(launch_block[0, :, 1, :] == 0) and np.all(launch_block[1, :, 0, :] == 0)


def test_vjp_matches_central_differences_of_apply(url):
    """d (sum of impact x) / d restitution and / d bump_widths[0] against central differences
    of /apply itself (no event count changes at this step)."""
    x = PAYLOAD["inputs"]
    cotangent = np.zeros((2, 3, 2))
    cotangent[:, :, 0] = 1.0
    response = post(url, "vector_jacobian_product", {
        **PAYLOAD, "vjp_inputs": ["restitution", "bump_widths"], "vjp_outputs": ["impact_points"],
        "cotangent_vector": {"impact_points": cotangent.tolist()}})
    assert response.status_code == 200, response.text
    gradient = {key: decode(value) for key, value in response.json().items()}

    def impact_x_sum(**changes):
        return apply_outputs(url, inputs(**changes))["impact_points"][:, :, 0].sum()

    eps = 1e-6
    e = x["restitution"]
    fd_e = (impact_x_sum(restitution=e + eps) - impact_x_sum(restitution=e - eps)) / (2 * eps)
    assert gradient["restitution"] == pytest.approx(fd_e, rel=1e-6)
    widths = np.asarray(x["bump_widths"])
    step = np.array([eps, 0.0, 0.0])
    fd_w = (impact_x_sum(bump_widths=(widths + step).tolist())
            - impact_x_sum(bump_widths=(widths - step).tolist())) / (2 * eps)
    assert gradient["bump_widths"][0] == pytest.approx(fd_w, rel=1e-6)
    assert gradient["bump_widths"].shape == (3,)


def test_unreached_impact_slots_are_nan_with_zero_derivative(url):
    """A capacity beyond the impacts made: those slots are NaN, and a cotangent on them (even
    NaN) leaves the product finite and equal to the one without it."""
    body = inputs(event_capacity=12, t_final=1.0)
    out = apply_outputs(url, body)
    made = out["n_impacts"]
    assert np.all(out["status"] == 0) and np.all(made < 12)
    for row, count in enumerate(made):
        assert np.all(np.isfinite(out["impact_points"][row, :count]))
        assert np.all(np.isnan(out["impact_points"][row, count:]))
        assert np.all(np.isnan(out["impact_times"][row, count:]))

    def vjp(cotangent):
        response = post(url, "vector_jacobian_product", {
            **body, "vjp_inputs": ["restitution", "launch_velocity"], "vjp_outputs": ["impact_times"],
            "cotangent_vector": {"impact_times": encode_base64(cotangent)}})
        assert response.status_code == 200, response.text
        return {key: decode(value) for key, value in response.json().items()}

    reached = np.where(np.arange(12)[None, :] < made[:, None], 1.0, 0.0)
    everywhere = vjp(np.where(reached == 1.0, 1.0, np.nan))
    only_reached = vjp(reached)
    for key in only_reached:
        assert np.all(np.isfinite(everywhere[key]))
        np.testing.assert_array_equal(everywhere[key], only_reached[key])


def test_abstract_eval_gives_output_shapes(url):
    body = {"inputs": {**PAYLOAD["inputs"],
                       "launch_velocity": {"shape": [5, 2], "dtype": "float64"},
                       "drag": {"shape": [], "dtype": "float64"},
                       "restitution": {"shape": [], "dtype": "float64"},
                       "friction": {"shape": [], "dtype": "float64"},
                       "bump_heights": {"shape": [3], "dtype": "float64"},
                       "bump_centers": {"shape": [3], "dtype": "float64"},
                       "bump_widths": {"shape": [3], "dtype": "float64"},
                       "event_capacity": 7}}
    response = post(url, "abstract_eval", body)
    assert response.status_code == 200, response.text
    shapes = {key: tuple(value["shape"]) for key, value in response.json().items()}
    assert shapes == {"qf": (5, 4), "impact_times": (5, 7), "impact_points": (5, 7, 2), "status": (5,),
                      "n_impacts": (5,), "t_end": (5,)}


BAD_INPUTS = [
    # (changes to the example's inputs, the location the 422 names, a word of its message)
    ({"restitution": 1.5}, ["inputs", "restitution"], "[0, 1]"),
    ({"friction": -0.1}, ["inputs", "friction"], "[0, 1]"),
    ({"drag": -1.0}, ["inputs", "drag"], ">= 0"),
    ({"bump_widths": [0.3, -0.25, 0.4]}, ["inputs", "bump_widths", 1], "> 0"),
    ({"launch_velocity": [[1.5, 0.5], [0.9, 1.0], [1.0]]}, ["inputs", "launch_velocity"], ""),
    ({"launch_velocity": encode_base64(np.zeros((0, 2)))}, ["inputs", "launch_velocity"], "at least one"),
    ({"bump_heights": [0.1, 0.15]}, ["inputs"], "one entry per bump"),
    ({"bump_heights": [0.1, 0.15], "bump_centers": [0.5, 1.5], "bump_widths": [0.3, 0.25]},
     ["inputs", "bump_heights"], "bumps"),
    ({"y0": 0.0}, ["inputs", "y0"], "past guard"),
    ({"dt": 0.0}, ["inputs", "dt"], "dt"),
    ({"t_final": 1e9}, ["inputs", "dt"], "max_steps"),
    ({"event_capacity": 0}, ["inputs", "event_capacity"], "greater than or equal to 1"),
    ({"method": "tsit5"}, ["inputs", "method"], ""),
    ({"method": "dopri5", "rtol": 0.0, "backend": "cpu"}, ["inputs", "rtol"], "rtol"),
    ({"backend": "gpu"}, ["inputs", "backend"], ""),
    ({"gravity": "fast"}, ["inputs", "gravity"], ""),
]


@pytest.mark.parametrize("changes, location, message", BAD_INPUTS,
                         ids=[next(iter(case[0])) + "-" + str(i) for i, case in enumerate(BAD_INPUTS)])
def test_bad_input_is_422_naming_the_input(url, changes, location, message):
    for endpoint, extra in (("apply", {}),
                            ("vector_jacobian_product", {"vjp_inputs": ["drag"], "vjp_outputs": ["qf"],
                                                         "cotangent_vector": {"qf": np.ones((2, 4)).tolist()}})):
        if endpoint != "apply" and "launch_velocity" in changes:
            continue  # the cotangent's shape is the example's
        response = post(url, endpoint, {**inputs(**changes), **extra})
        assert response.status_code == 422, (endpoint, response.text)
        errors = response.json()["detail"]
        assert any(error["loc"][1:] == location and message in error["msg"] for error in errors), errors
    assert requests.get(f"{url}/health", timeout=TIMEOUT).status_code == 200


@pytest.mark.skipif(saltation.cuda_device_available(), reason="a CUDA device is present here")
def test_cuda_without_a_device_is_422_naming_the_backend(url):
    response = post(url, "apply", inputs(backend="cuda"))
    assert response.status_code == 422, response.text
    [error] = response.json()["detail"]
    assert error["loc"] == ["body", "inputs", "backend"] and "cuda" in error["msg"]


def test_cotangent_of_the_wrong_shape_is_422_naming_it(url):
    response = post(url, "vector_jacobian_product", {
        **PAYLOAD, "vjp_inputs": ["drag"], "vjp_outputs": ["impact_points"],
        "cotangent_vector": {"impact_points": np.ones((5, 3, 2)).tolist()}})
    assert response.status_code == 422, response.text
    [error] = response.json()["detail"]
    assert error["loc"] == ["body", "cotangent_vector", "impact_points"] and "(2, 3, 2)" in error["msg"]


def test_non_finite_launch_over_base64_is_422_naming_its_row(url):
    launches = np.array([[1.5, 0.5], [0.9, np.nan]])
    response = post(url, "apply", inputs(launch_velocity=encode_base64(launches)))
    assert response.status_code == 422, response.text
    [error] = response.json()["detail"]
    assert error["loc"] == ["body", "inputs", "launch_velocity", 1, 1]
    assert "vy0 (row 1)" in error["msg"]


def test_oversized_and_malformed_requests_are_refused_and_the_server_stays_up(url):
    too_many = inputs(launch_velocity=encode_base64(np.ones((3_000_000, 2))), event_capacity=16)
    response = post(url, "apply", too_many)
    assert response.status_code == 422 and "split the batch" in response.text
    dense = post(url, "jacobian", {**inputs(launch_velocity=encode_base64(np.ones((6000, 2)))),
                                   "jac_inputs": ["launch_velocity"], "jac_outputs": ["qf"]})
    assert dense.status_code == 422 and "jacobian_vector_product" in dense.text
    assert dense.json()["detail"][0]["loc"] == ["body", "jac_inputs"]
    response = requests.post(f"{url}/apply", data=b'{"inputs": {', headers={"Content-Type": "application/json"},
                             timeout=TIMEOUT)
    assert response.status_code == 422
    response = post(url, "apply", {"inputs": PAYLOAD["inputs"], "unexpected": 1})
    assert response.status_code == 422
    assert apply_outputs(url, PAYLOAD)["status"].tolist() == [1, 1]


# ---- The input `model`: the built-in terrain ball by name, or a model definition with its interface.

@pytest.fixture(scope="module")
def definition():
    """The terrain ball over the example's three bumps as a model definition, compiled here first
    (into the session's cache, which the server shares) so that no request waits for the compiler."""
    d = terrain_ball_definition(len(PAYLOAD["inputs"]["bump_heights"]))
    x = PAYLOAD["inputs"]
    saltation.solve(saltation.Model(d), theta_rows(x), config={"x0": x["x0"], "y0": x["y0"]}, backend="cpu",
                    t_final=0.01)
    return d


def test_the_terrain_ball_by_name_is_the_default(url):
    reference = apply_outputs(url, PAYLOAD)
    named = apply_outputs(url, inputs(model="terrain_ball"))
    for key in reference:
        np.testing.assert_array_equal(named[key], reference[key])


def test_a_definition_with_the_interface_runs_as_the_built_in(url, definition):
    body = inputs(model=definition, backend="cpu")
    ours, builtin = apply_outputs(url, body), apply_outputs(url, inputs(backend="cpu"))
    np.testing.assert_array_equal(ours["status"], builtin["status"])
    np.testing.assert_array_equal(ours["n_impacts"], builtin["n_impacts"])
    for key in ("qf", "impact_times", "impact_points", "t_end"):
        np.testing.assert_allclose(ours[key], builtin[key], rtol=1e-9, atol=1e-10, err_msg=key)
    # Derivatives too: the vector-Jacobian product over every differentiable input.
    cotangent = {"qf": np.ones((2, 4)).tolist(), "impact_times": np.ones((2, 3)).tolist(),
                 "impact_points": np.ones((2, 3, 2)).tolist()}
    extra = {"vjp_inputs": DIFFERENTIABLE_INPUTS, "vjp_outputs": DIFFERENTIABLE_OUTPUTS,
             "cotangent_vector": cotangent}
    responses = [post(url, "vector_jacobian_product", {**b, **extra}) for b in (body, inputs(backend="cpu"))]
    for response in responses:
        assert response.status_code == 200, response.text
    ours, builtin = ({key: decode(value) for key, value in r.json().items()} for r in responses)
    for key in DIFFERENTIABLE_INPUTS:
        np.testing.assert_allclose(ours[key], builtin[key], rtol=1e-9, atol=1e-10, err_msg=key)


def bouncing_ball_definition():
    return {"name": "ball", "states": ["h", "v"], "parameters": [{"name": "h0"}, {"name": "v0"}, {"name": "e"}],
            "constants": {"g": 9.81}, "initial_state": {"h": "h0", "v": "v0"}, "flow": {"h": "v", "v": "-g"},
            "guards": [{"expression": "h", "reset": {"v": "-e * v"}}]}


def misnamed_constant():
    d = terrain_ball_definition(3)
    d["constants"] = {"x0": 0.0, "y0": 1.0, "gravity": 9.81}
    d["flow"]["vy"] = "-gravity - c * vy"
    return d


def with_typo():
    d = terrain_ball_definition(3)
    d["guards"][0]["reset"]["vx"] = "-e * vxx"
    return d


BAD_MODELS = [
    # (the model input, the location the 422 names, a word of its message)
    (bouncing_ball_definition(), ["inputs", "model", "states"], "x, y, vx, vy"),
    (terrain_ball_definition(2), ["inputs", "model", "parameters"], "with 3 bumps"),
    (misnamed_constant(), ["inputs", "model", "constants"], "g, x0, y0"),
    (with_typo(), ["inputs", "model", "guards", 0, "reset", "vx"], 'unknown name "vxx"'),
    ({"file": "/etc/passwd"}, ["inputs", "model"], "reads no files"),
    ({"define": terrain_ball_definition(3)}, ["inputs", "model"], "reads no files"),
    ("bouncing_ball", ["inputs", "model"], "terrain_ball"),
]


@pytest.mark.parametrize("model, location, message", BAD_MODELS,
                         ids=["other-states", "other-bumps", "other-constants", "typo", "file", "define", "name"])
def test_a_model_without_the_interface_is_422(url, model, location, message):
    response = post(url, "apply", inputs(model=model))
    assert response.status_code == 422, response.text
    [error] = response.json()["detail"]
    assert error["loc"] == ["body", *location] and message in error["msg"], error
    assert requests.get(f"{url}/health", timeout=TIMEOUT).status_code == 200
