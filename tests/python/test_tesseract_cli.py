"""`tesseract-runtime check` and `check-gradients` on the example payload (three bumps, two
launches): every derivative endpoint against central differences of apply at a tight tolerance."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUNTIME = Path(sys.executable).parent / "tesseract-runtime"


def run_runtime(*args, tmp_path):
    env = {**os.environ, "TESSERACT_API_PATH": str(REPO / "tesseract" / "tesseract_api.py"),
           "TESSERACT_OUTPUT_PATH": str(tmp_path)}
    # The runtime reports on stderr or stdout depending on the command; one stream is enough here.
    return subprocess.run([str(RUNTIME), *args], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600)


def test_check_passes(tmp_path):
    result = run_runtime("check", tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout
    assert "check successful" in result.stdout


def test_check_gradients_passes_at_a_tight_tolerance(tmp_path):
    # eps 1e-6 on inputs of order 0.1-1 keeps central differences' truncation and rounding
    # errors near 1e-9 relative; the event location's time tolerance (1e-12) enters divided by eps.
    result = run_runtime("check-gradients", f"@{REPO / 'tesseract' / 'example_inputs.json'}",
                         "--eps", "1e-6", "--rtol", "1e-6", "--max-evals", "60", "--seed", "3",
                         "--no-show-progress", tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout
    for endpoint in ("jacobian", "jacobian_vector_product", "vector_jacobian_product"):
        assert f"Gradient check for {endpoint} passed" in result.stdout, result.stdout
