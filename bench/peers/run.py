#!/usr/bin/env python3
"""Work-precision of saltation against its peers on the terrain-ball rows of bench/terrain_batch.hpp
(bench/README.md, "Peers").

For K = 3 and 24 bumps, forward and with sensitivities of all P parameters, it runs saltation at
several dt (and probe counts) and each peer over its tolerance (or step) sweep, each on the same
rows, checks each tool's event count and status per row against the reference, and records for
each point the error of event times, impact positions, qf and dqf/dtheta against the reference and
the time per trajectory (one thread). Timings are paired: every round runs every point once, in
an order rotated each round (a setting's forward and sensitivity runs always back to back), and
the median and spread over the rounds are reported.

The reference is saltation at dt = 2^-17 (7.6e-6) with event times located to time_tol 1e-14: the
flow is affine with constant coefficients, so RK4's truncation error per step is (c dt)^5 / 5!
~ 1e-28 relative and only rounding and event localisation remain; CVODES at its tightest
tolerance, an independent integrator, is reported against it as a check of the reference.

Run from the repository root after bench/peers/setup and a build with the benchmarks on:
  .venv-bench/bin/python bench/peers/run.py --build build-peers
Writes bench/results/peers/work_precision.{json,md,png}.
"""
import argparse
import importlib.metadata
import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_peers  # noqa: E402

# A power-of-two step: every step time is then exact, where with dt = 1e-5 the 3e5 additions of
# the clock drift event times by 1e-11 (measured against this reference).
REFERENCE_DT, REFERENCE_TIME_TOL = 2.0**-17, 1e-14
# Matched-accuracy levels: the largest error of impact times and impact positions (and, with
# sensitivities, the relative error of dqf/dtheta) a point must reach to count at that level.
LEVELS_FORWARD = [{"events": 1e-9}, {"events": 1e-11}]
LEVELS_SENS = [{"events": 1e-9, "dqf": 1e-7}, {"events": 1e-11, "dqf": 1e-9}]


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
        "cvodes": [(rtol, sens) for sens in (False, True) for rtol in rtols],
        "scipy_dop853": [(rtol, False) for rtol in ([1e-6, 1e-9, 1e-12] if not quick else [1e-9])],
        "diffrax_tsit5": [(rtol, sens) for sens in (False, True) for rtol in rtols],
        "diffrax_rk4": [(dt, sens) for sens in (False, True) for dt in (0.01, 0.001)],
    }


class CppPeer:
    """A program of bench/peers (peer_common.hpp's arguments and record)."""

    def __init__(self, tool, binary):
        self.tool, self.binary = tool, binary

    def command(self, K, rows, setting, sens, reps=1, threads=1):
        cmd = [self.binary, "--K", str(K), "--rows", str(rows), "--reps", str(reps)]
        if isinstance(setting, tuple):
            cmd += ["--dt", repr(setting[0]), "--probes", str(setting[1])]
            cmd += ["--time-tol", repr(setting[2])] if len(setting) > 2 else []
        else:
            cmd += ["--rtol", repr(setting)]
        cmd += ["--threads", str(threads)] if threads != 1 else []
        return cmd + (["--sens"] if sens else [])

    def record(self, cmd):
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            subprocess.run(cmd + ["--out", f.name], check=True)
            return json.load(open(f.name))

    def prepare(self, K, thetas, setting, sens):
        pass

    def run(self, K, thetas, setting, sens):
        rec = self.record(self.command(K, len(thetas), setting, sens))
        return rec["results"], rec["seconds"][0]  # itself a mean over runs lasting ~0.1 s (timed_runs)


class PythonPeer:
    def __init__(self, peer):
        self.tool, self.peer = peer.tool, peer

    def prepare(self, K, thetas, setting, sens):
        self.peer.prepare(thetas, setting, sens)

    def run(self, K, thetas, setting, sens):
        return self.peer.run(thetas, setting, sens)


