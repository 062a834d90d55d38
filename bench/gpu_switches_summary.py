#!/usr/bin/env python3
"""Summarises the switches part of scripts/gpu-check (bench/results/gpu/switches/) as Markdown.

For each terrain-ball setting (K, rows, forward or with sensitivities) it reports the median wall
time of a solve with every launch choice on (docs/gpu.md, "Switches") and, for each choice turned
off, that time over the all-on time (above 1: the choice pays); trajectory-steps per second of
wall time; and the process's first solve. From ncu: the kernels' own time of one 2^20-row solve,
and the wall over it; at 2^16 rows, threads per warp instruction, achieved occupancy, fp64
operations per trajectory-step and their fraction of the fp64 peak, and local-memory instructions
per instruction.

Standard library only: `scripts/gpu-check collect` runs it on the development machine.
Usage: python3 bench/gpu_switches_summary.py bench/results/gpu/switches > bench/results/gpu/switches.md
"""
import glob
import os
import statistics
import sys

from gpu_runner_summary import FP64_PEAK_FLOPS, load_json, ncu_launches

CONFIGS = ["on", "host_off", "spread_off", "refill_off", "defer_off", "columns_off", "all_off"]
WHAT_IS_OFF = {
    "host_off": "item 1: stack limit restored, no device memory kept, one chunk",
    "spread_off": "item 2: the occupancy calculator's block",
    "refill_off": "item 3: a thread per row",
    "defer_off": "event deferral off",
    "columns_off": "item 4: the parameter columns jumped in the lanes, not composed by a second kernel (sensitivities only)",
    "all_off": "all of the above",
}


def record_path(folder, stem):
    for path in (os.path.join(folder, stem + ".json"), os.path.join(folder, stem + ".json.gz")):
        if os.path.exists(path):
            return path
    return None


def wall_table(folder):
    out = ["| K | rows | run | all on: s | traj-steps/s | first solve s | " +
           " | ".join(f"{c} / on" for c in CONFIGS[1:]) + " |",
           "|---|---|---|---|---|---|" + "---|" * (len(CONFIGS) - 1)]
    walls = {}
    for K in (3, 24):
        for rows in (65536, 1048576):
            for sens in ("fwd", "sens"):
                seconds = {}
                for config in CONFIGS:
                    path = record_path(folder, f"K{K}_{rows}_{sens}_{config}")
                    if path:
                        rec = load_json(path)
                        seconds[config] = (statistics.median(rec["seconds"]), rec)
                if "on" not in seconds:
                    continue
                on, rec = seconds["on"]
                walls[(K, rows, sens)] = on
                rate = rec["trajectory_steps"] / on
                ratios = [f"{seconds[c][0] / on:.2f}" if c in seconds else "-" for c in CONFIGS[1:]]
                out.append(f"| {K} | {rows} | {sens} | {on:.4f} | {rate:.3e} | {rec.get('first_seconds', float('nan')):.3f} | " +
                           " | ".join(ratios) + " |")
    return out, walls


def kernel_table(folder, walls):
    out = ["| run | launches | kernels s (all on) | wall / kernels (all on) | kernels s (all off) |",
           "|---|---|---|---|---|"]
    for sens in ("fwd", "sens"):
        on = ncu_launches(os.path.join(folder, f"ncu_time_K3_{sens}_on.csv"))
        off = ncu_launches(os.path.join(folder, f"ncu_time_K3_{sens}_all_off.csv"))
        if not on:
            continue
        kernels = sum(launch["gpu__time_duration.sum"] for launch in on)
        wall = walls.get((3, 1048576, sens))
        ratio = f"{wall / kernels:.2f}" if wall else "-"
        kernels_off = f"{sum(launch['gpu__time_duration.sum'] for launch in off):.4f}" if off else "-"
        out.append(f"| K = 3, 2^20 rows, {sens} | {len(on)} | {kernels:.4f} | {ratio} | {kernels_off} |")
    return out


def metrics_table(folder):
    out = ["| run | config | kernel s | threads / warp inst | occupancy % | fp64 flop / traj-step | "
           "% of fp64 peak | local ld+st / inst |", "|---|---|---|---|---|---|---|---|"]
    op = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
    for sens in ("fwd", "sens"):
        for config in ("on", "all_off"):
            launches = ncu_launches(os.path.join(folder, f"ncu_metrics_K3_{sens}_{config}.csv"))
            if not launches:
                continue
            m = launches[0]
            flops = m[op.format("dadd")] + m[op.format("dmul")] + 2.0 * m[op.format("dfma")]
            seconds = m["gpu__time_duration.sum"]
            run = record_path(folder, f"ncu_metrics_K3_{sens}_{config}")
            per_step = f"{flops / load_json(run)['trajectory_steps']:.0f}" if run else "-"
            local = (m["smsp__sass_inst_executed_op_local_ld.sum"] + m["smsp__sass_inst_executed_op_local_st.sum"]) / \
                m["smsp__inst_executed.sum"]
            out.append(f"| K = 3, 2^16 rows, {sens} | {config} | {seconds:.5f} | "
                       f"{m['smsp__thread_inst_executed_per_inst_executed.ratio']:.1f} | "
                       f"{m['sm__warps_active.avg.pct_of_peak_sustained_active']:.1f} | {per_step} | "
                       f"{100.0 * flops / seconds / FP64_PEAK_FLOPS:.1f} | {local:.3f} |")
    return out


def main():
    folder = sys.argv[1]
    if not glob.glob(os.path.join(folder, "K*")):
        raise SystemExit(f"{folder}: no switches records")
    walls_md, walls = wall_table(folder)
    lines = ["# The CUDA driver's launch choices, each off against all on", "",
             "Terrain ball, dt 0.001, probes 3, peer_saltation on CUDA (scripts/gpu-check, switches part). "
             "Wall: median of the timed solves; a ratio above 1 means the choice pays. Off in each column:", ""]
    lines += [f"- `{c}`: {WHAT_IS_OFF[c]}" for c in CONFIGS[1:]]
    lines += ["", "## Wall time", ""] + walls_md
    lines += ["", "## Kernel time (ncu), one solve", ""] + kernel_table(folder, walls)
    lines += ["", "## Kernel figures (ncu), one launch", ""] + metrics_table(folder)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
