#!/usr/bin/env python3
"""PNG plots of a study's summary (saltation sweep): python3 scripts/plot_sweep.py DIR

Writes into DIR, from DIR/summary.json:
  objective_<name>.png   the objective's histogram (pilot range), mean and 5-95 % quantiles marked
  gradients.png          E[dL/dtheta] per objective and design parameter, with 2 standard errors
  sobol.png              first-order and total Sobol indices with their intervals (sobol studies)
  outcomes.png           how many samples ended with each status and each event count
Needs matplotlib and numpy (scripts/setup installs them into .venv).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def objective_histograms(summary, out):
    written = []
    for name, o in summary["objectives"].items():
        h = o.get("histogram")
        if not h:
            continue
        counts = np.array(h["counts"], dtype=float)
        edges = np.linspace(h["low"], h["high"], len(counts) + 1)
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.stairs(counts, edges, fill=True, alpha=0.6)
        ax.axvline(o["mean"], color="k", label=f"mean {o['mean']:.5g} ± {o['std_error']:.2g}")
        for q in ("q05", "q95"):
            if q in o:
                ax.axvline(o[q], color="gray", ls="--")
        ax.set_xlabel(name)
        ax.set_ylabel("samples")
        ax.set_title(f"{name}: {o['n']} samples ({o['n_undefined']} undefined); dashed: 5 and 95 %")
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = os.path.join(out, f"objective_{name}.png")
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    return written


def gradients(summary, out):
    bars = [(f"{name}\nd/d{p}", g["mean"], g["std_error"])
            for name, o in summary["objectives"].items() for p, g in o.get("gradient", {}).items()]
    if not bars:
        return []
    labels, means, errors = zip(*bars)
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(bars)), 3.5))
    ax.bar(range(len(bars)), means, yerr=2 * np.array(errors), capsize=4)
    ax.set_xticks(range(len(bars)), labels, fontsize=8)
    ax.axhline(0, color="k", lw=0.5)
    fraction = summary.get("topology_change_fraction", 0.0)
    ax.set_title(f"pathwise E[dL/dθ] ± 2 s.e.\nthe event count differs from the nominal one in {100 * fraction:.1f} % "
                 "of samples", fontsize=9)
    fig.tight_layout()
    path = os.path.join(out, "gradients.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return [path]


def sobol(summary, out):
    studies = [(name, o["sobol"]) for name, o in summary["objectives"].items() if "sobol" in o]
    if not studies:
        return []
    fig, axes = plt.subplots(1, len(studies), figsize=(4 * len(studies), 3.5), squeeze=False)
    for ax, (name, indices) in zip(axes[0], studies):
        params = list(indices)
        x = np.arange(len(params))
        for shift, key, label in ((-0.2, "S1", "first order"), (0.2, "ST", "total")):
            ax.bar(x + shift, [indices[p][key] for p in params], width=0.4, label=label,
                   yerr=[indices[p][key + "_conf"] for p in params], capsize=3)
        ax.set_xticks(x, params)
        ax.set_ylim(min(0, ax.get_ylim()[0]), max(1.05, ax.get_ylim()[1]))
        ax.set_title(f"Sobol indices of {name} (95 % intervals)", fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out, "sobol.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return [path]


def outcomes(summary, out):
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    statuses = summary["statuses"]
    left.bar(list(statuses), list(statuses.values()))
    left.set_title("statuses")
    left.tick_params(axis="x", labelsize=8)
    counts = {int(k): v for k, v in summary["event_counts"].items()}
    right.bar(list(counts), list(counts.values()))
    right.axvline(summary["nominal"]["n_events"], color="k", ls="--", label="nominal trajectory")
    right.set_xlabel("events")
    right.set_title("event counts")
    right.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out, "outcomes.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return [path]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    for path in objective_histograms(summary, out) + gradients(summary, out) + sobol(summary, out) + outcomes(summary, out):
        print(path)


if __name__ == "__main__":
    main()