def find_peers(build):
    """Every tool, or the reason it is missing (reported, never dropped)."""
    peers, missing = {}, {}
    for tool, name in (("saltation", "peer_saltation"), ("odeint_rk4", "peer_odeint"), ("cvodes", "peer_cvodes")):
        path = os.path.join(build, "bench", "peers", name)
        if os.access(path, os.X_OK):
            peers[tool] = CppPeer(tool, path)
        else:
            missing[tool] = f"not built: {path} missing (Boost headers / libsundials-dev not found by CMake?)"
    for tool, make in (("scipy_dop853", lambda: python_peers.Scipy()),
                       ("diffrax_tsit5", lambda: python_peers.Diffrax(adaptive=True)),
                       ("diffrax_rk4", lambda: python_peers.Diffrax(adaptive=False))):
        try:
            peers[tool] = PythonPeer(make())
            if tool.startswith("diffrax"):
                import diffrax  # noqa: F401
        except Exception as e:  # any import failure is the peer's state, reported as such
            peers.pop(tool, None)
            missing[tool] = f"not installed: {type(e).__name__}: {e}"
    return peers, missing


def compare(ref_rows, rows, sens):
    """Rows whose event count or status differ from the reference, and the errors over the others."""
    differ = [i for i, (a, b) in enumerate(zip(ref_rows, rows))
              if len(a["ev_t"]) != len(b["ev_t"]) or a["status"] != b["status"]]
    same = [i for i in range(len(rows)) if i not in set(differ)]

    def max_abs(keys):
        diffs = [abs(x - y) for i in same for key in keys for x, y in zip(ref_rows[i][key], rows[i][key])]
        return max(diffs, default=0.0)

    errors = {"event_t": max_abs(["ev_t"]), "event_xy": max_abs(["ev_x", "ev_y"]), "qf": max_abs(["qf"])}
    if sens:
        rel = [np.max(np.abs(np.subtract(rows[i]["dqf"], ref_rows[i]["dqf"]))) /
               max(np.max(np.abs(ref_rows[i]["dqf"])), 1e-300) for i in same]
        errors["dqf_rel"] = float(max(rel, default=0.0))
    return differ, errors


def meets(point, level):
    return (not point["rows_differing"] and max(point["errors"]["event_t"], point["errors"]["event_xy"]) <= level["events"]
            and ("dqf" not in level or point["errors"]["dqf_rel"] <= level["dqf"]))


def matched_accuracy(points, K, sens):
    """For each level: the fastest point of each tool that reaches it, and peer time / saltation time."""
    out = []
    for level in (LEVELS_SENS if sens else LEVELS_FORWARD):
        best = {}
        for p in points:
            if p["K"] == K and p["sens"] == sens and meets(p, level):
                if p["tool"] not in best or p["time_per_traj_s"]["median"] < best[p["tool"]]["time_per_traj_s"]["median"]:
                    best[p["tool"]] = p
        ours = best.get("saltation")
        entry = {"K": K, "sens": sens, "level": level, "tools": {}}
        for tool, p in best.items():
            entry["tools"][tool] = {
                "setting": p["setting"], "time_per_traj_s": p["time_per_traj_s"]["median"],
                "peer_over_saltation": (p["time_per_traj_s"]["median"] / ours["time_per_traj_s"]["median"]
                                        if ours else None)}
        out.append(entry)
    return out


def sensitivity_over_forward(points):
    """Issue 13, item 5: saltation's time with sensitivities over its forward time at the same dt
    and probes, point by point, in the order of the sweep (P = 5 + 3 K): the median over the rounds
    of each round's ratio (the two runs timed back to back; a ratio of medians taken minutes apart
    moved with the machine's load by 10-20 % between neighbouring settings), with its spread."""
    time = {(p["K"], p["setting"], p["sens"]): p["time_per_traj_s"]
            for p in points if p["tool"] == "saltation"}
    out = []
    for (K, setting, sens), t in time.items():
        if not sens or (K, setting, False) not in time:
            continue
        f = time[(K, setting, False)]
        per_round = np.array(t["rounds"]) / np.array(f["rounds"])
        out.append({"K": K, "P": 5 + 3 * K, "setting": setting, "forward_s": f["median"],
                    "sensitivities_s": t["median"], "ratio": float(np.median(per_round)),
                    "ratio_min": float(per_round.min()), "ratio_max": float(per_round.max())})
    return out


