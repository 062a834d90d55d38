"""The terrain ball's comparison for bench/peers/run.py (bench/README.md, "Peers"): K = 3 and 24
bumps on bench/terrain_batch.hpp's rows, its sweeps and levels, and what only this comparison
measures: saltation's thread scaling, the disks against JAX and Warp, and the issue's targets.

The reference is saltation at dt = 2^-17 (7.6e-6) with event times located to time_tol 1e-14: the
flow is affine with constant coefficients, so RK4's truncation error per step is (c dt)^5 / 5!
~ 1e-28 relative and only rounding and event localisation remain; CVODES at its tightest
tolerance, an independent integrator, is reported against it as a check of the reference.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from problems import PROBLEMS
from work_precision import Case, Comparison

# A power-of-two step: every step time is then exact, where with dt = 1e-5 the 3e5 additions of
# the clock drift event times by 1e-11 (measured against this reference).
REFERENCE = (2.0**-17, 3, 1e-14)


def sweeps(quick):
    """Settings per tool: (setting, sens) pairs; fixed-step tools' are (dt, probes[, time_tol])."""
    # About as dense in saltation's dt (factors 1.3-2.5 between neighbours) as in the adaptive
    # peers' tolerance (half decades from 1e-11: a factor 10^(1/2) in rtol is one of about 1.3 in
    # the step of a fifth-order method), so that no tool's fastest point at a level is much
    # further from that level than another's.
    dts = [0.04, 0.03, 0.02, 0.015, 0.01, 0.007, 0.005, 0.002, 0.001]
    rtols = [1e-6, 1e-8, 1e-9, 1e-10, 3e-11, 1e-11, 3e-12, 1e-12, 3e-13, 1e-13]
    if quick:
        dts, rtols = [0.01, 0.001], [1e-8, 1e-12]
    # Each setting's forward and sensitivity runs next to each other, so that within a round the
    # two are timed back to back (the sensitivity/forward ratio is taken round by round).
    saltation = [((dt, 3), sens) for dt in dts for sens in (False, True)]
    if not quick:
        # No probes (the guard at the step ends only) at every dt: a grazing event that a step
        # would step over shows as a row with another event count, and the point then never counts.
        saltation += [((dt, 0), sens) for dt in dts for sens in (False, True)]
        saltation += [((0.01, 7), False)]
        # The event-time bracket is saltation's third knob (default 1e-12).
        saltation += [((dt, 3, 1e-14), sens) for dt in (0.02, 0.01) for sens in (False, True)]
    return {
        "saltation": saltation,
        "odeint_rk4": [((dt, 3), False) for dt in (0.01, 0.001)],
        "saltation_dopri5": [(rtol, sens) for sens in (False, True) for rtol in rtols],
        "cvodes": [(rtol, sens) for sens in (False, True) for rtol in rtols],
        "scipy_dop853": [(rtol, False) for rtol in ([1e-6, 1e-9, 1e-12] if not quick else [1e-9])],
        "diffrax_tsit5": [(rtol, sens) for sens in (False, True) for rtol in rtols],
        "diffrax_rk4": [(dt, sens) for sens in (False, True) for dt in (0.01, 0.001)],
    }


def comparison(args):
    cases = [Case(f"K = {K}", ["--K", str(K)], PROBLEMS["terrain_ball"], 5 + 3 * K) for K in args.K]
    return Comparison(
        title="terrain ball", cases=cases, sweeps={case.label: sweeps(args.quick) for case in cases},
        # The largest error of impact times and impact positions (and, with sensitivities, the
        # relative error of dqf/dtheta) a point must reach to count at that level.
        levels_forward=[{"events": 1e-9}, {"events": 1e-11}],
        levels_sens=[{"events": 1e-9, "dqf": 1e-7}, {"events": 1e-11, "dqf": 1e-9}],
        rows=args.rows or 64, record_rows=0, reference_setting=REFERENCE,
        reference_what=f"saltation at dt = 2^-17 = {REFERENCE[0]:g}, probes 3, time_tol 1e-14, with sensitivities",
        event_states_label="impact x,y",
        checks=[("cvodes", 1e-13, True, "CVODES at rtol 1e-13 with sensitivities")],
        problem_text=f"terrain ball, bench/terrain_batch.hpp rows ({args.rows or 64} per K), t_final 3, v_stop 0.25, "
                     "event capacity 16, one thread")


class ThreadScaling:
    """saltation with 1 and 2 threads at n rows (K = 3, dt = 1e-3, forward), timed in the same rounds
    as the points (its rows are not compared)."""

    def __init__(self, salt, rows, cpus):
        self.salt, self.rows, self.cpus = salt, rows, cpus
        self.seconds = {1: [], 2: []}
        self.case = Case("K = 3", ["--K", "3"], PROBLEMS["terrain_ball"], 14)

    def __call__(self, r):
        for threads in sorted(self.seconds, reverse=r % 2 == 1):
            cpus = ",".join(map(str, self.cpus[:threads]))
            cmd = self.salt.command(self.case, self.rows, (1e-3, 3), False, threads=threads)
            self.seconds[threads].append(self.salt.record(["taskset", "-c", cpus] + cmd)["seconds"][0])

    def result(self):
        one, two = np.array(self.seconds[1]), np.array(self.seconds[2])
        return {"what": f"saltation forward, K = 3, dt = 1e-3, probes 3, {self.rows} rows, 1 vs 2 threads, paired rounds",
                "seconds_1_thread": one.tolist(), "seconds_2_threads": two.tolist(),
                "speedup_median": float(np.median(one / two)), "speedup_min": float((one / two).min()),
                "speedup_max": float((one / two).max())}


