#!/usr/bin/env python3
"""Build a `saltation disks` fit config from a rollout's output (observations = its positions).

usage: make_fit_config.py ROLLOUT_CONFIG.json ROLLOUT_OUTPUT.json FIT_CONFIG.json [initial_log_stiffness]
"""
import json
import math
import sys

cfg = json.load(open(sys.argv[1]))
out = json.load(open(sys.argv[2]))
cfg["mode"] = "fit"
cfg.pop("tangents", None)
cfg["observed"] = [system["positions"] for system in out["systems"]]
cfg["loss_scale"] = 0.5
cfg["log_stiffness"] = float(sys.argv[4]) if len(sys.argv) > 4 else math.log(10.0)
cfg["fit"] = {"lower": math.log(5.0), "upper": math.log(100.0), "max_iterations": 30, "history": True}
with open(sys.argv[3] + ".tmp", "w") as f:
    json.dump(cfg, f)
import os

os.replace(sys.argv[3] + ".tmp", sys.argv[3])