def targets(result):
    """The performance targets of the issue, each with the measured ratio (peer time / saltation
    time at matched accuracy; above 1 saltation is faster) and whether it is met."""
    rows = []

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
            what = f"K = {entry['K']}, {'sensitivities P = %d' % (5 + 3 * entry['K']) if entry['sens'] else 'forward'}, {level}: {peer}"
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


def thread_scaling(scaling, rows):
    if not scaling:
        return None
    one, two = np.array(scaling[1]), np.array(scaling[2])
    return {"what": f"saltation forward, K = 3, dt = 1e-3, probes 3, {rows} rows, 1 vs 2 threads, paired rounds",
            "seconds_1_thread": one.tolist(), "seconds_2_threads": two.tolist(),
            "speedup_median": float(np.median(one / two)), "speedup_min": float((one / two).min()),
            "speedup_max": float((one / two).max())}


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


def label(tool, setting):
    if tool == "saltation" or tool == "odeint_rk4":
        return f"dt={setting[0]:g} probes={setting[1]}" + (f" time_tol={setting[2]:g}" if len(setting) > 2 else "")
    return f"dt={setting:g}" if tool == "diffrax_rk4" else f"rtol={setting:.0e}"


def write_markdown(path, result):
    lines = ["# Work-precision against peers (terrain ball)", "",
             f"Machine: {result['machine']['cpu']}, {result['machine']['cores']} cores, one thread per tool "
             f"(saltation's SIMD lanes: {result['machine'].get('saltation_simd_lanes')}); "
             f"load average at start {result['machine']['load_avg_1_5_15'][0]:.1f}, at end "
             f"{result['load_avg_end'][0]:.1f} (the machine was shared with other developers' builds: "
             "timings are noisy; medians over paired rounds, spread min-max).",
             f"Rows: {result['rows']} of bench/terrain_batch.hpp per K, t_final 3, v_stop 0.25; "
             f"{result['rounds']} rounds. Command: `{result['command']}`.",
             f"Reference: {result['reference']['what']}.", ""]
    for K, check in result["reference"]["check"].items():
        lines.append(f"Reference check K = {K}: {check}")
    if result["thread_scaling"]:
        ts = result["thread_scaling"]
        lines += ["", f"Thread scaling ({ts['what']}): 2 threads / 1 thread speed-up {ts['speedup_median']:.2f} "
                      f"(median of paired rounds; {ts['speedup_min']:.2f}-{ts['speedup_max']:.2f})."]
    if result["disks"]:
        d = result["disks"]
        lines += ["", f"## Disks ({d['what']}; CPU {d['cpu_affinity']})", "",
                  "| tool | time median (rounds) | per system | peer / saltation | loss rel err | gradient rel err |",
                  "|---|---|---|---|---|---|"]
        for tool, t in d["tools"].items():
            lines.append(f"| {tool} | {t['median_s'] * 1e3:.1f} ms ({', '.join(f'{x * 1e3:.1f}' for x in t['seconds'])}) | "
                         f"{t['median_s'] / d['systems'] * 1e6:.2f} us | {t['over_saltation']:.2f} | {t['loss_rel_err']:.1e} | "
                         f"{t['grad_rel_err']:.1e} |")
        if d["missing"]:
            lines.append("Disk peers not measured: " + "; ".join(f"{t}: {why}" for t, why in d["missing"].items()))
    lines += ["", "Peers not measured: " + ("; ".join(f"{t}: {why}" for t, why in result["missing"].items()) or "none"), ""]
    lines += ["## Sensitivities over forward (issue 13, item 5; saltation, same dt and probes: medians of the "
              "times, and the median and spread of the rounds' ratios, each round's two runs back to back)", "",
              "| K | P | setting | forward | with sensitivities | ratio (rounds) |", "|---|---|---|---|---|---|"]
    for r in result["sensitivity_over_forward"]:
        lines.append(f"| {r['K']} | {r['P']} | {r['setting']} | {r['forward_s'] * 1e6:.1f} us | "
                     f"{r['sensitivities_s'] * 1e6:.1f} us | {r['ratio']:.2f} ({r['ratio_min']:.2f}-{r['ratio_max']:.2f}) |")
    lines += ["", "## Targets (issue 13, items 5 and 6): required and measured ratio (peer / saltation; threads: "
              "speed-up; item 5: sensitivities / forward, at most)", "",
              "| target | required | measured | met | note |", "|---|---|---|---|---|"]
    for t in result["targets"]:
        measured = f"{t['measured']:.2f}" if t["measured"] is not None else "-"
        lines.append(f"| {t['target']} | {t['required']:g} | {measured} | {'n/a' if t['met'] is None else 'yes' if t['met'] else 'NO'} | {t['note']} |")
    lines += ["", "## Matched accuracy (fastest point of each tool reaching the level; ratio = peer time / saltation time, "
              "above 1 means saltation is faster)", "",
              "| K | sens | level | tool | setting | time/traj | ratio |", "|---|---|---|---|---|---|---|"]
    ran = {p["tool"] for p in result["points"]}
    for entry in result["matched_accuracy"]:
        level = ", ".join(f"{k} <= {v:g}" for k, v in entry["level"].items())
        if not entry["tools"]:
            lines.append(f"| {entry['K']} | {entry['sens']} | {level} | (no tool reached it) | | | |")
        for tool, t in sorted(entry["tools"].items(), key=lambda kv: kv[1]["time_per_traj_s"]):
            ratio = f"{t['peer_over_saltation']:.2f}" if t["peer_over_saltation"] is not None else "saltation did not reach it"
            lines.append(f"| {entry['K']} | {entry['sens']} | {level} | {tool} | {t['setting']} | "
                         f"{t['time_per_traj_s'] * 1e6:.1f} us | {ratio} |")
    lines += ["", "## Every point", "",
              "| K | sens | tool | setting | time/traj median (min-max) | event t err | impact x,y err | qf err | dqf rel err | rows differing |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for p in result["points"]:
        t, e = p["time_per_traj_s"], p["errors"]
        dqf = f"{e['dqf_rel']:.1e}" if "dqf_rel" in e else "-"
        lines.append(f"| {p['K']} | {p['sens']} | {p['tool']} | {p['setting']} | {t['median'] * 1e6:.1f} us "
                     f"({t['min'] * 1e6:.1f}-{t['max'] * 1e6:.1f}) | {e['event_t']:.1e} | {e['event_xy']:.1e} | "
                     f"{e['qf']:.1e} | {dqf} | {len(p['rows_differing'])} |")
    open(path, "w").write("\n".join(lines) + "\n")


def plot(path, result, Ks):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(Ks), figsize=(6 * len(Ks), 9), squeeze=False)
    tools = list(dict.fromkeys(p["tool"] for p in result["points"]))
    colors = {tool: f"C{i}" for i, tool in enumerate(tools)}
    for col, K in enumerate(Ks):
        for row, sens in enumerate((False, True)):
            ax = axes[row][col]
            for tool in tools:
                # One curve per tool along its sweep, coarse to fine (fixed-step tools: probes 3 and
                # the default time_tol; the other saltation points are in the tables).
                pts = [p for p in result["points"] if p["tool"] == tool and p["K"] == K and p["sens"] == sens
                       and "probes=0" not in p["setting"] and "probes=7" not in p["setting"]
                       and "time_tol" not in p["setting"]]
                if not pts:
                    continue
                x = [p["time_per_traj_s"]["median"] * 1e6 for p in pts]
                y = [max(p["errors"]["dqf_rel"], 1e-17) if sens else
                     max(p["errors"]["event_t"], p["errors"]["event_xy"], 1e-17) for p in pts]
                ax.loglog(x, y, "-o", color=colors[tool], label=tool)
                bad = [(xi, yi) for xi, yi, p in zip(x, y, pts) if p["rows_differing"]]
                if bad:
                    ax.loglog(*zip(*bad), "x", color=colors[tool], markersize=12)
            ax.set_title(f"K = {K}, {'sensitivities (P = %d)' % (5 + 3 * K) if sens else 'forward'}")
            ax.set_xlabel("time per trajectory, one thread [us]")
            ax.set_ylabel("max rel. error of dqf/dtheta" if sens else "max error of impact times and positions")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
    fig.suptitle("Work-precision, terrain ball (x: event count differs from the reference in some row)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build-peers", help="build directory holding bench/peers/peer_*")
    ap.add_argument("--rows", type=int, default=64, help="rows of terrain_batch per K (default 64)")
    ap.add_argument("--rounds", type=int, default=3, help="paired timing rounds (default 3)")
    ap.add_argument("--K", type=int, nargs="+", default=[3, 24], choices=[3, 24])
    ap.add_argument("--tools", nargs="+", help="only these tools (saltation is always run)")
    ap.add_argument("--quick", action="store_true", help="a short sweep (a smoke test of the runner)")
    ap.add_argument("--scaling-rows", type=int, default=10000,
                    help="rows of the 1- vs 2-thread saltation timing (K = 3, dt = 1e-3, forward; 0: skip)")
    ap.add_argument("--disk-systems", type=int, default=10000,
                    help="systems of the disk comparison against JAX and Warp (disk_peers.py; 0: skip)")
    ap.add_argument("--out", default="bench/results/peers", help="output folder")
    args = ap.parse_args()

    # Every tool runs on the same one core (the processes and threads started from here inherit
    # it); only the 2-thread run of the scaling check gets both.
    all_cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {all_cpus[0]})

    peers, missing = find_peers(args.build)
    if "saltation" not in peers:
        sys.exit(missing["saltation"])
    if args.tools:
        peers = {t: p for t, p in peers.items() if t in args.tools or t == "saltation"}
    plan = sweeps(args.quick)
    start_machine = machine()
    reference, ref_check, thetas = {}, {}, {}
    for K in args.K:
        salt = peers["saltation"]
        rec = salt.record(salt.command(K, args.rows, (REFERENCE_DT, 3, REFERENCE_TIME_TOL), True, reps=1))
        reference[K] = rec["results"]
        start_machine["saltation_simd_lanes"] = rec.get("simd_lanes")
        thetas[K] = np.array(rec["theta"])
        if "cvodes" in peers:
            rows, _ = peers["cvodes"].run(K, thetas[K], 1e-13, True)
            differ, err = compare(reference[K], rows, True)
            ref_check[K] = (f"CVODES at rtol 1e-13 with sensitivities: {len(differ)} rows with another event count, "
                            f"event t {err['event_t']:.1e}, impact x,y {err['event_xy']:.1e}, qf {err['qf']:.1e}, "
                            f"dqf rel {err['dqf_rel']:.1e}")
        print(f"reference K = {K}: {sum(len(r['ev_t']) for r in reference[K])} events in {args.rows} rows", flush=True)

    points = [{"tool": tool, "K": K, "setting": setting, "sens": sens, "seconds": []}
              for tool, settings in plan.items() if tool in peers
              for K in args.K for setting, sens in settings]
    for p in points:  # compile / warm up once, outside the timed rounds
        peers[p["tool"]].prepare(p["K"], thetas[p["K"]], p["setting"], p["sens"])
    # Thread scaling of saltation itself, timed in the same rounds (its rows are not compared).
    scaling = {threads: [] for threads in (1, 2)} if args.scaling_rows > 0 else {}
    # The rotation moves whole units, a setting's forward and sensitivity runs together: rotated
    # point by point, every other round put one of a pair first and the other last, minutes apart.
    units = [list(unit) for _, unit in itertools.groupby(points, key=lambda p: (p["tool"], p["K"], p["setting"]))]
    for r in range(args.rounds):
        order = [p for unit in units[r % len(units):] + units[:r % len(units)] for p in unit]
        for p in order:
            rows, seconds = peers[p["tool"]].run(p["K"], thetas[p["K"]], p["setting"], p["sens"])
            p["seconds"].append(seconds)
            p["rows_out"] = rows
        for threads in sorted(scaling, reverse=r % 2 == 1):
            salt = peers["saltation"]
            cpus = ",".join(map(str, all_cpus[:threads]))
            rec = salt.record(["taskset", "-c", cpus] + salt.command(3, args.scaling_rows, (1e-3, 3), False, threads=threads))
            scaling[threads].append(rec["seconds"][0])
        print(f"round {r + 1}/{args.rounds} done", flush=True)

    disks = None
    if args.disk_systems > 0:
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "disk_peers.py"),
                            "--binary", os.path.join(args.build, "bench", "peers", "peer_disks"),
                            "--systems", str(args.disk_systems), "--rounds", str(args.rounds), "--out", f.name],
                           check=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
            disks = json.load(open(f.name))

    out_points = []
    for p in points:
        differ, errors = compare(reference[p["K"]], p["rows_out"], p["sens"])
        per_traj = np.array(p["seconds"]) / args.rows
        out_points.append({"tool": p["tool"], "K": p["K"], "sens": p["sens"], "P": 5 + 3 * p["K"],
                           "setting": label(p["tool"], p["setting"]),
                           "time_per_traj_s": {"median": float(np.median(per_traj)), "min": float(per_traj.min()),
                                               "max": float(per_traj.max()), "rounds": per_traj.tolist()},
                           "errors": errors, "rows_differing": differ})
    result = {
        "command": " ".join([os.path.relpath(sys.executable)] + sys.argv),
        "machine": start_machine, "load_avg_end": os.getloadavg(), "versions": versions(),
        "rows": args.rows, "rounds": args.rounds,
        "problem": "terrain ball, bench/terrain_batch.hpp rows, t_final 3, v_stop 0.25, event capacity 16, one thread",
        "reference": {"what": f"saltation at dt = 2^-17 = {REFERENCE_DT:g}, probes 3, time_tol {REFERENCE_TIME_TOL:g}, "
                              "with sensitivities", "check": {str(K): c for K, c in ref_check.items()}},
        "missing": missing,
        "thread_scaling": thread_scaling(scaling, args.scaling_rows),
        "thread_scaling_rows": args.scaling_rows,
        "disks": disks,
        "not_measured": {"scipy with sensitivities": "not implemented (forward only)",
                         "Boost.Odeint with sensitivities": "not implemented (forward only)"},
        "points": out_points,
        "matched_accuracy": [m for K in args.K for sens in (False, True) for m in matched_accuracy(out_points, K, sens)],
    }
    result["sensitivity_over_forward"] = sensitivity_over_forward(out_points)
    result["targets"] = targets(result)
    os.makedirs(args.out, exist_ok=True)
    json.dump(result, open(os.path.join(args.out, "work_precision.json"), "w"), indent=1)
    write_markdown(os.path.join(args.out, "work_precision.md"), result)
    plot(os.path.join(args.out, "work_precision.png"), result, args.K)
    print(open(os.path.join(args.out, "work_precision.md")).read())


if __name__ == "__main__":
    main()