def disks(build, systems, rounds):
    """disk_peers.py: two colliding disks against JAX and Warp."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "disk_peers.py"),
                        "--binary", os.path.join(build, "bench", "peers", "peer_disks"),
                        "--systems", str(systems), "--rounds", str(rounds), "--out", f.name],
                       check=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
        return json.load(open(f.name))


def targets(result, cases):
    """The performance targets of the issue, each with the measured ratio (peer time / saltation
    time at matched accuracy; above 1 saltation is faster) and whether it is met."""
    rows = []
    P = {case.label: case.P for case in cases}

    def add(what, required, measured, note="", comparable=True, at_most=False):
        met = None
        if comparable:
            met = measured is not None and (measured <= required if at_most else measured >= required)
        rows.append({"target": what, "required": required, "measured": measured, "met": met, "note": note})

    p14 = [r["ratio"] for r in result["sensitivity_over_forward"] if r["P"] == 14]
    if p14:
        add("sensitivities / forward at P = 14, the largest over every dt and probes (at most)", 1.5, max(p14),
            at_most=True)

    ran = {p["tool"] for p in result["points"]}
    for entry in result["matched_accuracy"]:
        level = ", ".join(f"{k} <= {v:g}" for k, v in entry["level"].items())
        tools = entry["tools"]
        required = {"diffrax": 20.0, "cvodes": 100.0} if entry["sens"] else {"diffrax_tsit5": 2.0, "cvodes": 2.0}
        for peer, factor in required.items():
            if not any(tool.startswith(peer) for tool in ran):
                continue
            ratios = [t["peer_over_saltation"] for name, t in tools.items() if name.startswith(peer)]
            what = f"{entry['case']}, {'sensitivities P = %d' % P[entry['case']] if entry['sens'] else 'forward'}, {level}: {peer}"
            if "saltation" not in tools:
                add(what, factor, None, "saltation reached no point at this level")
            elif not ratios:
                add(what, factor, None, f"{peer} reached no point at this level (saltation did)", comparable=False)
            else:
                add(what, factor, min(ratios))
    if result["thread_scaling"]:
        add("2 threads / 1 thread at n = %d" % result["thread_scaling_rows"], 1.8,
            result["thread_scaling"]["speedup_median"], "2-core machine shared with other builds")
    if result["disks"]:
        tools = result["disks"]["tools"]
        jax = [t["over_saltation"] for name, t in tools.items() if name.startswith("jax")]
        add("disks, loss + gradient, %d systems: JAX jit + vmap (its faster variant)" % result["disks"]["systems"],
            3.0, min(jax) if jax else None)
        add("disks, loss + gradient, %d systems: Warp (CPU)" % result["disks"]["systems"], 3.0,
            tools["warp_cpu"]["over_saltation"] if "warp_cpu" in tools else None)
    return rows


def markdown(result):
    """This comparison's own sections: thread scaling, disks and targets."""
    lines = []
    if result["thread_scaling"]:
        ts = result["thread_scaling"]
        lines += [f"Thread scaling ({ts['what']}): 2 threads / 1 thread speed-up {ts['speedup_median']:.2f} "
                  f"(median of paired rounds; {ts['speedup_min']:.2f}-{ts['speedup_max']:.2f}).", ""]
    if result["disks"]:
        d = result["disks"]
        lines += [f"## Disks ({d['what']}; CPU {d['cpu_affinity']})", "",
                  "| tool | time median (rounds) | per system | peer / saltation | loss rel err | gradient rel err |",
                  "|---|---|---|---|---|---|"]
        for tool, t in d["tools"].items():
            lines.append(f"| {tool} | {t['median_s'] * 1e3:.1f} ms ({', '.join(f'{x * 1e3:.1f}' for x in t['seconds'])}) | "
                         f"{t['median_s'] / d['systems'] * 1e6:.2f} us | {t['over_saltation']:.2f} | {t['loss_rel_err']:.1e} | "
                         f"{t['grad_rel_err']:.1e} |")
        if d["missing"]:
            lines.append("Disk peers not measured: " + "; ".join(f"{t}: {why}" for t, why in d["missing"].items()))
        lines.append("")
    lines += ["## Targets (issue 13, items 5 and 6): required and measured ratio (peer / saltation; threads: "
              "speed-up; item 5: sensitivities / forward, at most)", "",
              "| target | required | measured | met | note |", "|---|---|---|---|---|"]
    for t in result["targets"]:
        measured = f"{t['measured']:.2f}" if t["measured"] is not None else "-"
        lines.append(f"| {t['target']} | {t['required']:g} | {measured} | "
                     f"{'n/a' if t['met'] is None else 'yes' if t['met'] else 'NO'} | {t['note']} |")
    return lines + [""]
