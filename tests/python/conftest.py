"""Shared setup of the Python tests: float64 in JAX (the solver's precision), small runs, and a
cache of compiled model files of the session's own."""
import os

import jax
import pytest

jax.config.update("jax_enable_x64", True)


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory):
    """Model files (saltation.Model) compile into a temporary folder, never the user's cache; the
    Tesseract servers the tests start inherit it. Within the session each model compiles once."""
    previous = os.environ.get("SALTATION_CACHE_DIR")
    folder = tmp_path_factory.mktemp("saltation-cache")
    os.environ["SALTATION_CACHE_DIR"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("SALTATION_CACHE_DIR", None)
    else:
        os.environ["SALTATION_CACHE_DIR"] = previous


@pytest.fixture
def terrain():
    """The terrain ball over three bumps, launched from (0, 1): (model, config, options, theta row);
    theta = [vx0, vy0, c, e, mu, (a, b, w) x 3]; three impacts within t_final = 3."""
    config = {"bumps": 3, "x0": 0.0, "y0": 1.0}
    options = {"t_final": 3.0, "dt": 1e-3, "event_capacity": 8}
    theta = [1.0, 0.5, 0.05, 0.8, 0.1, 0.3, 1.0, 0.3, 0.2, 2.0, 0.4, 0.25, 3.2, 0.3]
    return "terrain_ball", config, options, theta


def terrain_ball_definition(K):
    """The built-in terrain ball over K bumps written as a model definition (docs/models.md), the
    way include/saltation/models/terrain_ball.hpp defines it: q = (x, y, vx, vy), drag c, the
    terrain h(x) = sum_k a_k exp(-u_k^2 / 2) with u_k = (x - b_k) / w_k (terrain_ball/bumps.hpp),
    the guard y - h(x) (falling), and at impact v+ = -e (v.n) n + (1 - mu) (v.t) t in the frame of
    the slope h'(x) = -sum_k a_k exp(-u_k^2 / 2) u_k / w_k (terrain_ball/partials.hpp: with
    r = 1 / sqrt(1 + h'^2), n = (-h' r, r), t = (r, h' r)). theta = [vx0, vy0, c, e, mu,
    a_1, b_1, w_1, ...]; constants x0, y0, g. (The built-in leaves out bumps farther than 8.85
    widths, where they add under 1e-17 of their height; the definition sums every bump.)"""
    u = [f"((x - b_{k}) / w_{k})" for k in range(1, K + 1)]
    bump = [f"a_{k} * exp(-0.5 * {u[k - 1]} * {u[k - 1]})" for k in range(1, K + 1)]
    h = " + ".join(bump) if K else "0"
    dh = "(" + " + ".join(f"{b} * {u[k]} / w_{k + 1}" for k, b in enumerate(bump)) + ")" if K else "0"
    dh = f"(-{dh})"
    r = f"(1 / sqrt(1 + {dh} * {dh}))"
    nx, ny, tx, ty = f"(-{dh} * {r})", r, r, f"({dh} * {r})"
    vn, vt = f"(vx * {nx} + vy * {ny})", f"(vx * {tx} + vy * {ty})"
    an, at = f"(-e * {vn})", f"((1 - mu) * {vt})"
    parameters = [{"name": "vx0"}, {"name": "vy0"}, {"name": "c", "domain": ">= 0"},
                  {"name": "e", "domain": "[0, 1]"}, {"name": "mu", "domain": "[0, 1]"}]
    for k in range(1, K + 1):
        parameters += [{"name": f"a_{k}"}, {"name": f"b_{k}"}, {"name": f"w_{k}", "domain": "> 0"}]
    return {
        "name": "terrain_ball_file",
        "states": ["x", "y", "vx", "vy"],
        "parameters": parameters,
        "constants": {"x0": 0.0, "y0": 1.0, "g": 9.81},
        "initial_state": {"x": "x0", "y": "y0", "vx": "vx0", "vy": "vy0"},
        "flow": {"x": "vx", "y": "vy", "vx": "-c * vx", "vy": "-g - c * vy"},
        "guards": [{"name": "ground", "expression": f"y - ({h})", "direction": "falling",
                    "reset": {"vx": f"{an} * {nx} + {at} * {tx}", "vy": f"{an} * {ny} + {at} * {ty}"}}],
    }
