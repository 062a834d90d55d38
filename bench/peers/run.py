#!/usr/bin/env python3
"""Work-precision of saltation against its peers (bench/README.md, "Peers"): the terrain ball of
bench/terrain_batch.hpp (terrain_comparison.py), or the nonlinear model files of bench/models
(model_file_comparison.py, --model duffing_stop pendulum_drag).

For each case, forward and with sensitivities of all P parameters, it runs saltation at several dt
(and probe counts) and each peer over its tolerance (or step) sweep, each on the same rows, checks
each tool's event count and status per row against the reference, and records for each point the
error of event times, pre-event states, qf and dqf/dtheta against the reference and the time per
trajectory (one thread). Timings are paired: every round runs every point once, in an order
rotated each round (a setting's forward and sensitivity runs always back to back), and the median
and spread over the rounds are reported (work_precision.py).

Run from the repository root after bench/peers/setup and a build with the benchmarks on:
  .venv-bench/bin/python bench/peers/run.py --build build-peers
  .venv-bench/bin/python bench/peers/run.py --build build-peers --model duffing_stop pendulum_drag
Writes work_precision.{json,md,png} to bench/results/peers (the terrain ball) or
bench/results/peers/nonlinear (the model files), or --out.
"""
import argparse
import importlib.metadata
import json
import os
import platform
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_file_comparison  # noqa: E402
import terrain_comparison  # noqa: E402
import work_precision as wp  # noqa: E402


def versions():
    v = {}
    for pkg in ("numpy", "scipy", "jax", "diffrax", "warp-lang"):
        try:
            v[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            v[pkg] = None
    for deb in ("libsundials-dev", "libboost-dev"):
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", deb], capture_output=True, text=True)
        v[deb] = r.stdout or None
    return v


def machine():
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "")
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(), "load_avg_1_5_15": os.getloadavg()}


def write_markdown(path, result, comparison, extra_lines):
    lines = [f"# Work-precision against peers ({comparison.title})", "",
             f"Machine: {result['machine']['cpu']}, {result['machine']['cores']} cores, one thread per tool "
             f"(saltation's SIMD lanes: {result['machine'].get('saltation_simd_lanes')}); "
             f"load average at start {result['machine']['load_avg_1_5_15'][0]:.1f}, at end "
             f"{result['load_avg_end'][0]:.1f} (the machine was shared with other developers' builds: "
             "timings are noisy; medians over paired rounds, spread min-max).",
             f"Problem: {result['problem']}; {result['rounds']} rounds. Command: `{result['command']}`.",
             f"Reference: {result['reference']['what']}.", ""]
    for case, checks in result["reference"]["check"].items():
        lines += [f"Reference check {case}: {check}." for check in checks]
    lines += ["", "Peers not measured: " + ("; ".join(f"{t}: {why}" for t, why in result["missing"].items()) or "none"), ""]
    lines += extra_lines + wp.markdown_tables(result, comparison)
    open(path, "w").write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build-peers", help="build directory holding bench/peers/peer_*")
    ap.add_argument("--model", nargs="+", default=["terrain_ball"],
                    choices=["terrain_ball"] + list(model_file_comparison.MODELS),
                    help="terrain_ball (default), or one or both model files")
    ap.add_argument("--rows", type=int, help="rows timed per case (default 64 for the terrain ball, 1024 for the model files)")
    ap.add_argument("--record-rows", type=int,
                    help="model files: the first rows checked against the reference (default 128; 0: all)")
    ap.add_argument("--rounds", type=int, default=3, help="paired timing rounds (default 3)")
    ap.add_argument("--K", type=int, nargs="+", default=[3, 24], choices=[3, 24], help="terrain ball: bump counts")
    ap.add_argument("--tools", nargs="+", help="only these tools' sweeps (saltation is always run)")
    ap.add_argument("--quick", action="store_true", help="a short sweep (a smoke test of the runner)")
    ap.add_argument("--scaling-rows", type=int, default=10000,
                    help="terrain ball: rows of the 1- vs 2-thread saltation timing (K = 3, dt = 1e-3, forward; 0: skip)")
    ap.add_argument("--disk-systems", type=int, default=10000,
                    help="terrain ball: systems of the disk comparison against JAX and Warp (disk_peers.py; 0: skip)")
    ap.add_argument("--out", help="output folder")
    args = ap.parse_args()
    terrain = args.model == ["terrain_ball"]
    if not terrain and "terrain_ball" in args.model:
        sys.exit("--model: terrain_ball is compared on its own")
    comparison = (terrain_comparison if terrain else model_file_comparison).comparison(args)
    out = args.out or ("bench/results/peers" if terrain else "bench/results/peers/nonlinear")

    # Every tool runs on the same one core (the processes and threads started from here inherit
    # it); only the 2-thread run of the scaling check gets both.
    all_cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {all_cpus[0]})

    peers, missing = wp.find_peers(args.build)
    if "saltation" not in peers:
        sys.exit(missing["saltation"])
    if args.tools:
        comparison.sweeps = {case: {t: s for t, s in sweeps.items() if t in args.tools or t == "saltation"}
                             for case, sweeps in comparison.sweeps.items()}
    start_machine = machine()
    thetas, reference, checks, start_machine["saltation_simd_lanes"] = wp.prepare_rows(comparison, peers)

    scaling = None
    if terrain and args.scaling_rows > 0:
        scaling = terrain_comparison.ThreadScaling(peers["saltation"], args.scaling_rows, all_cpus)
    points = wp.run_rounds(comparison, peers, thetas, args.rounds, scaling)
    disks = terrain_comparison.disks(args.build, args.disk_systems, args.rounds) if terrain and args.disk_systems > 0 else None

    out_points = wp.summarize(points, reference, comparison)
    result = {
        "command": " ".join([os.path.relpath(sys.executable)] + sys.argv),
        "machine": start_machine, "load_avg_end": os.getloadavg(), "versions": versions(),
        "rows": comparison.rows, "record_rows": comparison.record_rows, "rounds": args.rounds,
        "problem": comparison.problem_text,
        "reference": {"what": comparison.reference_what, "check": checks},
        "missing": missing,
        "not_measured": {"scipy with sensitivities": "not implemented (forward only)",
                         "Boost.Odeint with sensitivities": "not implemented (forward only)"},
        "points": out_points,
        "matched_accuracy": wp.matched_accuracy(out_points, comparison),
        "sensitivity_over_forward": wp.sensitivity_over_forward(out_points),
    }
    extra_lines = []
    if terrain:
        result.update(thread_scaling=scaling.result() if scaling else None, thread_scaling_rows=args.scaling_rows,
                      disks=disks)
        result["targets"] = terrain_comparison.targets(result, comparison.cases)
        extra_lines = terrain_comparison.markdown(result)
    os.makedirs(out, exist_ok=True)
    json.dump(result, open(os.path.join(out, "work_precision.json"), "w"), indent=1)
    write_markdown(os.path.join(out, "work_precision.md"), result, comparison, extra_lines)
    wp.plot(os.path.join(out, "work_precision.png"), result, comparison)
    print(open(os.path.join(out, "work_precision.md")).read())


if __name__ == "__main__":
    main()
