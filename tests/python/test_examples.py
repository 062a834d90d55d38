"""Seed 001's pipeline (examples/python) at small size against a Tesseract served on a free
loopback port by this module: each example runs to its result line, and the result is checked."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "python"
sys.path.insert(0, str(REPO / "tesseract"))
from local_server import served  # noqa: E402


@pytest.fixture(scope="module")
def url():
    with served() as url:
        yield url


def run(command):
    result = subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout
    return result.stdout


def test_landing_adam_reduces_the_miss(url):
    out = run([sys.executable, str(EXAMPLES / "landing_adam.py"), "--url", url, "--steps", "6"])
    [(first, last)] = re.findall(r"miss\^2 (\S+) -> (\S+)", out)
    assert float(last) < 0.1 * float(first), out
    assert len(re.findall(r"^step ", out, re.MULTILINE)) == 6


def test_posterior_nuts_covers_the_truth(url):
    out = run([sys.executable, str(EXAMPLES / "posterior_nuts.py"), "--url", url,
               "--warmup", "20", "--samples", "20", "--max-tree-depth", "3"])
    for name in ("e", "mu"):
        mean, sd, truth = re.search(rf"^{name} *: posterior mean (\S+), sd (\S+), .* true (\S+)$", out, re.MULTILINE).groups()
        assert abs(float(mean) - float(truth)) < 4 * float(sd) + 0.01, out
        assert 0 < float(sd) < 0.1, out
    assert "20 NUTS samples after 20 warm-up" in out


def test_curl_client_gets_apply_and_vjp(url):
    out = run(["bash", str(EXAMPLES / "curl_roundtrip.sh"), url])
    apply_response, vjp_response = re.findall(r"^\{.*\}$", out, re.MULTILINE)
    assert '"impact_points"' in apply_response and '"status"' in apply_response
    for key in ('"launch_velocity"', '"restitution"', '"friction"'):
        assert key in vjp_response
