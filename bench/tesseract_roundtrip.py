"""The served Tesseract's round trip against the same work in process.

For n launches over the example terrain (tesseract/example_inputs.json; launch velocities drawn
around it with a fixed seed), times
  - in process: saltation.solve (forward), and solve with sensitivities + Result.vjp;
  - over HTTP: POST /apply and POST /vector_jacobian_product (cotangent on every impact point,
    gradient with respect to every differentiable input), arrays sent and received as
    json+base64 (plain json too with --encodings json+base64 json),
and reports the median wall time of --repeats calls each (after one warm-up call), and the
overhead of the round trip over the in-process work. A server is started on a free loopback port
unless --url names one. Then, for one launch, where a request's time goes on the server side:
the runtime's /apply endpoint called in process (schema validation of the request and of the
outputs around apply), inside the run folder and profiler the server opens per request, and the
json+base64 encoding of the response.

    .venv/bin/python bench/tesseract_roundtrip.py [--sizes 1 10000] [--repeats 20]
"""

import argparse
import base64
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import requests
import saltation
from tesseract_core.runtime.core import create_endpoints, get_input_schema, get_tesseract_api
from tesseract_core.runtime.file_interactions import output_to_bytes
from tesseract_core.runtime.mpa import start_run
from tesseract_core.runtime.profiler import Profiler

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tesseract"))
from local_server import served  # noqa: E402

EXAMPLE = json.loads((REPO / "tesseract" / "example_inputs.json").read_text())["inputs"]
DIFFERENTIABLE_INPUTS = ["launch_velocity", "drag", "restitution", "friction", "bump_heights", "bump_centers",
                         "bump_widths"]


def encode(array, encoding):
    array = np.ascontiguousarray(array, dtype=np.float64)
    if encoding == "json":
        return array.tolist()
    return {"object_type": "array", "shape": list(array.shape), "dtype": "float64",
            "data": {"buffer": base64.b64encode(array.tobytes()).decode(), "encoding": "base64"}}


def launches(n):
    rng = np.random.default_rng(12)
    return np.column_stack([rng.uniform(1.0, 1.6, n), rng.uniform(0.2, 0.8, n)])


def median_seconds(call, repeats):
    call()  # warm-up: connections, caches, first allocation
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def in_process(velocities, repeats):
    x = EXAMPLE
    bumps = np.stack([x["bump_heights"], x["bump_centers"], x["bump_widths"]], axis=1).ravel()
    shared = np.array([x["drag"], x["restitution"], x["friction"], *bumps])
    theta = np.column_stack([velocities, np.broadcast_to(shared, (len(velocities), len(shared)))])
    options = dict(config={"bumps": 3, "x0": x["x0"], "y0": x["y0"]}, backend=x["backend"], t_final=x["t_final"],
                   dt=x["dt"], event_capacity=x["event_capacity"])

    def forward():
        saltation.solve("terrain_ball", theta, **options)

    def vjp():
        r = saltation.solve("terrain_ball", theta, sensitivities=True, **options)
        r.vjp(np.ones((len(theta), r.output_size)))

    return median_seconds(forward, repeats), median_seconds(vjp, repeats)


def over_http(url, velocities, encoding, repeats):
    n, C = len(velocities), EXAMPLE["event_capacity"]
    inputs = {**EXAMPLE, "launch_velocity": encode(velocities, encoding)}
    accept = {"Accept": f"application/{encoding}"}
    vjp_body = {"inputs": inputs, "vjp_inputs": DIFFERENTIABLE_INPUTS, "vjp_outputs": ["impact_points"],
                "cotangent_vector": {"impact_points": encode(np.ones((n, C, 2)), encoding)}}
    session = requests.Session()

    def post(endpoint, body):
        response = session.post(f"{url}/{endpoint}", json=body, headers=accept, timeout=600)
        response.raise_for_status()
        return response

    reply = post("apply", {"inputs": inputs})
    sizes = (len(json.dumps({"inputs": inputs})), len(reply.content))
    apply_s = median_seconds(lambda: post("apply", {"inputs": inputs}), repeats)
    vjp_s = median_seconds(lambda: post("vector_jacobian_product", vjp_body), repeats)
    return apply_s, vjp_s, sizes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a served Tesseract (default: serve one on a free loopback port)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10_000])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--encodings", nargs="+", default=["json+base64"], choices=["json+base64", "json"])
    args = parser.parse_args()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"machine: {platform.node()}, {os.cpu_count()} cores, load average {load}, Python "
          f"{platform.python_version()}, saltation {saltation.__version__}; backend {EXAMPLE['backend']}, "
          f"terrain ball K = 3, t_final {EXAMPLE['t_final']}, dt {EXAMPLE['dt']}, "
          f"event_capacity {EXAMPLE['event_capacity']}; median of {args.repeats} calls")
    print(f"{'n':>7} {'encoding':>12} {'solve ms':>10} {'/apply ms':>10} {'overhead':>9} "
          f"{'solve+vjp ms':>13} {'/vjp ms':>10} {'overhead':>9} {'request B':>10} {'reply B':>10}")

    def report(url):
        for n in args.sizes:
            velocities = launches(n)
            solve_s, solve_vjp_s = in_process(velocities, args.repeats)
            for encoding in args.encodings:
                apply_s, vjp_s, (request_bytes, reply_bytes) = over_http(url, velocities, encoding, args.repeats)
                print(f"{n:>7} {encoding:>12} {1e3 * solve_s:>10.3f} {1e3 * apply_s:>10.3f} "
                      f"{apply_s / solve_s:>8.1f}x {1e3 * solve_vjp_s:>13.3f} {1e3 * vjp_s:>10.3f} "
                      f"{vjp_s / solve_vjp_s:>8.1f}x {request_bytes:>10} {reply_bytes:>10}", flush=True)

    if args.url:
        report(args.url)
    else:
        with served() as url:
            report(url)
    server_side_stages(args.repeats)


def server_side_stages(repeats):
    """The runtime's own steps for a one-launch /apply, in process (tesseract_core.runtime 1.15;
    its configuration is read from the environment on first use, which is here)."""
    with tempfile.TemporaryDirectory() as output_path:
        os.environ.update(TESSERACT_API_PATH=str(REPO / "tesseract" / "tesseract_api.py"),
                          TESSERACT_OUTPUT_PATH=output_path)
        api = get_tesseract_api()
        apply = create_endpoints(api)[0]
        request = json.dumps({"inputs": {**EXAMPLE, "launch_velocity": [[1.5, 0.5]]}})
        payload = get_input_schema(apply).model_validate(json.loads(request))
        reply = apply(payload)

        def in_run_folder():
            with start_run(base_dir=os.path.join(output_path, "run")), Profiler():
                apply(payload)

        stages = [
            ("parse and validate the request", lambda: get_input_schema(apply).model_validate(json.loads(request))),
            ("solve (tesseract_api.apply)", lambda: api.apply(payload.inputs)),
            ("runtime /apply endpoint", lambda: apply(payload)),
            ("... in its run folder + profiler", in_run_folder),
            ("encode the reply (json+base64)",
             lambda: output_to_bytes(reply, "json+base64", base_dir=output_path, binref_dir="run")),
        ]
        print("server-side stages of a one-launch /apply, in process:")
        for name, call in stages:
            print(f"  {name:34s} {1e3 * median_seconds(call, repeats):8.3f} ms")


if __name__ == "__main__":
    main()
