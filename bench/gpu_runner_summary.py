#!/usr/bin/env python3
"""Summarises the runner part of scripts/gpu-check (bench/results/gpu/runner/) as Markdown.

For each setting of bench/peers/run.py's saltation sweep it reports, on CUDA and on the CPU backend
with every core of the device machine: the median wall time of a solve over all rows,
trajectory-steps per second (each row's steps of dt up to its end time) and the time per
trajectory; CUDA over CPU; and how far CUDA's events are from the CPU's on the first 256 rows
(the same code, but nvcc contracts a * b + c into fused multiply-adds where the host build does not).
From ncu's counts of one CUDA launch (K = 3, forward, dt = 0.001) it reports the fp64 operations
per trajectory-step and the fraction of the fp64 peak that launch reached.

Standard library only: `scripts/gpu-check collect` runs it on the development machine.
Usage: python3 bench/gpu_runner_summary.py bench/results/gpu/runner > bench/results/gpu/runner.md
"""
import csv
import glob
import gzip
import json
import os
import statistics
import sys

# The vendor's datasheet figure for fp64 without tensor cores on the H100/H200 SXM (34 TFLOP/s),
# a lead rather than a measurement (scripts/gpu-check does not measure the peak).
FP64_PEAK_FLOPS = 34e12
# ncu names the unit "nsecond" in some versions and "ns" in others (2025.x on the H200 machine).
DURATION_SCALE = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0,
                  "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def load_json(path):
    """A record as the device wrote it (.json) or as `collect` keeps it (.json.gz)."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def load_records(folder):
    records = {}
    for path in glob.glob(os.path.join(folder, "K*_*.json")) + glob.glob(os.path.join(folder, "K*_*.json.gz")):
        tag = os.path.basename(path).split(".json")[0]
        K, sens, dt, backend = tag.split("_")
        rec = load_json(path)
        records[(int(K[1:]), sens, float(dt[2:]), backend)] = rec
    return records


def event_agreement(a, b):
    """Largest |t_cuda - t_cpu| over rows whose event counts agree, and how many rows disagree."""
    worst, differing = 0.0, 0
    for ra, rb in zip(a["results"], b["results"]):
        if len(ra["ev_t"]) != len(rb["ev_t"]) or ra["status"] != rb["status"]:
            differing += 1
            continue
        for ta, tb in zip(ra["ev_t"], rb["ev_t"]):
            worst = max(worst, abs(ta - tb))
    return worst, differing


def ncu_launches(path):
    """Each launch an `ncu --csv` run profiled, as its metrics by name (durations in seconds), in
    launch order; none where the file is missing."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = [line for line in f if line.startswith('"')]
    launches = {}
    for row in csv.DictReader(lines):
        name, unit = row.get("Metric Name"), row.get("Metric Unit", "")
        value = float(row.get("Metric Value", "nan").replace(",", ""))
        if name == "gpu__time_duration.sum":
            if unit not in DURATION_SCALE:
                raise SystemExit(f"{path}: unknown duration unit {unit!r}")
            value *= DURATION_SCALE[unit]
        launches.setdefault(int(row["ID"]), {})[name] = value
    return [launches[k] for k in sorted(launches)]


def ncu_values(folder, suffix):
    """The metrics of the profiled launch (fp64_ncu<suffix>.csv) by name, durations in seconds, or None."""
    launches = ncu_launches(os.path.join(folder, f"fp64_ncu{suffix}.csv"))
    if not launches:
        return None
    values = launches[0]
    op = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
    if not all(op.format(o) in values for o in ("dadd", "dmul", "dfma")) or "gpu__time_duration.sum" not in values:
        return None
    values["flops"] = values[op.format("dadd")] + values[op.format("dmul")] + 2.0 * values[op.format("dfma")]
    run = [p for p in (os.path.join(folder, f"ncu_run{suffix}.json"), os.path.join(folder, f"ncu_run{suffix}.json.gz"))
           if os.path.exists(p)]
    if run:
        values["flops_per_step"] = values["flops"] / load_json(run[0])["trajectory_steps"]
    return values


