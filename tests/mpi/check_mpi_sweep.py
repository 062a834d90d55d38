#!/usr/bin/env python3
"""`saltation sweep --mpi` against single-process runs (docs/scale-out.md), on the CPU backend.

  bitwise   a study with design gradients and Sobol indices (four blocks) under mpirun -n 1 to 5 (the
            fifth rank has no block and idles): summary.json and partial.json equal to the
            single-process run's, provenance aside (wall time, rank count); the per-sample index
            covers every sample once, and the ranks' arrays concatenated are the single process's
  failure   rank 1 cannot move its per-sample array into place (a folder holds its name): exit 3,
            rank 0 reports "saltation: I/O error: rank 1: ..." (the one error format), no summary, partial or index; an invalid
            argument on every rank: exit 2, each rank reported
  robust    robust design under 2 ranks: optimization.json and summary.json equal to one process's

Usage: check_mpi_sweep.py CASE --cli SALTATION --mpiexec MPIEXEC --work DIR
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

# Every run of the same study must give the same bits; these provenance keys say how it ran.
RUN_KEYS = ("wall_seconds", "mpi_ranks")


def run(cmd, env, expect=0):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if expect is not None and p.returncode != expect:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}, expected {expect}\n"
                 f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def load_without_run_keys(path):
    with open(path) as f:
        j = json.load(f)
    for key in RUN_KEYS:
        j["provenance"].pop(key, None)
    return j


def npy_data(path):
    """The data bytes of an NPY file (format 1.0: magic, version, 2-byte header length, header)."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:6] != b"\x93NUMPY" or raw[6] != 1:
        sys.exit(f"FAIL: {path} is not an NPY 1.0 file")
    return raw[10 + int.from_bytes(raw[8:10], "little"):]


def same(a_path, b_path):
    a, b = load_without_run_keys(a_path), load_without_run_keys(b_path)
    if a != b:
        diff = [k for k in set(a) | set(b) if a.get(k) != b.get(k)]
        sys.exit(f"FAIL: {b_path} differs from {a_path} in {sorted(diff)}")


