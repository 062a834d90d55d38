#!/usr/bin/env python3
"""PNG plots of a study's summary (saltation sweep): python3 scripts/plot_sweep.py DIR

Writes into DIR, from DIR/summary.json:
  objective_<name>.png   the objective's histogram (pilot range), mean and 5-95 % quantiles marked
  gradients.png          dE[L]/dtheta per objective and design parameter, with 2 standard errors: the
                         estimator used, the pathwise and likelihood-ratio ones beside it, the
                         referee (gradient_check) and
                         whether it agrees, the share of samples near a discontinuity
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
    """Per objective and design parameter: the chosen estimate (its estimator in the label) with
    2 standard errors, the pathwise one beside it where they differ, the likelihood-ratio one for
    a design parameter of a sampling distribution, the referee's central
    difference when it ran (marked by whether it agrees), and the share of samples near a
    discontinuity of the objective (the diagnostic that says when the pathwise one is biased)."""
    bars = [(name, p, g) for name, o in summary["objectives"].items() for p, g in o.get("gradient", {}).items()]
    if not bars:
        return []
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(bars)), 4))
    x = np.arange(len(bars))
    means = [g["mean"] for _, _, g in bars]
    errors = [g["std_error"] for _, _, g in bars]
    ax.bar(x - 0.2, means, width=0.4, yerr=2 * np.array(errors), capsize=4, label="estimate (its estimator below)")
    pathwise = [(i, g["pathwise"]) for i, (_, _, g) in enumerate(bars)
                if "pathwise" in g and g["estimator"] != "pathwise" and g["discontinuity"]["fraction"] > 0]
    if pathwise:
        ax.errorbar([i + 0.2 for i, _ in pathwise], [p["mean"] for _, p in pathwise],
                    yerr=[2 * p["std_error"] for _, p in pathwise], fmt="o", color="gray", capsize=3,
                    label="pathwise (misses the boundary term)")
    ratios = [(i, g["likelihood_ratio"]) for i, (_, _, g) in enumerate(bars) if "likelihood_ratio" in g]
    if ratios:
        ax.errorbar([i + 0.3 for i, _ in ratios], [r["mean"] for _, r in ratios],
                    yerr=[2 * r["std_error"] for _, r in ratios], fmt="s", color="purple", capsize=3,
                    label="likelihood ratio (a distribution's design)")
    for agrees, color, label in ((True, "green", "referee agrees"), (False, "red", "referee disagrees")):
        refs = [(i, g["referee"]) for i, (_, _, g) in enumerate(bars)
                if "referee" in g and g["referee"]["agrees"] == agrees]
        if refs:
            ax.errorbar([i for i, _ in refs], [r["mean"] for _, r in refs], yerr=[2 * r["std_error"] for _, r in refs],
                        fmt="D", color=color, capsize=3, label=f"{label} (central difference)")
    labels = []
    for name, p, g in bars:
        near = g.get("discontinuity", {}).get("fraction")
        labels.append(f"{name}\nd/d{p} ({g['estimator']})" + (f"\nnear jump: {100 * near:.2g} %" if near is not None else ""))
    ax.set_xticks(x, labels, fontsize=7)
    ax.axhline(0, color="k", lw=0.5)
    ax.set_title("dE[L]/dθ ± 2 s.e.; 'near jump': share of samples where L is discontinuous in θ", fontsize=9)
    ax.legend(fontsize=7)
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
