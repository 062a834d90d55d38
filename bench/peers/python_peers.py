"""The Python peers of bench/peers/run.py: scipy solve_ivp and diffrax, on any problem of problems.py.

Each integrates the problem's flow, locates its falling guard and applies its reset, restarting
after every impact until t_final, the event capacity or a settling impact, and returns the record
the C++ peers write (peer_common.hpp): per row status, event times ev_t, pre-event states ev_q,
qf and (with sensitivities) dqf, row-major N x P.
"""
import time
from dataclasses import dataclass

import numpy as np

from problems import EVENT_CAPACITY_STATUS, FINISHED, SETTLED


@dataclass(frozen=True)
class Tolerance:
    """An adaptive tool's setting where atol differs from rtol (a bare number means atol = rtol)."""

    rtol: float
    atol: float


def tolerances(setting):
    return (setting.rtol, setting.atol) if isinstance(setting, Tolerance) else (setting, setting)


def timed(call):
    """call()'s result and its seconds per run: one run, and when that is shorter than 0.1 s the
    mean of as many more as last about 0.1 s (on a loaded machine one short run times the
    scheduler, not the tool)."""
    start = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - start
    if seconds < 0.1:
        runs = min(100, int(np.ceil(0.1 / max(seconds, 1e-6))))
        start = time.perf_counter()
        for _ in range(runs):
            call()
        seconds = (time.perf_counter() - start) / runs
    return result, seconds


class Scipy:
    """solve_ivp with a terminal falling event on the guard, restarted after each impact (forward
    only); the setting is rtol = atol, or a Tolerance."""

    tool = "scipy_dop853"

    def __init__(self, problem, method="DOP853"):
        from scipy.integrate import solve_ivp

        self.solve_ivp = solve_ivp
        self.problem = problem
        self.method = method

    def solve_row(self, theta, setting):
        rtol, atol = tolerances(setting)
        pb = self.problem
        fun = lambda t, q: pb.flow(np, q, theta)
        event = lambda t, q: pb.guard(np, q, theta)
        event.terminal, event.direction = True, -1
        t, q = 0.0, pb.initial_state(np, theta)
        row = {"status": FINISHED, "ev_t": [], "ev_q": [], "dqf": []}
        while True:
            sol = self.solve_ivp(fun, (t, pb.t_final), q, method=self.method, rtol=rtol, atol=atol, events=event)
            if sol.status != 1:
                row["qf"] = sol.y[:, -1].tolist()
                return row
            t, q_minus = sol.t_events[0][0], sol.y_events[0][0]
            if len(row["ev_t"]) >= pb.event_capacity:
                row.update(status=EVENT_CAPACITY_STATUS, qf=q_minus.tolist())
                return row
            row["ev_t"].append(t)
            row["ev_q"].extend(q_minus[:pb.event_states].tolist())
            q, settles = pb.impact(np, q_minus, theta)
            if settles:
                row.update(status=SETTLED, qf=q.tolist())
                return row

    def prepare(self, thetas, setting, sens):
        pass

    def run(self, thetas, setting, sens, kept=None):
        rows, seconds = timed(lambda: [self.solve_row(theta, setting) for theta in thetas])
        return rows[:kept], seconds


