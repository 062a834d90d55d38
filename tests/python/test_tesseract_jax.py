"""The served Tesseract inside JAX (tesseract_jax.apply_tesseract): jax.jvp, jax.jacrev and
jax.grad through it agree with the Tesseract's own /jacobian, and a JAX objective composes with it
under jax.jit."""

import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from tesseract_core import Tesseract
from tesseract_jax import apply_tesseract

jax.config.update("jax_enable_x64", True)

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tesseract"))
from local_server import served  # noqa: E402

EXAMPLE = json.loads((REPO / "tesseract" / "example_inputs.json").read_text())["inputs"]
DIFFERENTIABLE = ("launch_velocity", "drag", "restitution", "friction", "bump_heights", "bump_centers", "bump_widths")


@pytest.fixture(scope="module")
def solver():
    with served() as url:
        yield Tesseract.from_url(url, timeout=(5, 120))


def example_inputs():
    return {key: jnp.asarray(value) if key in DIFFERENTIABLE else value for key, value in EXAMPLE.items()}


def test_jvp_jacrev_and_grad_agree_with_the_jacobian_endpoint(solver):
    inputs = example_inputs()
    blocks = solver.jacobian(inputs, jac_inputs=["restitution", "launch_velocity"],
                             jac_outputs=["impact_points", "qf"])

    def impact_points(e):
        return apply_tesseract(solver, {**inputs, "restitution": e})["impact_points"]

    _, tangent = jax.jvp(impact_points, (inputs["restitution"],), (jnp.float64(1.0),))
    np.testing.assert_allclose(tangent, blocks["impact_points"]["restitution"], rtol=1e-13, atol=1e-15)

    def final_states(launch):
        return apply_tesseract(solver, {**inputs, "launch_velocity": launch})["qf"]

    jacobian = jax.jacrev(final_states)(inputs["launch_velocity"])
    assert jacobian.shape == (2, 4, 2, 2)
    np.testing.assert_allclose(jacobian, blocks["qf"]["launch_velocity"], rtol=1e-13, atol=1e-15)


def test_a_jax_objective_composes_under_jit(solver):
    inputs = example_inputs()
    target = 2.0

    @jax.jit
    def miss(launch):
        points = apply_tesseract(solver, {**inputs, "launch_velocity": launch})["impact_points"]
        return jnp.sum((points[:, 1, 0] - target) ** 2)

    launch = inputs["launch_velocity"]
    value, gradient = jax.value_and_grad(miss)(launch)
    blocks = solver.jacobian(inputs, jac_inputs=["launch_velocity"], jac_outputs=["impact_points"])
    points = solver.apply(inputs)["impact_points"]
    d_second_x = np.asarray(blocks["impact_points"]["launch_velocity"])[:, 1, 0]  # (launch, launch, 2)
    expected = np.einsum("i,ijk->jk", 2 * (points[:, 1, 0] - target), d_second_x)
    assert value == pytest.approx(np.sum((points[:, 1, 0] - target) ** 2), rel=1e-14)
    np.testing.assert_allclose(gradient, expected, rtol=1e-12)
