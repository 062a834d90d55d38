#!/usr/bin/env python3
"""Three-panel figure of the stiffness inference example.

usage: plot.py DIR OUT.png   (DIR holds the CSV files written by stiffness_inference --out DIR)
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

src, out = sys.argv[1], sys.argv[2]
traj = np.genfromtxt(os.path.join(src, "stiffness_inference_traj.csv"), delimiter=",", names=True)
it = np.genfromtxt(os.path.join(src, "stiffness_inference_iter.csv"), delimiter=",", names=True)
t = traj["time"]
k_fit = it["stiffness"][-1]

fig, axes = plt.subplots(1, 3, figsize=(12, 3.4), layout="constrained")
axes[0].plot(t, traj["initial_right_x"], "--", label=f"Initial k={it['stiffness'][0]:g}")
axes[0].plot(t, traj["fitted_right_x"], label=f"Fitted k={k_fit:.2f}")
axes[0].plot(t[::4], traj["observed_right_x"][::4], "o", ms=3, label="Observed")
axes[0].set(xlabel="Time", ylabel="Right disk x", title="Recover contact timing")
axes[0].legend(fontsize=8)
axes[1].semilogy(np.maximum(it["loss"], 1e-18), "o-")
axes[1].set(xlabel="Optimizer iteration", ylabel="Position loss", title="Fit convergence")
axes[2].plot(t, traj["validation_prediction_right_x"], label="Prediction")
axes[2].plot(t[::4], traj["validation_target_right_x"][::4], "o", ms=3, label="Held-out target")
axes[2].set(xlabel="Time", ylabel="Right disk x", title="Unused speed v=0.35")
axes[2].legend(fontsize=8)
tmp = out + ".tmp.png"
fig.savefig(tmp, dpi=110)
os.replace(tmp, out)
print(f"wrote {out}")