class Diffrax:
    """diffrax under jit + vmap over the rows: one diffeqsolve per flight with a falling Event
    (root found by optimistix Newton on the dense output), restarted in a lax.while_loop until
    t_final, settling or the event capacity. `adaptive`: Tsit5 with a PID controller at the
    setting's rtol and atol (tolerances); else RK4 at the constant step dt = setting.
    Sensitivities by jax.jacfwd of qf (diffrax.ForwardMode), through the root finder's implicit
    derivative."""

    def __init__(self, problem, adaptive):
        import jax

        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_platforms", "cpu")
        self.problem = problem
        self.adaptive = adaptive
        self.tool = "diffrax_tsit5" if adaptive else "diffrax_rk4"
        self.compiled = {}

    @staticmethod
    def _rk4():
        """The classical RK4 (diffrax ships none) with diffrax's cubic Hermite dense output."""
        import diffrax
        from diffrax._local_interpolation import ThirdOrderHermitePolynomialInterpolation

        class RK4(diffrax.AbstractERK):
            tableau = diffrax.ButcherTableau(
                a_lower=(np.array([0.5]), np.array([0.0, 0.5]), np.array([0.0, 0.0, 1.0])),
                b_sol=np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]),
                b_error=np.zeros(4),
                c=np.array([0.5, 0.5, 1.0]),
            )
            interpolation_cls = ThirdOrderHermitePolynomialInterpolation.from_k

            def order(self, terms):
                return 4

        return RK4()

    def _build(self, sens):
        import diffrax
        import jax
        import jax.numpy as jnp
        import optimistix as optx

        pb = self.problem
        term = diffrax.ODETerm(lambda t, q, theta: pb.flow(jnp, q, theta))
        event = diffrax.Event(
            lambda t, y, args, **kwargs: pb.guard(jnp, y, args),
            root_finder=optx.Newton(rtol=1e-14, atol=1e-14),
            direction=False,
        )
        adaptive = self.adaptive
        rk4 = None if adaptive else self._rk4()

        def flight(t0, q0, theta, setting):
            if adaptive:
                solver, controller, dt0 = diffrax.Tsit5(), diffrax.PIDController(rtol=setting[0], atol=setting[1]), None
            else:
                solver, controller, dt0 = rk4, diffrax.ConstantStepSize(), setting
            sol = diffrax.diffeqsolve(
                term, solver, t0, pb.t_final, dt0, q0, args=theta, event=event, stepsize_controller=controller,
                saveat=diffrax.SaveAt(t1=True), max_steps=1_000_000, adjoint=diffrax.ForwardMode(), throw=False,
            )
            return sol.ts[-1], sol.ys[-1], sol.event_mask

        def trajectory(theta, setting):
            C, S = pb.event_capacity, pb.event_states
            init = (jnp.asarray(0.0), pb.initial_state(jnp, theta), jnp.asarray(0), jnp.asarray(-1),
                    jnp.zeros(C), jnp.zeros((C, S)))

            def running(carry):
                return carry[3] < 0

            def body(carry):
                t, q, n, status, ev_t, ev_q = carry
                t_e, q_e, hit = flight(t, q, theta, setting)
                q_plus, settles = pb.impact(jnp, q_e, theta)
                full = n >= C
                slot = jnp.minimum(n, C - 1)
                record = hit & ~full
                ev_t = jnp.where(record, ev_t.at[slot].set(t_e), ev_t)
                ev_q = jnp.where(record, ev_q.at[slot].set(q_e[:S]), ev_q)
                settled = record & settles
                status = jnp.where(~hit, FINISHED,
                                   jnp.where(full, EVENT_CAPACITY_STATUS, jnp.where(settled, SETTLED, -1)))
                q_next = jnp.where(hit & ~full, q_plus, q_e)
                return t_e, q_next, n + record.astype(n.dtype), status, ev_t, ev_q

            t, q, n, status, ev_t, ev_q = jax.lax.while_loop(running, body, init)
            return q, (status, n, ev_t, ev_q)

        if sens:
            def with_jacobian(theta, setting):
                def with_state(th):
                    q, aux = trajectory(th, setting)
                    return q, (q, aux)
                jac, (q, aux) = jax.jacfwd(with_state, has_aux=True)(theta)
                return q, aux, jac
            return jax.jit(jax.vmap(with_jacobian, in_axes=(0, None)))
        return jax.jit(jax.vmap(lambda theta, setting: trajectory(theta, setting) + (None,), in_axes=(0, None)))

    def _call(self, thetas, setting, sens):
        import jax

        key = (thetas.shape, sens)
        if key not in self.compiled:
            self.compiled[key] = self._build(sens)
        # Adaptive: the pair (rtol, atol), so that every tolerance runs the one compiled program.
        argument = tolerances(setting) if self.adaptive else setting
        return jax.block_until_ready(self.compiled[key](thetas, argument))

    def prepare(self, thetas, setting, sens):
        # Compiles, once per row count and sens: the tolerance or step is an argument of the one
        # program, so a further setting would only add an untimed run.
        if (thetas.shape, sens) not in self.compiled:
            self._call(thetas, setting, sens)

    def run(self, thetas, setting, sens, kept=None):
        """The records of the first `kept` rows (all when None) and the seconds per run over all."""
        (q, (status, n, ev_t, ev_q), jac), seconds = timed(lambda: self._call(thetas, setting, sens))
        q, status, n, ev_t, ev_q = map(np.asarray, (q, status, n, ev_t, ev_q))
        rows = []
        for i in range(len(thetas) if kept is None else min(kept, len(thetas))):
            k = int(n[i])
            rows.append({"status": int(status[i]), "ev_t": ev_t[i, :k].tolist(), "ev_q": ev_q[i, :k].ravel().tolist(),
                         "qf": q[i].tolist(), "dqf": np.asarray(jac[i]).ravel().tolist() if sens else []})
        return rows, seconds
