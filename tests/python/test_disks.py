"""saltation.disks and saltation.fit_stiffness: the disk engine's rollouts and seed 002's stiffness
inference from Python, checked against closed forms and a recovered stiffness."""
import json
import math
import pathlib

import numpy as np
import pytest

import saltation

ROOT = pathlib.Path(__file__).resolve().parents[2]


def seed_request():
    return json.loads((ROOT / "examples/disks/seed_rollout.json").read_text())


def test_head_on_rollout_conserves_momentum_and_lasts_the_contact_time():
    request = seed_request()
    out = saltation.disks(request)
    n_systems, n_frames, n_disks = 2, request["n_frames"], 2
    assert out["positions"].shape == (n_systems, n_frames, n_disks, 2)
    assert out["d_positions"].shape == (n_systems, n_frames, 2, n_disks, 2)
    np.testing.assert_array_equal(out["status"], 0)
    assert out["meta"]["provenance"]["backend"] == "cpu"
    # Equal masses, head-on: total momentum stays zero.
    np.testing.assert_allclose(out["velocities"].sum(axis=2), 0.0, atol=1e-12)
    # In contact while the gap is negative: t_c = pi sqrt(m_eff / k), m_eff = 1/2.
    k = math.exp(request["log_stiffness"])
    frame_dt = request["dt"] * request["stride"]
    gap = out["positions"][:, :, 1, 0] - out["positions"][:, :, 0, 0] - 1.0
    contact_frames = (gap < 0).sum(axis=1)
    assert np.all(np.abs(contact_frames * frame_dt - math.pi * math.sqrt(0.5 / k)) <= 2 * frame_dt)


def test_fit_recovers_the_stiffness_of_its_observations():
    request = seed_request()
    observed = saltation.disks(request)["positions"]
    fit = dict(request, observed=observed.tolist(), log_stiffness=math.log(20.0))
    fit.pop("tangents")
    out = saltation.fit_stiffness(fit)
    np.testing.assert_allclose(out["log_stiffness"], request["log_stiffness"], rtol=1e-6)
    assert out["meta"]["outcome_names"] and np.all(out["outcome"] == 1)  # converged


def test_bad_requests_name_the_key():
    with pytest.raises(saltation.InvalidInput) as caught:
        saltation.disks(dict(seed_request(), colour="red"))
    assert caught.value.parameter == "colour"
    with pytest.raises(saltation.InvalidInput) as caught:
        saltation.fit_stiffness(seed_request())  # no observations
    assert "observed" in caught.value.parameter
