#!/usr/bin/env python3
"""saltation against scipy's solve_ivp on the same terrain-ball trajectories.

scipy integrates each trajectory adaptively (DOP853, rtol 1e-10, atol 1e-12) with a terminal,
falling-direction event on y - h(x), applies the same reset and restarts, as seed 003's Python does;
saltation solves the same batch through its CLI (RK4, dt = 1e-3). Prints the agreement of event
times and final states, and the time per trajectory of each (scipy: one process, one core; saltation:
the solve time its CLI reports, with --threads 1).

usage: bench/compare_scipy.py BUILD_DIR [N]     (needs numpy and scipy: pip install numpy scipy)
"""
import json
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy.integrate import solve_ivp

K = 3
G = 9.81
T_FINAL = 3.0
V_STOP = 0.25


def batch(n, seed=7):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        head = [rng.uniform(1, 2), rng.uniform(0, 1), rng.uniform(0.08, 0.12), rng.uniform(0.65, 0.75), rng.uniform(0.15, 0.25)]
        bumps = []
        for _ in range(K):
            bumps += [rng.uniform(0.05, 0.2), rng.uniform(0.0, 4.5), rng.uniform(0.1, 0.5)]
        rows.append(head + bumps)
    return rows


def scipy_trajectory(th):
    vx0, vy0, c, e, mu = th[:5]
    a, b, w = np.array(th[5::3]), np.array(th[6::3]), np.array(th[7::3])

    def h(x):
        return float(np.sum(a * np.exp(-0.5 * ((x - b) / w) ** 2)))

    def dh(x):
        u = (x - b) / w
        return float(np.sum(-a * np.exp(-0.5 * u * u) * u / w))

    def flow(t, q):
        return [q[2], q[3], -c * q[2], -G - c * q[3]]

    def ground(t, q):
        return q[1] - h(q[0])

    ground.terminal = True
    ground.direction = -1.0
    t, q, events = 0.0, np.array([0.0, 1.0, vx0, vy0]), []
    while t < T_FINAL:
        sol = solve_ivp(flow, (t, T_FINAL), q, method="DOP853", events=ground, rtol=1e-10, atol=1e-12, dense_output=False)
        if sol.status != 1:  # reached T_FINAL
            return events, sol.y[:, -1], "finished"
        te, qm = float(sol.t_events[0][0]), sol.y_events[0][0]
        s = dh(qm[0])
        nrm = np.sqrt(1 + s * s)
        n, tang = np.array([-s, 1]) / nrm, np.array([1, s]) / nrm
        v = qm[2:]
        vn, vt = v @ n, v @ tang
        events.append((te, qm.copy()))
        vp = -e * vn * n + (1 - mu) * vt * tang
        qp = np.array([qm[0], qm[1], vp[0], vp[1]])
        if abs(vn) < V_STOP:  # saltation's v_stop: normal impact speed (|g_q . f-| / |g_q| = |v.n|)
            return events, qp, "settled"
        # Restart just after the event, the way seed 003's Python does (its 1e-12 nudge).
        t, q = te, qp + np.array([0.0, 1e-12, 0.0, 0.0])
    return events, q, "finished"


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    rows = batch(n)
    request = {"model": "terrain_ball", "config": {"x0": 0.0, "y0": 1.0, "g": G, "bumps": K},
               "options": {"t_final": T_FINAL, "dt": 1e-3, "v_stop": V_STOP, "event_capacity": 32, "threads": 1},
               "backend": "cpu", "theta": rows}
    with tempfile.TemporaryDirectory() as d:
        with open(f"{d}/in.json", "w") as f:
            json.dump(request, f)
        start = time.perf_counter()
        subprocess.run([f"{build}/saltation", "solve", f"{d}/in.json", "--out", f"{d}/out.json"], check=True)
        cli_seconds = time.perf_counter() - start
        out = json.load(open(f"{d}/out.json"))
    start = time.perf_counter()
    ref = [scipy_trajectory(th) for th in rows]
    scipy_seconds = time.perf_counter() - start
    worst_t = worst_q = 0.0
    mismatched = 0
    for traj, (events, qf, status) in zip(out["trajectories"], ref):
        if len(traj["events"]) != len(events) or traj["status_name"] != status:
            mismatched += 1
            continue
        for ev, (te, qm) in zip(traj["events"], events):
            worst_t = max(worst_t, abs(ev["t"] - te))
            worst_q = max(worst_q, float(np.max(np.abs(np.array(ev["q"]) - qm))))
        worst_q = max(worst_q, float(np.max(np.abs(np.array(traj["qf"]) - qf))))
    events = sum(len(e) for e, _, _ in ref)
    print(f"terrain ball K = {K}, {n} trajectories, {events / n:.2f} events per trajectory")
    print(f"  event count or status differs on {mismatched} of {n} trajectories")
    print(f"  largest |t_e difference| {worst_t:.3e}, largest state difference (events and qf) {worst_q:.3e}")
    print(f"  scipy solve_ivp DOP853 rtol 1e-10 with events: {1e6 * scipy_seconds / n:.0f} us per trajectory")
    print(f"  saltation CLI (whole process incl. JSON, 1 thread): {1e6 * cli_seconds / n:.0f} us per trajectory")


if __name__ == "__main__":
    main()
