"""Models of your own from Python (saltation.Model, docs/models.md): a model file and the same
definition as a dict, compiled at run time, solved against the bouncing ball's closed form with
its sensitivities, configured by their constants, refused naming the JSON path of a mistake, run
in a sweep and differentiated through saltation.jax; and the terrain ball written as a definition
against the built-in one."""
import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import saltation
import saltation.jax as sj
from conftest import terrain_ball_definition

G = 9.81
BALL = {
    "name": "ball_file",
    "states": ["h", "v"],
    "parameters": [{"name": "h0", "domain": ">= 0"}, {"name": "v0"}, {"name": "e", "domain": "[0, 1]"}],
    "constants": {"g": G},
    "initial_state": {"h": "h0", "v": "v0"},
    "flow": {"h": "v", "v": "-g"},
    "guards": [{"name": "ground", "expression": "h", "direction": "falling", "reset": {"v": "-e * v"}}],
}
ROWS = np.array([[1.0, 0.0, 0.8], [2.0, 1.5, 0.5], [0.5, -2.0, 0.9]])
OPTIONS = {"t_final": 2.0, "dt": 1e-3, "event_capacity": 4}


def first_impact(h0, v0, g=G):
    """t1 = (v0 + sqrt(v0^2 + 2 g h0)) / g and its derivatives by h0 and v0."""
    root = math.sqrt(v0 * v0 + 2 * g * h0)
    return (v0 + root) / g, 1 / root, (1 + v0 / root) / g


@pytest.fixture
def ball_file(tmp_path):
    path = tmp_path / "ball.json"
    path.write_text(json.dumps(BALL))
    return path


def check_first_impacts(r, g=G):
    assert r.state_names == ["h", "v"] and r.parameter_names == ["h0", "v0", "e"]
    for i, (h0, v0, _) in enumerate(ROWS):
        t1, dt_dh0, dt_dv0 = first_impact(h0, v0, g)
        assert r.n_events[i] >= 1
        np.testing.assert_allclose(r.event_times[i, 0], t1, rtol=1e-9)
        np.testing.assert_allclose(r.events_dt_dtheta[i, 0, 0], dt_dh0, rtol=1e-6)
        np.testing.assert_allclose(r.events_dt_dtheta[i, 0, 1], dt_dv0, rtol=1e-6)
        np.testing.assert_allclose(r.event_states[i, 0, 0], 0.0, atol=1e-9)


def test_a_model_file_matches_the_closed_form(ball_file):
    model = saltation.Model.from_file(ball_file)
    assert model.name == "ball_file" and model.path == str(ball_file) and model.definition is None
    assert model.to_json() == {"file": str(ball_file)}
    r = saltation.solve(model, ROWS, backend="cpu", sensitivities=True, **OPTIONS)
    assert r.meta["model"] == "ball_file" and r.provenance["config"] == {"g": G}
    check_first_impacts(r)


def test_a_definition_dict_is_the_same_model(ball_file):
    definition = json.loads(json.dumps(BALL))
    model = saltation.Model(definition)
    definition["name"] = "changed later"  # the model keeps its own copy
    assert model.name == "ball_file" and model.path is None and model.definition == BALL
    r = saltation.solve(model, ROWS, backend="cpu", sensitivities=True, **OPTIONS)
    check_first_impacts(r)
    from_file = saltation.solve(saltation.Model.from_file(ball_file), ROWS, backend="cpu", sensitivities=True,
                                **OPTIONS)
    for name in ("qf", "events_t", "events_q", "dqf_dtheta", "events_dt_dtheta", "events_dq_dtheta"):
        np.testing.assert_array_equal(r.arrays[name], from_file.arrays[name])
    # The same forms as plain dicts ({"define": ...}, {"file": ...}) work too.
    as_dict = saltation.solve({"define": BALL}, ROWS, backend="cpu", **OPTIONS)
    np.testing.assert_array_equal(as_dict.event_times, r.event_times)


def test_model_info_and_config(ball_file):
    model = saltation.Model.from_file(ball_file)
    info = saltation.model_info(model)
    assert (info["name"], info["N"], info["P"], info["M"]) == ("ball_file", 2, 3, 1)
    assert info["state_names"] == ["h", "v"] and info["param_names"] == ["h0", "v0", "e"]
    assert info["param_domains"] == [">= 0", "finite", "[0, 1]"] and info["guard_names"] == ["ground"]
    assert info["config"] == {"g": G} and model.info({"g": 3.7})["config"] == {"g": 3.7}
    assert saltation.model_info("bouncing_ball")["guard_names"] == []
    r = saltation.solve(model, ROWS, config={"g": 3.7}, backend="cpu", sensitivities=True, **OPTIONS)
    assert r.provenance["config"] == {"g": 3.7}
    check_first_impacts(r, g=3.7)
    with pytest.raises(saltation.InvalidInput) as error:
        saltation.solve(model, ROWS, config={"G": 3.7}, backend="cpu", **OPTIONS)
    assert error.value.parameter == "config.G"


