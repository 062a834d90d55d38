"""saltation.sweep: a study from a dict gives the summary of docs/sweep.md, checked against the
bouncing ball's closed form, against itself under another chunking, and against `saltation sweep`."""
import json
import math
import os
import pathlib
import subprocess

import numpy as np
import pytest

import saltation

ROOT = pathlib.Path(__file__).resolve().parents[2]
G = 9.81


def ball_study(samples=4096):
    study = json.loads((ROOT / "examples/studies/ball_t2.json").read_text())
    study["samples"] = samples
    return study


def without_provenance(summary):
    return {key: value for key, value in summary.items() if key != "provenance"}


def test_summary_matches_the_closed_form():
    calls = []
    summary = saltation.sweep(ball_study(), progress=lambda done, total: calls.append((done, total)))
    assert summary["samples"] == 4096 and summary["provenance"]["backend"] == "cpu"
    assert calls and calls[-1] == (4096, 4096)
    t2 = summary["objectives"]["t2"]
    # t2 = t1 (1 + 2e), t1 = sqrt(2 h0 / g), h0 ~ U(1, 2): E[sqrt(h0)] = (2/3)(2^1.5 - 1).
    e = 0.8
    mean_sqrt_h0 = (2.0 / 3.0) * (2.0 ** 1.5 - 1.0)
    expected = (1 + 2 * e) * math.sqrt(2 / G) * mean_sqrt_h0
    assert abs(t2["mean"] - expected) < 4 * t2["std_error"]
    gradient = t2["gradient"]["e"]
    assert abs(gradient["mean"] - 2 * math.sqrt(2 / G) * mean_sqrt_h0) < 4 * gradient["std_error"] + 1e-9


def test_samples_and_seed_override_and_chunking_changes_nothing():
    study = ball_study(samples=100000)
    small = saltation.sweep(study, samples=3000, seed=11)
    assert small["samples"] == 3000 and small["provenance"]["seed"] == 11
    chunked = saltation.sweep(study, samples=3000, seed=11, memory_budget=64 * 1024)
    assert without_provenance(chunked) == without_provenance(small)  # bitwise: the same block tree
    other_seed = saltation.sweep(study, samples=3000, seed=12)
    assert other_seed["objectives"]["t2"]["mean"] != small["objectives"]["t2"]["mean"]


def test_the_same_summary_as_the_command(tmp_path):
    command = ROOT / os.environ.get("BUILD_DIR", "build") / "saltation"
    if not command.exists():
        pytest.skip(f"{command} is not built")
    study = ball_study(samples=2000)
    (tmp_path / "study.json").write_text(json.dumps(study))
    subprocess.run([str(command), "sweep", str(tmp_path / "study.json"), "--out", str(tmp_path / "run"),
                    "--backend", "cpu"], check=True, capture_output=True)
    from_command = json.loads((tmp_path / "run" / "summary.json").read_text())
    # Two binaries (the command and the module) built apart: equal up to the last bits of a sum.
    assert_same(without_provenance(saltation.sweep(study, backend="cpu")), without_provenance(from_command))


def assert_same(a, b, path="summary"):
    assert type(a) is type(b) or {type(a), type(b)} == {int, float}, path
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for key in a:
            assert_same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15), path
    else:
        assert a == b, path


@pytest.mark.parametrize("change, parameter", [
    (lambda s: s.update(samples=0), "samples"),
    (lambda s: s.update(colour="red"), "colour"),
    (lambda s: s["parameters"].update(h0={"dist": "uniform", "low": 2.0, "high": 1.0}), "parameters.h0"),
    (lambda s: s.update(model="no_such_model"), "model"),
])
def test_bad_studies_name_the_key(change, parameter):
    study = ball_study()
    change(study)
    with pytest.raises(saltation.InvalidInput) as caught:
        saltation.sweep(study)
    assert caught.value.parameter.startswith(parameter)


@pytest.mark.parametrize("overrides, parameter", [
    (dict(samples=0), "samples"),
    (dict(samples=-5), "samples"),
    (dict(samples=10**19), "samples"),
    (dict(samples=100.0), "samples"),
    (dict(samples=True), "samples"),
    (dict(seed=-1), "seed"),
    (dict(seed=2**64 - 1), "seed"),
    (dict(seed="7"), "seed"),
    (dict(memory_budget=0), "memory_budget"),
    (dict(memory_budget=0.5), "memory_budget"),
    (dict(memory_budget=float("inf")), "memory_budget"),
    (dict(memory_budget="1e30"), "memory_budget"),
])
def test_bad_overrides_are_refused_naming_them(overrides, parameter):
    """Never replaced by the study's own value, clamped or truncated (issue 40)."""
    with pytest.raises(saltation.InvalidInput) as caught:
        saltation.sweep(ball_study(), **overrides)
    assert caught.value.parameter == parameter, str(caught.value)
    assert parameter in str(caught.value)


def test_overrides_in_range_run_as_given():
    summary = saltation.sweep(ball_study(), samples=np.int64(2000), seed=0, memory_budget="64K")
    assert summary["samples"] == 2000 and summary["seed"] == 0
