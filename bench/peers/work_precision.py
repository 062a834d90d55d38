"""The work-precision machinery of bench/peers/run.py, the same for every problem (bench/README.md, "Peers").

A comparison is a list of cases (the terrain ball at K = 3 and 24, or the model files), each tool's
sweep of settings, the accuracy levels and the reference. This module runs every tool on the same
rows of each case in paired, rotated timing rounds; checks each tool's event count and status per
row against the reference; measures the errors of event times, pre-event states, qf and dqf/dtheta;
finds each tool's fastest point at each level; and writes the tables and the plot.
"""
import itertools
import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field

import numpy as np

import python_peers
from problems import PROBLEMS


@dataclass
class Case:
    """One model the tools are compared on: its label in the tables, the arguments that select it
    in the C++ peers, its Python problem (problems.py) and its parameter count."""

    label: str
    peer_args: list
    problem: object
    P: int


@dataclass
class Comparison:
    """What differs between the terrain-ball and the model-file comparisons."""

    title: str
    cases: list
    sweeps: dict                 # case label -> tool -> [(setting, sens)]; a setting's two runs next to each other
    levels_forward: list         # [{"events": tol}]: event times and pre-event states within tol
    levels_sens: list            # [{"events": tol, "dqf": rel}]
    rows: int                    # rows timed per case
    record_rows: int             # rows checked against the reference (the first ones; 0: all)
    reference_setting: tuple     # saltation's (dt, probes, time_tol), with sensitivities
    reference_what: str
    event_states_label: str      # what ev_q holds, for the tables
    problem_text: str            # the problem in words
    checks: list = field(default_factory=list)  # (tool, setting, sens, what): run against the reference


class CppPeer:
    """A program of bench/peers (peer_common.hpp's arguments and record)."""

    def __init__(self, tool, binary, extra=()):
        self.tool, self.binary, self.extra = tool, binary, list(extra)

    def command(self, case, rows, setting, sens, reps=1, threads=1, record_rows=0):
        cmd = [self.binary] + self.extra + case.peer_args + ["--rows", str(rows), "--reps", str(reps)]
        if isinstance(setting, tuple):
            cmd += ["--dt", repr(setting[0]), "--probes", str(setting[1])]
            cmd += ["--time-tol", repr(setting[2])] if len(setting) > 2 else []
        else:
            rtol, atol = python_peers.tolerances(setting)
            cmd += ["--rtol", repr(rtol)] + (["--atol", repr(atol)] if atol != rtol else [])
        cmd += ["--threads", str(threads)] if threads != 1 else []
        cmd += ["--record-rows", str(record_rows)] if record_rows else []
        return cmd + (["--sens"] if sens else [])

    def record(self, cmd):
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            subprocess.run(cmd + ["--out", f.name], check=True, stdout=subprocess.DEVNULL)
            return json.load(open(f.name))

    def prepare(self, case, thetas, setting, sens):
        pass

    def run(self, case, thetas, setting, sens, kept=None):
        """The first `kept` rows' records (all when None) and the seconds per run over all rows."""
        rec = self.record(self.command(case, len(thetas), setting, sens, record_rows=kept or 0))
        return rec["results"], rec["seconds"][0]  # itself a mean over runs lasting ~0.1 s (timed_runs)


class PythonPeer:
    """A peer of python_peers.py, one instance per case (each compiles its own programs)."""

    def __init__(self, tool, make):
        self.tool, self.make, self.instances = tool, make, {}

    def _peer(self, case):
        if case.label not in self.instances:
            self.instances[case.label] = self.make(case.problem)
        return self.instances[case.label]

    def prepare(self, case, thetas, setting, sens):
        self._peer(case).prepare(thetas, setting, sens)

    def run(self, case, thetas, setting, sens, kept=None):
        return self._peer(case).run(thetas, setting, sens, kept)


