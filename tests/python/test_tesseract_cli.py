"""`tesseract-runtime check` and `check-gradients` on the example payload (three bumps, two
launches): every derivative endpoint against central differences of apply at a tight tolerance;
and the build context `tesseract build` would send to Docker, made without Docker."""

import io
import os
import shutil
import subprocess
import sys
import tarfile
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


def test_the_image_build_context_is_complete(tmp_path):
    """`tesseract build` needs a Docker daemon, which the development machines lack; its own
    code makes the build context without one: the config passes tesseract-core's schema, the API
    its checks, and the Dockerfile installs the packages the library builds against and the
    committed tree as the local requirement (staged as tesseract/build-image.sh stages it)."""
    from tesseract_core.sdk import api_parse, engine

    src = tmp_path / "tesseract"
    shutil.copytree(REPO / "tesseract", src, ignore=shutil.ignore_patterns(".source", "__pycache__"))
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", "HEAD"], check=True,
                             stdout=subprocess.PIPE).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tree:
        tree.extractall(src / ".source" / "saltation", filter="data")
    config = api_parse.get_config(src)
    api_parse.validate_tesseract_api(src)
    context = engine.prepare_build_context(src, tmp_path / "context", config)
    dockerfile = (context / "Dockerfile").read_text()
    assert f"FROM --platform=$BUILDPLATFORM {config.build_config.base_image} AS build_stage" in dockerfile
    assert config.build_config.base_image == "debian:bookworm-slim"
    # What CMake finds (CMakeLists.txt, src/*/CMakeLists.txt) and what builds the module.
    for package in ("g++", "make", "cmake", "libeigen3-dev", "nlohmann-json3-dev", "libcli11-dev",
                    "liblbfgspp-dev", "libboost-dev", "librandom123-dev"):
        assert package in config.build_config.extra_packages
    assert " ".join(config.build_config.extra_packages) in dockerfile
    staged = context / "local_requirements" / "saltation"
    assert (staged / "pyproject.toml").exists() and (staged / "python" / "src" / "jax_ffi.cpp").exists()
    requirements = (context / "__tesseract_source__" / "tesseract_requirements.txt").read_text()
    assert "local_requirements/saltation" in requirements