def test_a_bad_model_file_is_refused_naming_the_json_path(tmp_path):
    bad = json.loads(json.dumps(BALL))
    bad["guards"][0]["reset"]["v"] = "-e * vv"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(saltation.InvalidInput) as error:
        saltation.Model.from_file(path)
    assert error.value.parameter == "model.guards[0].reset.v"
    assert 'unknown name "vv"' in str(error.value) and str(path) in str(error.value)
    with pytest.raises(saltation.InvalidInput) as error:
        saltation.Model(bad)
    assert error.value.parameter == "model.define.guards[0].reset.v"
    with pytest.raises(saltation.IoError):
        saltation.Model.from_file(tmp_path / "missing.json")


def test_a_bare_definition_is_refused_pointing_to_model():
    for call in (lambda: saltation.solve(BALL, ROWS[0]), lambda: saltation.model_info(BALL),
                 lambda: saltation.sweep({"model": BALL, "samples": 1})):
        with pytest.raises(saltation.InvalidInput, match=r"saltation\.Model\(definition\)") as error:
            call()
        assert error.value.parameter == "model"
    with pytest.raises(saltation.InvalidInput):
        saltation.Model("bouncing_ball")  # a name is a built-in model: give it as a string


def test_a_compiler_that_cannot_run_is_a_compile_error(monkeypatch):
    # A definition of its own, never compiled: the missing compiler is met, not a cached library.
    definition = {**BALL, "name": "ball_without_compiler", "constants": {"g": 1.0}}
    model = saltation.Model(definition)
    monkeypatch.setenv("CXX", "/nonexistent/saltation-test-c++")
    with pytest.raises(saltation.CompileError, match="could not be run"):
        saltation.solve(model, ROWS, backend="cpu", **OPTIONS)


def test_a_sweep_with_a_model_file(ball_file, tmp_path, monkeypatch):
    study = {"model": "bouncing_ball", "config": {"g": G},
             "options": {"t_final": 3.0, "dt": 0.001, "event_capacity": 16},
             "parameters": {"h0": {"dist": "uniform", "low": 1.0, "high": 2.0}, "v0": 0.0, "e": {"design": 0.8}},
             "objectives": [{"name": "t2", "event_time": 1}], "samples": 2000, "seed": 7}
    builtin = saltation.sweep(study, backend="cpu")["objectives"]["t2"]
    monkeypatch.chdir(tmp_path)
    for model in (saltation.Model.from_file(ball_file), {"file": ball_file.name}, {"define": BALL}):
        t2 = saltation.sweep({**study, "model": model}, backend="cpu")["objectives"]["t2"]
        np.testing.assert_allclose(t2["mean"], builtin["mean"], rtol=1e-12)
        np.testing.assert_allclose(t2["gradient"]["e"]["mean"], builtin["gradient"]["e"]["mean"], rtol=1e-12)


def test_jax_grad_of_the_first_impact_is_the_sensitivity(ball_file):
    model = saltation.Model.from_file(ball_file)
    f = sj.solver(model, outputs=("event_times",), **OPTIONS)
    r = saltation.solve(model, ROWS, backend="cpu", sensitivities=True, **OPTIONS)
    first = jax.jit(jax.grad(lambda theta: f(theta)["event_times"][0]))
    for i, row in enumerate(ROWS):
        gradient = first(jnp.asarray(row))
        np.testing.assert_allclose(gradient, r.events_dt_dtheta[i, 0], rtol=1e-12, atol=1e-15)
        _, dt_dh0, dt_dv0 = first_impact(row[0], row[1])
        np.testing.assert_allclose(gradient[:2], [dt_dh0, dt_dv0], rtol=1e-6)
    with pytest.raises(saltation.InvalidInput, match="ball_file"):
        f(jnp.ones(4))


def test_the_terrain_ball_as_a_definition_is_the_built_in(terrain):
    name, config, options, theta = terrain
    rows = np.tile(np.array(theta), (3, 1))
    rows[:, 0] = [1.0, 1.1, 0.9]
    builtin = saltation.solve(name, rows, config=config, backend="cpu", sensitivities=True, **options)
    model = saltation.Model(terrain_ball_definition(config["bumps"]))
    ours = saltation.solve(model, rows, config={"x0": config["x0"], "y0": config["y0"]}, backend="cpu",
                           sensitivities=True, **options)
    assert ours.parameter_names == builtin.parameter_names and ours.state_names == builtin.state_names
    np.testing.assert_array_equal(ours.n_events, builtin.n_events)
    assert np.all(builtin.n_events >= 3)
    for array in ("qf", "events_t", "events_q", "events_q_plus", "dqf_dtheta", "events_dt_dtheta",
                  "events_dq_dtheta"):
        np.testing.assert_allclose(ours.arrays[array], builtin.arrays[array], rtol=1e-9, atol=1e-10, err_msg=array)
