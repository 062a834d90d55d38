#!/usr/bin/env python3
"""Disk contact (seed 002) against JAX jit + vmap and NVIDIA Warp (CPU): loss and d loss / d log k
for many independent two-disk systems, on one core (bench/README.md, "Peers"; run.py calls it
under taskset).

The problem is peer_disks.cpp's: per system s two disks (R 0.5, m 1) at x = -+0.54 with speeds
+-v, v = 0.3 + 0.4 (s mod 997) / 997, stiffness k = 10 + 60 (s mod 101) / 101 (log k is the
parameter), linear spring k max(0, 2R - r) along the centre line, no damping; velocity Verlet,
dt 0.002, 80 frames of 5 steps (docs/disks.md); observed x positions from the same rollout at
k = 40; loss = mean over frames and disks of ((x - x_obs) / R)^2. Each tool computes its own
observations untimed, then the timed rounds run every tool once per round, in an order rotated
each round. Loss and gradient of each peer are compared with saltation's before its time counts.
"""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np

from python_peers import timed

RADIUS, DT, FRAMES, STRIDE = 0.5, 0.002, 80, 5


def speeds_and_log_stiffness(n):
    s = np.arange(n)
    return 0.3 + 0.4 * (s % 997) / 997.0, np.log(10.0 + 60.0 * (s % 101) / 101.0)


class Jax:
    """The seed's model in JAX, jit + vmap over systems; the derivative by forward mode (jvp, one
    tangent) or by the seed's reverse mode (value_and_grad)."""

    def __init__(self, mode):
        import jax

        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_platforms", "cpu")
        self.tool, self.mode = f"jax_{mode}", mode

    def prepare(self, speeds, log_k):
        import jax
        import jax.numpy as jnp

        def forces(x, k):
            d = x[0] - x[1]
            r = jnp.sqrt(d @ d)
            f = k * jnp.maximum(0.0, 2 * RADIUS - r) * d / r
            return jnp.stack([f, -f])

        def rollout(log_k, v):
            k = jnp.exp(log_k)
            x = jnp.array([[-0.54, 0.0], [0.54, 0.0]])
            vel = jnp.array([[1.0, 0.0], [-1.0, 0.0]]) * v
            state = (x, vel, forces(x, k))

            def step(state, _):
                x, vel, f = state
                vel = vel + 0.5 * DT * f
                x = x + DT * vel
                f = forces(x, k)
                return (x, vel + 0.5 * DT * f, f), None

            def frame(state, _):
                state, _ = jax.lax.scan(step, state, None, length=STRIDE)
                return state, state[0][:, 0]

            return jax.lax.scan(frame, state, None, length=FRAMES)[1]

        def loss(log_k, v, observed):
            return jnp.mean(((rollout(log_k, v) - observed) / RADIUS) ** 2)

        speeds = jnp.asarray(speeds)
        self.observed = jax.jit(jax.vmap(rollout, in_axes=(None, 0)))(jnp.log(40.0), speeds)
        if self.mode == "jvp":
            one = lambda lk, v, o: jax.jvp(lambda t: loss(t, v, o), (lk,), (jnp.ones_like(lk),))
        else:
            one = jax.value_and_grad(loss)
        self.fn = jax.jit(jax.vmap(one))
        self.speeds = speeds
        self.run(log_k)  # compiles

    def run(self, log_k):
        import jax

        (value, grad), seconds = timed(lambda: jax.block_until_ready(self.fn(log_k, self.speeds, self.observed)))
        return np.asarray(value), np.asarray(grad), seconds