def main():
    folder = sys.argv[1]
    records = load_records(folder)
    print("# Runner part on the device machine (scripts/gpu-check)\n")
    print("Terrain-ball rows of bench/terrain_batch.hpp, t_final = 3, probes = 3; the median of 3 timed "
          "solves over all rows. CPU: the CPU backend on every core of the device machine.\n")
    print("| K | sensitivities | dt | backend | rows | solve | trajectory-steps/s | per trajectory | CUDA / CPU | "
          "events, CUDA vs CPU (first 256 rows) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(records, key=lambda k: (k[0], k[1], -k[2], k[3])):
        K, sens, dt, backend = key
        rec = records[key]
        seconds = statistics.median(rec["seconds"])
        rate = rec["trajectory_steps"] / seconds
        per_traj = seconds / rec["rows_solved"]
        speedup, agreement = "", ""
        other = records.get((K, sens, dt, "cpu"))
        if backend == "cuda" and other:
            speedup = f"{rate / (other['trajectory_steps'] / statistics.median(other['seconds'])):.1f}x"
            worst, differing = event_agreement(rec, other)
            agreement = f"max {worst:.1e} s, {differing} rows differ in events or status"
        threads = f", {rec['threads']} threads" if backend == "cpu" else ""
        print(f"| {K} | {'yes' if sens == 'sens' else 'no'} | {dt:g} | {backend}{threads} | {rec['rows_solved']} | "
              f"{seconds * 1e3:.2f} ms | {rate:.3e} | {per_traj * 1e6:.3f} us | {speedup} | {agreement} |")
    print()
    for suffix, what in (("", "forward"), ("_sens", "with sensitivities")):
        v = ncu_values(folder, suffix)
        if v is None:
            print(f"fp64 counts, {what}: not measured (no ncu output in this run).\n")
            continue
        flops, duration = v["flops"], v["gpu__time_duration.sum"]
        line = (f"fp64, one CUDA launch (K = 3, {what}, dt = 0.001, 65536 rows; ncu): {flops:.3e} operations "
                f"(add, mul, and 2 per fma) in {duration * 1e3:.3f} ms = {flops / duration / 1e12:.3f} TFLOP/s, "
                f"{100 * flops / duration / FP64_PEAK_FLOPS:.2f} % of the fp64 peak (34 TFLOP/s, vendor datasheet)")
        if "flops_per_step" in v:
            line += f"; {v['flops_per_step']:.0f} fp64 operations per trajectory-step"
        if "sm__warps_active.avg.pct_of_peak_sustained_active" in v:
            line += f"; achieved occupancy {v['sm__warps_active.avg.pct_of_peak_sustained_active']:.1f} % of the SM's warps"
        local = [v.get(f"smsp__sass_inst_executed_op_local_{o}.sum") for o in ("ld", "st")]
        if None not in local and v.get("smsp__inst_executed.sum"):
            line += (f"; local-memory loads and stores {100 * sum(local) / v['smsp__inst_executed.sum']:.1f} % "
                     "of the warp instructions")
        print(line + ".\n")
        cpu = records.get((3, "sens" if suffix else "fwd", 0.001, "cpu"))
        if "flops_per_step" in v and cpu:
            rate = cpu["trajectory_steps"] / statistics.median(cpu["seconds"])
            print(f"The CPU backend at the same setting ({cpu['threads']} threads) then does about "
                  f"{v['flops_per_step'] * rate / 1e9:.1f} GFLOP/s (the GPU's operation count per step, times the CPU's "
                  "trajectory-steps per second; the host build does not fuse multiply-adds, so it executes "
                  "somewhat more instructions for the same arithmetic).\n")


if __name__ == "__main__":
    main()