class Runner:
    def __init__(self, args):
        self.cli, self.work = args.cli, args.work
        self.env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")
        self.mpiexec = [args.mpiexec]
        version = subprocess.run([args.mpiexec, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if "Open MPI" in version.stdout or "OpenRTE" in version.stdout:
            # More ranks than this machine's cores, unbound: CI runs on 2 cores.
            self.mpiexec += ["--oversubscribe", "--bind-to", "none"]
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)

    def path(self, *parts):
        return os.path.join(self.work, *parts)

    def study(self, name, study):
        p = self.path(name + ".json")
        with open(p, "w") as f:
            json.dump(study, f)
        return p

    def single(self, args, expect=0):
        return run([self.cli, "sweep", *args, "--backend", "cpu", "--threads", "1"], self.env, expect)

    def ranks(self, n, args, expect=0):
        return run(self.mpiexec + ["-n", str(n), self.cli, "sweep", *args, "--backend", "cpu", "--threads", "1", "--mpi"],
                   self.env, expect)


# Bouncing ball: h0 and v0 sampled (Sobol factors), e designed (gradients). 13,000 samples are four
# blocks of the reduction tree (4096 each, the last short), so four ranks each run one.
def sobol_study():
    return {"model": "bouncing_ball", "config": {"g": 9.81},
            "options": {"t_final": 1.5, "dt": 0.002, "event_capacity": 16},
            "parameters": {"h0": {"dist": "uniform", "low": 0.5, "high": 1.5},
                           "v0": {"dist": "normal", "mean": 0.0, "sigma": 0.5}, "e": {"design": 0.8}},
            "objectives": [{"name": "t2", "event_time": 1}, {"name": "h_end", "final_state": "h"},
                           {"name": "bounces", "event_count": True}],
            "samples": 13000, "seed": 5, "sobol": True, "sobol_resamples": 20}


def check_bitwise(r):
    study = r.study("sobol", sobol_study())
    r.single([study, "--out", r.path("single"), "--per-sample"])
    arrays = sorted(f[len("samples_"):] for f in os.listdir(r.path("single")) if f.endswith(".npy"))
    for n in (1, 2, 3, 4, 5):
        out = r.path(f"ranks{n}")
        p = r.ranks(n, [study, "--out", out, "--per-sample"])
        for name in ("summary.json", "partial.json"):
            same(r.path("single", name), os.path.join(out, name))
        with open(os.path.join(out, "summary.json")) as f:
            if json.load(f)["provenance"]["mpi_ranks"] != n:
                sys.exit(f"FAIL: {out}/summary.json does not record {n} ranks")
        with open(os.path.join(out, "samples_index.json")) as f:
            index = json.load(f)
        covered = 0
        for shard in index["shards"]:
            if shard["first_sample"] != covered:
                sys.exit(f"FAIL: {out}/samples_index.json: rank {shard['rank']} starts at {shard['first_sample']}")
            covered += shard["samples"]
            for name in shard["files"]:
                if not os.path.isfile(os.path.join(out, name)):
                    sys.exit(f"FAIL: {out}/{name} is in the index but not on disk")
        if covered != 13000 or len(index["shards"]) != min(n, 4):
            sys.exit(f"FAIL: {out}/samples_index.json: {len(index['shards'])} shards cover {covered} samples")
        for name in arrays:
            ranks = b"".join(npy_data(os.path.join(out, f"samples_rank{s['rank']}_{name}")) for s in index["shards"])
            if ranks != npy_data(r.path("single", "samples_" + name)):
                sys.exit(f"FAIL: the ranks' {name} concatenated differ from the single process's")
        leftovers = [e for e in os.listdir(out) if ".tmp" in e]
        if leftovers:
            sys.exit(f"FAIL: temporaries left in {out}: {leftovers}")
        print(f"{n} rank(s): summary.json and partial.json equal to one process's; {p.stdout.splitlines()[0]}")


def check_failure(r):
    study = r.study("sobol", sobol_study())
    out = r.path("failing")
    blocked = os.path.join(out, "samples_rank1_theta.npy")
    os.makedirs(os.path.join(blocked, "occupied"))  # a folder where rank 1's array must go
    p = r.ranks(2, [study, "--out", out, "--per-sample"], expect=3)
    want = "saltation: I/O error: rank 1: " + blocked
    if want not in p.stderr:
        sys.exit(f"FAIL: the failing rank is not reported as '{want}...'; stderr:\n{p.stderr}")
    for name in ("summary.json", "partial.json", "samples_index.json"):
        if os.path.exists(os.path.join(out, name)):
            sys.exit(f"FAIL: {name} was written although rank 1 failed")
    print("rank 1 unable to write: exit 3,", want)

    p = r.ranks(2, [study, "--out", r.path("invalid"), "--memory-budget", "12"], expect=2)
    for rank in (0, 1):
        if f"saltation: invalid input: rank {rank}: memory-budget" not in p.stderr:
            sys.exit(f"FAIL: rank {rank}'s invalid input is not reported; stderr:\n{p.stderr}")
    if os.path.exists(r.path("invalid", "summary.json")):
        sys.exit("FAIL: summary.json was written although every rank failed")
    print("invalid input on every rank: exit 2, each rank reported")


# Robust design of the bouncing ball (tests/sweep/test_robust_design.cpp's problem, coarser steps):
# 5000 samples are two blocks, one per rank.
def robust_study():
    return {"model": "bouncing_ball", "config": {"g": 9.81},
            "options": {"t_final": 2.5, "dt": 0.002, "event_capacity": 16},
            "parameters": {"h0": {"design": 1.0}, "v0": 0.0, "e": {"dist": "uniform", "low": 0.6, "high": 0.8}},
            "objectives": [{"name": "miss", "landing": {"event": 1, "state": "v", "target": -5.0}},
                           {"name": "bounces", "event_count": True}],
            "optimize": {"objective": "miss", "lambda": 0.5, "bounds": {"h0": [0.5, 4.0]}, "max_iterations": 8},
            "samples": 5000, "seed": 11}


def check_robust(r):
    study = r.study("robust", robust_study())
    r.single([study, "--out", r.path("single"), "--optimize"])
    p = r.ranks(2, [study, "--out", r.path("ranks2"), "--optimize"])
    for name in ("optimization.json", "summary.json"):
        same(r.path("single", name), r.path("ranks2", name))
    with open(r.path("ranks2", "optimization.json")) as f:
        o = json.load(f)
    print(f"robust design on 2 ranks: {o['outcome']} after {o['iterations']} iterations, {o['evaluations']} sweeps, "
          f"h0 = {o['final']['design']['h0']}; optimization.json and summary.json equal to one process's")
    if o["evaluations"] < 3:
        sys.exit("FAIL: the optimiser took fewer than 3 sweeps: nothing was spread over the ranks")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=["bitwise", "failure", "robust"])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    r = Runner(args)
    {"bitwise": check_bitwise, "failure": check_failure, "robust": check_robust}[args.case](r)
    shutil.rmtree(r.work, ignore_errors=True)


if __name__ == "__main__":
    main()