def find_peers(build):
    """Every tool, or the reason it is missing (reported, never dropped)."""
    peers, missing = {}, {}
    # saltation_dopri5: saltation's adaptive method (options.method dopri5), swept over rtol as the
    # adaptive peers are; "saltation" is its default, RK4.
    for tool, name, extra in (("saltation", "peer_saltation", ()), ("saltation_dopri5", "peer_saltation",
                                                                    ("--method", "dopri5")),
                              ("odeint_rk4", "peer_odeint", ()), ("cvodes", "peer_cvodes", ())):
        path = os.path.join(build, "bench", "peers", name)
        if os.access(path, os.X_OK):
            peers[tool] = CppPeer(tool, path, extra)
        else:
            missing[tool] = f"not built: {path} missing (Boost headers / libsundials-dev not found by CMake?)"
    for tool, make in (("scipy_dop853", lambda pb: python_peers.Scipy(pb)),
                       ("diffrax_tsit5", lambda pb: python_peers.Diffrax(pb, adaptive=True)),
                       ("diffrax_rk4", lambda pb: python_peers.Diffrax(pb, adaptive=False))):
        try:
            peer = PythonPeer(tool, make)
            peer.make(PROBLEMS["terrain_ball"])  # imports its packages now: a failure is reported
            if tool.startswith("diffrax"):
                import diffrax  # noqa: F401
            peers[tool] = peer
        except Exception as e:  # any import failure is the peer's state, reported as such
            missing[tool] = f"not installed: {type(e).__name__}: {e}"
    return peers, missing


def compare(ref_rows, rows, sens):
    """Rows whose event count or status differ from the reference, and the errors over the others."""
    differ = [i for i, (a, b) in enumerate(zip(ref_rows, rows))
              if len(a["ev_t"]) != len(b["ev_t"]) or a["status"] != b["status"]]
    same = [i for i in range(len(ref_rows)) if i not in set(differ)]

    def max_abs(key):
        diffs = [abs(x - y) for i in same for x, y in zip(ref_rows[i][key], rows[i][key])]
        return max(diffs, default=0.0)

    errors = {"event_t": max_abs("ev_t"), "event_q": max_abs("ev_q"), "qf": max_abs("qf")}
    if sens:
        rel = [np.max(np.abs(np.subtract(rows[i]["dqf"], ref_rows[i]["dqf"]))) /
               max(np.max(np.abs(ref_rows[i]["dqf"])), 1e-300) for i in same]
        errors["dqf_rel"] = float(max(rel, default=0.0))
    return differ, errors


def describe(differ, errors):
    text = (f"{len(differ)} rows with another event count or status, event t {errors['event_t']:.1e}, "
            f"pre-event states {errors['event_q']:.1e}, qf {errors['qf']:.1e}")
    return text + (f", dqf rel {errors['dqf_rel']:.1e}" if "dqf_rel" in errors else "")


def meets(point, level):
    return (not point["rows_differing"] and max(point["errors"]["event_t"], point["errors"]["event_q"]) <= level["events"]
            and ("dqf" not in level or point["errors"]["dqf_rel"] <= level["dqf"]))


def matched_accuracy(points, comparison):
    """For each case, sens and level: the fastest point of each tool that reaches it, and peer time /
    saltation time."""
    out = []
    for case in comparison.cases:
        for sens in (False, True):
            for level in (comparison.levels_sens if sens else comparison.levels_forward):
                best = {}
                for p in points:
                    if p["case"] == case.label and p["sens"] == sens and meets(p, level):
                        if (p["tool"] not in best or
                                p["time_per_traj_s"]["median"] < best[p["tool"]]["time_per_traj_s"]["median"]):
                            best[p["tool"]] = p
                ours = best.get("saltation")
                entry = {"case": case.label, "sens": sens, "level": level, "tools": {}}
                for tool, p in best.items():
                    entry["tools"][tool] = {
                        "setting": p["setting"], "time_per_traj_s": p["time_per_traj_s"]["median"],
                        "peer_over_saltation": (p["time_per_traj_s"]["median"] / ours["time_per_traj_s"]["median"]
                                                if ours else None)}
                out.append(entry)
    return out


def sensitivity_over_forward(points):
    """saltation's time with sensitivities over its forward time at the same dt and probes, point by
    point, in the order of the sweep: the median over the rounds of each round's ratio (the two runs
    timed back to back; a ratio of medians taken minutes apart moved with the machine's load by
    10-20 % between neighbouring settings), with its spread."""
    time = {(p["case"], p["setting"], p["sens"]): p for p in points if p["tool"] == "saltation"}
    out = []
    for (case, setting, sens), p in time.items():
        if not sens or (case, setting, False) not in time:
            continue
        t, f = p["time_per_traj_s"], time[(case, setting, False)]["time_per_traj_s"]
        per_round = np.array(t["rounds"]) / np.array(f["rounds"])
        out.append({"case": case, "P": p["P"], "setting": setting, "forward_s": f["median"],
                    "sensitivities_s": t["median"], "ratio": float(np.median(per_round)),
                    "ratio_min": float(per_round.min()), "ratio_max": float(per_round.max())})
    return out