class Warp:
    """The seed's model as a Warp kernel on the CPU device, one system per thread, with the forward
    tangent along log k written out (Warp's own autodiff is reverse mode through a tape)."""

    tool = "warp_cpu"

    def __init__(self):
        import warp as wp

        wp.config.quiet = True
        wp.init()
        self.wp = wp

    def prepare(self, speeds, log_k):
        wp = self.wp
        f64, vec = wp.float64, wp.vec2d
        R, dt, frames, stride = f64(RADIUS), f64(DT), FRAMES, STRIDE

        @wp.func
        def force(d: vec, k: f64):
            # Force on disk 0 (d = x0 - x1).
            r = wp.length(d)
            return k * wp.max(f64(0.0), f64(2.0) * R - r) * (d / r)

        @wp.func
        def force_tangent(d: vec, dd: vec, k: f64, dk: f64):
            # Its tangent along log k (dd: the tangent of d).
            r = wp.length(d)
            n = d / r
            delta = f64(2.0) * R - r
            tangent = vec(f64(0.0), f64(0.0))
            if delta > f64(0.0):
                tangent = dk * delta * n + k * (-wp.dot(n, dd) * n + delta * (dd - n * wp.dot(n, dd)) / r)
            return tangent

        @wp.kernel
        def loss_grad(speeds: wp.array(dtype=f64), log_k: wp.array(dtype=f64), observed: wp.array2d(dtype=f64),
                      loss: wp.array(dtype=f64), grad: wp.array(dtype=f64)):
            s = wp.tid()
            k = wp.exp(log_k[s])
            dk = k
            x0, x1 = vec(f64(-0.54), f64(0.0)), vec(f64(0.54), f64(0.0))
            v0, v1 = vec(speeds[s], f64(0.0)), vec(-speeds[s], f64(0.0))
            # Four distinct zeros: a tuple assignment of one vector would alias them in Warp.
            dx0, dx1 = vec(f64(0.0), f64(0.0)), vec(f64(0.0), f64(0.0))
            dv0, dv1 = vec(f64(0.0), f64(0.0)), vec(f64(0.0), f64(0.0))
            f = force(x0 - x1, k)
            df = force_tangent(x0 - x1, dx0 - dx1, k, dk)
            total, dtotal = f64(0.0), f64(0.0)
            for frame in range(frames):
                for _ in range(stride):
                    half = f64(0.5) * dt
                    v0 = v0 + half * f
                    v1 = v1 - half * f
                    dv0 = dv0 + half * df
                    dv1 = dv1 - half * df
                    x0 = x0 + dt * v0
                    x1 = x1 + dt * v1
                    dx0 = dx0 + dt * dv0
                    dx1 = dx1 + dt * dv1
                    f = force(x0 - x1, k)
                    df = force_tangent(x0 - x1, dx0 - dx1, k, dk)
                    v0 = v0 + half * f
                    v1 = v1 - half * f
                    dv0 = dv0 + half * df
                    dv1 = dv1 - half * df
                e0 = (x0[0] - observed[s, 2 * frame]) / R
                e1 = (x1[0] - observed[s, 2 * frame + 1]) / R
                total += e0 * e0 + e1 * e1
                dtotal += f64(2.0) * (e0 * dx0[0] + e1 * dx1[0]) / R
            count = f64(2 * frames)
            loss[s] = total / count
            grad[s] = dtotal / count

        self.kernel = loss_grad
        n = len(speeds)
        self.speeds = wp.array(speeds, dtype=f64, device="cpu")
        self.loss = wp.zeros(n, dtype=f64, device="cpu")
        self.grad = wp.zeros(n, dtype=f64, device="cpu")
        # Observations at k = 40 from the same Verlet map in numpy (the kernel keeps no trajectory).
        self.observed = wp.array(host_rollout_x(speeds, np.log(40.0)), dtype=f64, device="cpu")
        self.run(log_k)  # compiles the kernel

    def run(self, log_k):
        wp = self.wp
        lk = wp.array(log_k, dtype=wp.float64, device="cpu")

        def launch():
            wp.launch(self.kernel, dim=len(log_k), inputs=[self.speeds, lk, self.observed, self.loss, self.grad],
                      device="cpu")
            wp.synchronize_device("cpu")

        _, seconds = timed(launch)
        return self.loss.numpy().copy(), self.grad.numpy().copy(), seconds


def host_rollout_x(speeds, log_k):
    """x of both disks after each frame, [system][2 frame + disk], by numpy over all systems."""
    k = np.exp(log_k)
    x0, x1 = np.full_like(speeds, -0.54), np.full_like(speeds, 0.54)
    v0, v1 = speeds.copy(), -speeds

    def force(x0, x1):
        r = np.abs(x0 - x1)
        return k * np.maximum(0.0, 2 * RADIUS - r) * np.sign(x0 - x1)

    f = force(x0, x1)
    out = np.empty((len(speeds), 2 * FRAMES))
    for frame in range(FRAMES):
        for _ in range(STRIDE):
            v0, v1 = v0 + 0.5 * DT * f, v1 - 0.5 * DT * f
            x0, x1 = x0 + DT * v0, x1 + DT * v1
            f = force(x0, x1)
            v0, v1 = v0 + 0.5 * DT * f, v1 - 0.5 * DT * f
        out[:, 2 * frame], out[:, 2 * frame + 1] = x0, x1
    return out


def saltation_run(binary, n):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([binary, "--rows", str(n), "--reps", "1", "--out", f.name], check=True)
        rec = json.load(open(f.name))
    return np.array(rec["loss"]), np.array(rec["grad"]), rec["seconds"][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, help="peer_disks")
    ap.add_argument("--systems", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    speeds, log_k = speeds_and_log_stiffness(args.systems)
    tools, missing = {}, {}
    for name, make in (("jax_jvp", lambda: Jax("jvp")), ("jax_value_and_grad", lambda: Jax("value_and_grad")),
                       ("warp_cpu", Warp)):
        try:
            tool = make()
            tool.prepare(speeds, log_k)
            tools[name] = tool
        except Exception as e:  # the peer's state, reported as such
            missing[name] = f"not installed or failed to build: {type(e).__name__}: {e}"
    seconds = {name: [] for name in ["saltation", *tools]}
    results = {}
    names = list(seconds)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            if name == "saltation":
                loss, grad, sec = saltation_run(args.binary, args.systems)
            else:
                loss, grad, sec = tools[name].run(log_k)
            seconds[name].append(sec)
            results[name] = (loss, grad)
    ref_loss, ref_grad = results["saltation"]
    out = {"what": f"seed-002 disk pairs, {args.systems} systems, loss and d loss / d log k, one core",
           "systems": args.systems, "cpu_affinity": sorted(os.sched_getaffinity(0)), "missing": missing, "tools": {}}
    for name, secs in seconds.items():
        loss, grad = results[name]
        out["tools"][name] = {
            "seconds": secs, "median_s": float(np.median(secs)),
            "over_saltation": float(np.median(np.array(secs) / np.array(seconds["saltation"]))),
            "loss_rel_err": float(np.max(np.abs(loss - ref_loss) / np.abs(ref_loss))),
            "grad_rel_err": float(np.max(np.abs(grad - ref_grad)) / np.max(np.abs(ref_grad)))}
    json.dump(out, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
