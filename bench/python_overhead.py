"""What the Python and JAX paths add to the library's own solve.

For batch sizes n, the same solve of the terrain ball (three bumps, dt = 1e-3, t_final = 3,
event capacity 16) is timed four ways, interleaved, each repeated:
  solve       saltation.solve(...)                           vs the library's solve inside it
  solve+sens  saltation.solve(..., sensitivities=True)       likewise
  jax         jax.jit(f)(theta), f = saltation.jax.solver    vs the library's solve inside it
  jax grad    jax.jit(jax.value_and_grad(loss))(theta)       vs the library's solve (with sensitivities) inside it
The library's time is the solve_seconds it reports for that very call (the C++ solve alone: no
argument parsing, no array conversion, no JAX dispatch; saltation.jax.native_solves() gives it for
the JAX paths, whose solve runs as an XLA FFI target). Overhead = median(wall / library) - 1.

  .venv/bin/python bench/python_overhead.py [--sizes 1 10000] [--repeats 5] [--threads 0] [--out FILE.json]
"""
import argparse
import json
import platform
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import saltation
import saltation.jax as sj

jax.config.update("jax_enable_x64", True)

CONFIG = {"bumps": 3, "x0": 0.0, "y0": 1.0}


def batch(n, seed=0):
    """n launches over one terrain: theta = [vx0, vy0, c, e, mu, (a, b, w) x 3]."""
    rng = np.random.default_rng(seed)
    base = np.array([1.0, 0.5, 0.05, 0.8, 0.1, 0.3, 1.0, 0.3, 0.2, 2.0, 0.4, 0.25, 3.2, 0.3])
    rows = np.tile(base, (n, 1))
    rows[:, 0] = rng.uniform(0.8, 1.2, n)
    rows[:, 1] = rng.uniform(0.3, 0.7, n)
    return rows


class LibraryClock:
    """Records the library's solve_seconds of every native solve made while it is active: those of
    the Results saltation.solve makes, and those of the FFI solves of saltation.jax."""

    def __init__(self):
        self.seconds = []
        self._solve = saltation._api.solve

    def __enter__(self):
        def timed(*args, **kwargs):
            result = self._solve(*args, **kwargs)
            self.seconds.append(result.solve_seconds)
            return result
        saltation._api.solve = timed
        self._jax_solves = sj.native_solves()[0]
        return self

    def __exit__(self, *exc):
        saltation._api.solve = self._solve
        count, seconds = sj.native_solves()
        if count > self._jax_solves:
            self.seconds += [seconds] * (count - self._jax_solves)


def measure(paths, repeats):
    """{name: [wall / library]} and {name: [wall]} over `repeats` interleaved rounds."""
    ratios = {name: [] for name in paths}
    walls = {name: [] for name in paths}
    for _ in range(repeats):
        for name, run in paths.items():
            with LibraryClock() as clock:
                start = time.perf_counter()
                run()
                wall = time.perf_counter() - start
            assert len(clock.seconds) == 1, (name, clock.seconds)  # one native solve per call
            ratios[name].append(wall / clock.seconds[0])
            walls[name].append(wall)
    return ratios, walls


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="OpenMP threads (0: OpenMP's default)")
    parser.add_argument("--out", help="write the numbers as JSON here")
    args = parser.parse_args()
    options = {"t_final": 3.0, "dt": 1e-3, "event_capacity": 16, "threads": args.threads}
    f = sj.solver("terrain_ball", CONFIG, outputs=("qf", "event_times", "event_states"), **options)

    def loss(theta):
        out = f(theta)
        return jnp.sum((out["event_states"][:, 1, 0] - 2.0) ** 2)

    forward = jax.jit(f)
    gradient = jax.jit(jax.value_and_grad(loss))
    report = {"machine": f"{platform.node()} ({platform.processor() or platform.machine()}), "
                         f"{__import__('os').cpu_count()} logical CPUs",
              "problem": "terrain_ball bumps=3, t_final=3, dt=1e-3, event_capacity=16", "threads": args.threads,
              "repeats": args.repeats, "sizes": {}}
    for n in args.sizes:
        theta = batch(n)
        theta_jax = jnp.asarray(theta)
        jax.block_until_ready(forward(theta_jax))  # compile once, outside the timings
        jax.block_until_ready(gradient(theta_jax))
        paths = {
            # Through saltation._api, the module attribute the clock replaces (saltation.solve is the same function).
            "solve": lambda: saltation._api.solve("terrain_ball", theta, config=CONFIG, **options),
            "solve+sens": lambda: saltation._api.solve("terrain_ball", theta, config=CONFIG, sensitivities=True,
                                                       **options),
            "jax": lambda: jax.block_until_ready(forward(theta_jax)),
            "jax grad": lambda: jax.block_until_ready(gradient(theta_jax)),
        }
        ratios, walls = measure(paths, args.repeats)
        rows = {}
        for name in paths:
            wall = statistics.median(walls[name])
            overhead = statistics.median(ratios[name]) - 1.0
            library = wall / (1.0 + overhead)
            rows[name] = {"wall_s": wall, "library_s": library, "overhead": overhead,
                          "overhead_s": wall - library}
            print(f"n={n:6d}  {name:10s}  wall {wall * 1e3:10.3f} ms  library {library * 1e3:10.3f} ms  "
                  f"overhead {100 * overhead:7.2f} %  ({(wall - library) * 1e6:9.1f} us)")
        report["sizes"][str(n)] = rows
    if args.out:
        with open(args.out, "w") as out:
            json.dump(report, out, indent=1)


if __name__ == "__main__":
    main()
