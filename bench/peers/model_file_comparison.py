"""The model files' comparison for bench/peers/run.py (bench/README.md, "Peers", "Nonlinear models"):
the forced Duffing oscillator with a stop and the pendulum with quadratic drag of bench/models, on
the rows of their boxes (bench/file_models.hpp, fixed seed), t_final 20, event capacity 64,
against diffrax Tsit5 and CVODES, forward and with the sensitivities of qf to all parameters.

Reference: saltation at dt = 2^-16 (1.5e-5), probes 3, time_tol 1e-14, with sensitivities. The
flows are nonlinear, so unlike the terrain ball's the reference has a truncation error; RK4's
global error goes as dt^4 (the pendulum's drag term k omega |omega| has a kink in its Jacobian at
each turning point: there the sensitivities' error goes as about dt^2), so the same solve at
4 dt = 2^-14 bounds it from above, and every run prints the two against each other. Independent
checks, printed with every run: scipy DOP853 at rtol = atol = 1e-13 and with pure relative error
control (rtol 3e-14, atol 1e-20), and CVODES with sensitivities at rtol = atol = 1e-13 and at
rtol 1e-13, atol 1e-19.

The pendulum's late impacts come at angular speeds down to ~1e-8 rad/s, where an absolute error d
in phi moves the impact time by d / |omega|: with atol = rtol no adaptive tool reaches even 1e-7 in
event times (at rtol = atol = 1e-13, forward: diffrax Tsit5 1.4e-7, CVODES 5.5e-6), while a
fixed-step RK4, whose error scales with the amplitude, does. So the adaptive tools also sweep
atol = 1e-6 rtol on the pendulum (ATOL_OVER_RTOL), the setting a user who knows the problem's
scales would choose.
"""
from problems import PROBLEMS
from python_peers import Tolerance
from work_precision import Case, Comparison

REFERENCE = (2.0**-16, 3, 1e-14)
MODELS = ("duffing_stop", "pendulum_drag")
PARAMETERS = {"duffing_stop": 8, "pendulum_drag": 5}
# atol / rtol of the adaptive tools' sweeps, per model: the Duffing oscillator's states stay of
# order one (x = 1 at every impact), the pendulum's amplitude decays by orders of magnitude.
ATOL_OVER_RTOL = {"duffing_stop": (1.0,), "pendulum_drag": (1.0, 1e-6)}


def sweeps(model, quick):
    """Settings per tool: (setting, sens) pairs; saltation's are (dt, probes), the adaptive tools'
    rtol (atol = rtol) or a Tolerance."""
    # Factors 1.25-1.6 between neighbouring dt, about what a half decade of rtol is in the step of
    # a fifth-order method, so that no tool's fastest point at a level is much further from it.
    # Down to 5e-4: the Duffing oscillator's pre-event states reach 1e-11 only below dt = 1e-3.
    dts = [0.05, 0.04, 0.03, 0.02, 0.015, 0.01, 0.007, 0.005, 0.003, 0.002, 0.0015, 0.001, 0.0007, 0.0005]
    if model == "pendulum_drag":
        # The drag's kink at omega = 0 slows the sensitivities' convergence (dqf error ~ dt^2.3
        # measured, against dt^4 for the states): dqf <= 1e-9 needs dt ~ 2e-4, events <= 1e-11 5e-4.
        dts += [0.0003, 0.0002]
    rtols = [1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 3e-11, 1e-11, 3e-12, 1e-12, 3e-13, 1e-13]
    if quick:
        dts, rtols = [0.01, 0.002], [1e-8, 1e-11]
    # probes 3 (the default) and probes 0 (the guard at the step ends only) at every dt, each
    # setting's forward and sensitivity runs next to each other (timed back to back).
    saltation = [((dt, probes), sens) for probes in (3, 0) for dt in dts for sens in (False, True)]
    tolerances = [rtol if ratio == 1.0 else Tolerance(rtol, ratio * rtol)
                  for ratio in ATOL_OVER_RTOL[model] for rtol in rtols]
    adaptive = [(tol, sens) for sens in (False, True) for tol in tolerances]
    return {"saltation": saltation, "saltation_dopri5": adaptive, "cvodes": adaptive, "diffrax_tsit5": adaptive}


def comparison(args):
    models = args.model
    cases = [Case(name, ["--model", name], PROBLEMS[name], PARAMETERS[name]) for name in models]
    rows = args.rows or 1024
    record_rows = args.record_rows if args.record_rows is not None else 128
    return Comparison(
        title="nonlinear model files", cases=cases, sweeps={name: sweeps(name, args.quick) for name in models},
        # Event times and pre-event states within the level (and, with sensitivities, dqf/dtheta
        # two decades looser, relative, as for the terrain ball).
        levels_forward=[{"events": 1e-7}, {"events": 1e-9}, {"events": 1e-11}],
        levels_sens=[{"events": 1e-7, "dqf": 1e-5}, {"events": 1e-9, "dqf": 1e-7}, {"events": 1e-11, "dqf": 1e-9}],
        rows=rows, record_rows=record_rows, reference_setting=REFERENCE,
        reference_what=f"saltation at dt = 2^-16 = {REFERENCE[0]:g}, probes 3, time_tol 1e-14, with sensitivities, "
                       f"on the first {record_rows or rows} rows",
        event_states_label="pre-event state",
        checks=[("saltation", (2.0**-14, 3, 1e-14), True, "saltation at dt = 2^-14 (4x the reference's step)"),
                ("scipy_dop853", 1e-13, False, "scipy DOP853 at rtol = atol = 1e-13"),
                ("scipy_dop853", Tolerance(3e-14, 1e-20), False, "scipy DOP853 at rtol 3e-14, atol 1e-20"),
                ("cvodes", 1e-13, True, "CVODES at rtol = atol = 1e-13 with sensitivities"),
                ("cvodes", Tolerance(1e-13, 1e-19), True, "CVODES at rtol 1e-13, atol 1e-19 with sensitivities")],
        problem_text=f"{', '.join(models)} (bench/models), rows uniform in bench/file_models.hpp's boxes "
                     f"(fixed seed), {rows} timed per model, the first {record_rows or rows} checked; "
                     "t_final 20, event capacity 64, no settling, one thread")
