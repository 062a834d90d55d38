"""Shared setup of the Python tests: float64 in JAX (the solver's precision) and small runs."""
import jax
import pytest

jax.config.update("jax_enable_x64", True)


@pytest.fixture
def terrain():
    """The terrain ball over three bumps, launched from (0, 1): (model, config, options, theta row);
    theta = [vx0, vy0, c, e, mu, (a, b, w) x 3]; three impacts within t_final = 3."""
    config = {"bumps": 3, "x0": 0.0, "y0": 1.0}
    options = {"t_final": 3.0, "dt": 1e-3, "event_capacity": 8}
    theta = [1.0, 0.5, 0.05, 0.8, 0.1, 0.3, 1.0, 0.3, 0.2, 2.0, 0.4, 0.25, 3.2, 0.3]
    return "terrain_ball", config, options, theta