def label(tool, setting):
    if isinstance(setting, tuple):
        return f"dt={setting[0]:g} probes={setting[1]}" + (f" time_tol={setting[2]:g}" if len(setting) > 2 else "")
    if isinstance(setting, python_peers.Tolerance):
        return f"rtol={setting.rtol:.0e} atol={setting.atol:.0e}"
    return f"dt={setting:g}" if tool == "diffrax_rk4" else f"rtol={setting:.0e}"


def curve(tool, setting):
    """The plot's curve a point belongs to: its tool, and for adaptive tools its atol / rtol."""
    if isinstance(setting, python_peers.Tolerance):
        return f"{tool}, atol = {setting.atol / setting.rtol:.0e} rtol"
    return tool


def prepare_rows(comparison, peers):
    """Per case: the rows every tool solves (saltation's theta), the reference records of the first
    record_rows of them, and the checks of the reference against the independent tools."""
    salt = peers["saltation"]
    thetas, reference, checks, simd_lanes = {}, {}, {}, None
    for case in comparison.cases:
        # The rows, from the coarsest saltation point (cheap); the reference solves the checked ones.
        coarse = comparison.sweeps[case.label]["saltation"][0][0]
        thetas[case.label] = np.array(salt.record(salt.command(case, comparison.rows, coarse, False))["theta"])
        checked = comparison.record_rows or comparison.rows
        rec = salt.record(salt.command(case, checked, comparison.reference_setting, True))
        reference[case.label], simd_lanes = rec["results"], rec.get("simd_lanes")
        checks[case.label] = []
        for tool, setting, sens, what in comparison.checks:
            if tool not in peers:
                continue
            rows, _ = peers[tool].run(case, thetas[case.label][:checked], setting, sens)
            checks[case.label].append(f"{what}: {describe(*compare(reference[case.label], rows, sens))}")
        events = sum(len(r["ev_t"]) for r in reference[case.label])
        print(f"reference {case.label}: {events} events in {checked} rows; " + "; ".join(checks[case.label]), flush=True)
    return thetas, reference, checks, simd_lanes


def run_rounds(comparison, peers, thetas, rounds, each_round=None):
    """Every point of every tool's sweep, timed in paired rounds: each round runs every point once,
    in an order rotated each round; `each_round(r)` runs after round r (other timings taken in the
    same rounds). Returns the points with their per-round seconds and last records."""
    kept = comparison.record_rows or None
    points = [{"tool": tool, "case": case, "setting": setting, "sens": sens, "seconds": []}
              for tool in dict.fromkeys(t for case in comparison.cases for t in comparison.sweeps[case.label])
              if tool in peers for case in comparison.cases
              for setting, sens in comparison.sweeps[case.label].get(tool, [])]
    for p in points:  # compile / warm up once, outside the timed rounds
        peers[p["tool"]].prepare(p["case"], thetas[p["case"].label], p["setting"], p["sens"])
    # The rotation moves whole units, a setting's forward and sensitivity runs together: rotated
    # point by point, every other round put one of a pair first and the other last, minutes apart.
    units = [list(unit) for _, unit in
             itertools.groupby(points, key=lambda p: (p["tool"], p["case"].label, p["setting"]))]
    for r in range(rounds):
        order = [p for unit in units[r % len(units):] + units[:r % len(units)] for p in unit]
        for p in order:
            rows, seconds = peers[p["tool"]].run(p["case"], thetas[p["case"].label], p["setting"], p["sens"], kept)
            p["seconds"].append(seconds)
            p["rows_out"] = rows
        if each_round:
            each_round(r)
        print(f"round {r + 1}/{rounds} done", flush=True)
    return points


def summarize(points, reference, comparison):
    """Each point's errors against the reference and its time per trajectory over the rounds."""
    out = []
    for p in points:
        differ, errors = compare(reference[p["case"].label], p["rows_out"], p["sens"])
        per_traj = np.array(p["seconds"]) / comparison.rows
        out.append({"tool": p["tool"], "case": p["case"].label, "sens": p["sens"], "P": p["case"].P,
                    "setting": label(p["tool"], p["setting"]), "curve": curve(p["tool"], p["setting"]),
                    "time_per_traj_s": {"median": float(np.median(per_traj)), "min": float(per_traj.min()),
                                        "max": float(per_traj.max()), "rounds": per_traj.tolist()},
                    "errors": errors, "rows_differing": differ})
    return out


def level_text(level):
    return ", ".join(f"{k} <= {v:g}" for k, v in level.items())


