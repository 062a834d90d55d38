"""What the examples share: the served Tesseract (its URL from --url) and the terrain of
tesseract/example_inputs.json (three bumps, drag, restitution, friction, run options)."""

import argparse
import json
from pathlib import Path

import jax
import jax.numpy as jnp
from tesseract_core import Tesseract

jax.config.update("jax_enable_x64", True)  # the solver works in float64; so do the objectives

EXAMPLE_INPUTS = Path(__file__).resolve().parents[2] / "tesseract" / "example_inputs.json"
DIFFERENTIABLE = ("drag", "restitution", "friction", "bump_heights", "bump_centers", "bump_widths")


def argument_parser(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--url", default="http://127.0.0.1:8000",
                        help="where the Tesseract is served (tesseract-runtime serve; docs/tesseract.md)")
    return parser


def connect(url: str) -> Tesseract:
    tesseract = Tesseract.from_url(url, timeout=(5, 600))
    tesseract.health()  # fails here, naming the URL, when nothing is served there
    return tesseract


def terrain() -> dict:
    """The example payload's inputs without its launches: the differentiable ones as JAX arrays,
    the model constants and options as they are."""
    inputs = json.loads(EXAMPLE_INPUTS.read_text())["inputs"]
    del inputs["launch_velocity"]
    return {key: jnp.asarray(value) if key in DIFFERENTIABLE else value for key, value in inputs.items()}