def markdown_tables(result, comparison):
    """The tables every comparison writes: saltation's sensitivities over forward, matched accuracy
    and every point."""
    lines = ["## Sensitivities over forward (saltation, same dt and probes: medians of the times, and the "
             "median and spread of the rounds' ratios, each round's two runs back to back)", "",
             "| case | P | setting | forward | with sensitivities | ratio (rounds) |", "|---|---|---|---|---|---|"]
    for r in result["sensitivity_over_forward"]:
        lines.append(f"| {r['case']} | {r['P']} | {r['setting']} | {r['forward_s'] * 1e6:.1f} us | "
                     f"{r['sensitivities_s'] * 1e6:.1f} us | {r['ratio']:.2f} ({r['ratio_min']:.2f}-{r['ratio_max']:.2f}) |")
    lines += ["", "## Matched accuracy (fastest point of each tool reaching the level; ratio = peer time / saltation "
              "time, above 1 means saltation is faster)", "",
              "| case | sens | level | tool | setting | time/traj | ratio |", "|---|---|---|---|---|---|---|"]
    for entry in result["matched_accuracy"]:
        level = level_text(entry["level"])
        if not entry["tools"]:
            lines.append(f"| {entry['case']} | {entry['sens']} | {level} | (no tool reached it) | | | |")
        for tool, t in sorted(entry["tools"].items(), key=lambda kv: kv[1]["time_per_traj_s"]):
            ratio = f"{t['peer_over_saltation']:.2f}" if t["peer_over_saltation"] is not None else "saltation did not reach it"
            lines.append(f"| {entry['case']} | {entry['sens']} | {level} | {tool} | {t['setting']} | "
                         f"{t['time_per_traj_s'] * 1e6:.1f} us | {ratio} |")
    lines += ["", "## Every point", "",
              f"| case | sens | tool | setting | time/traj median (min-max) | event t err | {comparison.event_states_label} err "
              "| qf err | dqf rel err | rows differing |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for p in result["points"]:
        t, e = p["time_per_traj_s"], p["errors"]
        dqf = f"{e['dqf_rel']:.1e}" if "dqf_rel" in e else "-"
        lines.append(f"| {p['case']} | {p['sens']} | {p['tool']} | {p['setting']} | {t['median'] * 1e6:.1f} us "
                     f"({t['min'] * 1e6:.1f}-{t['max'] * 1e6:.1f}) | {e['event_t']:.1e} | {e['event_q']:.1e} | "
                     f"{e['qf']:.1e} | {dqf} | {len(p['rows_differing'])} |")
    return lines


def plot(path, result, comparison):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = comparison.cases
    fig, axes = plt.subplots(2, len(cases), figsize=(6 * len(cases), 9), squeeze=False)
    curves = list(dict.fromkeys(p["curve"] for p in result["points"]))
    tools = list(dict.fromkeys(p["tool"] for p in result["points"]))
    # A tool's colour; its default curve solid, another atol / rtol dashed.
    styles = {c: (f"C{tools.index(c.split(',')[0])}", "-o" if c in tools else "--s") for c in curves}
    for col, case in enumerate(cases):
        for row, sens in enumerate((False, True)):
            ax = axes[row][col]
            for name in curves:
                # One curve per tool (and atol / rtol) along its sweep, coarse to fine (fixed-step
                # tools: probes 3 and the default time_tol; the other saltation points are in the tables).
                pts = [p for p in result["points"] if p["curve"] == name and p["case"] == case.label and p["sens"] == sens
                       and "probes=0" not in p["setting"] and "probes=7" not in p["setting"]
                       and "time_tol" not in p["setting"]]
                if not pts:
                    continue
                x = [p["time_per_traj_s"]["median"] * 1e6 for p in pts]
                y = [max(p["errors"]["dqf_rel"], 1e-17) if sens else
                     max(p["errors"]["event_t"], p["errors"]["event_q"], 1e-17) for p in pts]
                color, style = styles[name]
                ax.loglog(x, y, style, color=color, label=name)
                bad = [(xi, yi) for xi, yi, p in zip(x, y, pts) if p["rows_differing"]]
                if bad:
                    ax.loglog(*zip(*bad), "x", color=color, markersize=12)
            ax.set_title(f"{case.label}, {'sensitivities (P = %d)' % case.P if sens else 'forward'}")
            ax.set_xlabel("time per trajectory, one thread [us]")
            ax.set_ylabel("max rel. error of dqf/dtheta" if sens else
                          f"max error of event times and {comparison.event_states_label}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
    fig.suptitle(f"Work-precision, {comparison.title} (x: event count differs from the reference in some row)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
