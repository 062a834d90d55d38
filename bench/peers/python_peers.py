"""The Python peers of bench/peers/run.py: scipy solve_ivp and diffrax on the terrain ball.

Each implements include/saltation/models/terrain_ball.hpp exactly: x' = vx, y' = vy,
vx' = -c vx, vy' = -g - c vy (x0 = 0, y0 = 1, g = 9.81); terrain h(x) = sum a_k exp(-(x-b_k)^2/(2 w_k^2));
guard y - h(x), falling; at impact v+ = -e (v.n) n + (1 - mu) (v.t) t, position unchanged. The
problem is bench/terrain_batch.hpp's seed_options: t_final 3, the impact settles the ball (status 2,
qf the post-impact state) when its normal speed |v.n| is below v_stop = 0.25, at most 16 events.
Each peer returns the record the C++ peers write (peer_common.hpp): per row status, event times
and pre-impact positions, qf and (with sensitivities) dqf, row-major N x P.
"""
import time

import numpy as np

X0, Y0, GRAVITY = 0.0, 1.0, 9.81
T_FINAL, V_STOP, EVENT_CAPACITY = 3.0, 0.25, 16
FINISHED, EVENT_CAPACITY_STATUS, SETTLED = 0, 1, 2


def terrain(xp, x, theta):
    """Height and slope of the terrain at x for one row theta (xp: numpy or jax.numpy)."""
    a, b, w = theta[5::3], theta[6::3], theta[7::3]
    u = (x - b) / w
    bump = a * xp.exp(-0.5 * u * u)
    return xp.sum(bump), xp.sum(-bump * u / w)


def flow(xp, q, theta):
    c = theta[2]
    return xp.stack([q[2], q[3], -c * q[2], -GRAVITY - c * q[3]])


def guard(xp, q, theta):
    return q[1] - terrain(xp, q[0], theta)[0]


def impact(xp, q, theta):
    """Post-impact state and the normal speed |v.n| of the pre-impact state q."""
    _, dh = terrain(xp, q[0], theta)
    inv_norm = 1.0 / xp.sqrt(1.0 + dh * dh)
    nx, ny, tx, ty = -dh * inv_norm, inv_norm, inv_norm, dh * inv_norm
    vn = q[2] * nx + q[3] * ny
    vt = q[2] * tx + q[3] * ty
    an, at = -theta[3] * vn, (1.0 - theta[4]) * vt
    return xp.stack([q[0], q[1], an * nx + at * tx, an * ny + at * ty]), xp.abs(vn)


def initial_state(xp, theta):
    return xp.stack([X0 * xp.ones_like(theta[0]), Y0 * xp.ones_like(theta[0]), theta[0], theta[1]])


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
    """solve_ivp with a terminal falling event on the guard, restarted after each impact (forward only)."""

    tool = "scipy_dop853"

    def __init__(self, method="DOP853"):
        from scipy.integrate import solve_ivp

        self.solve_ivp = solve_ivp
        self.method = method

    def solve_row(self, theta, rtol):
        fun = lambda t, q: flow(np, q, theta)
        event = lambda t, q: guard(np, q, theta)
        event.terminal, event.direction = True, -1
        t, q = 0.0, initial_state(np, theta)
        row = {"status": FINISHED, "ev_t": [], "ev_x": [], "ev_y": [], "dqf": []}
        while True:
            sol = self.solve_ivp(fun, (t, T_FINAL), q, method=self.method, rtol=rtol, atol=rtol, events=event)
            if sol.status != 1:
                row["qf"] = sol.y[:, -1].tolist()
                return row
            t, q_minus = sol.t_events[0][0], sol.y_events[0][0]
            if len(row["ev_t"]) >= EVENT_CAPACITY:
                row.update(status=EVENT_CAPACITY_STATUS, qf=q_minus.tolist())
                return row
            row["ev_t"].append(t)
            row["ev_x"].append(q_minus[0])
            row["ev_y"].append(q_minus[1])
            q, speed = impact(np, q_minus, theta)
            if speed < V_STOP:
                row.update(status=SETTLED, qf=q.tolist())
                return row

    def prepare(self, thetas, setting, sens):
        pass

    def run(self, thetas, setting, sens):
        return timed(lambda: [self.solve_row(theta, setting) for theta in thetas])


class Diffrax:
    """diffrax under jit + vmap over the rows: one diffeqsolve per flight with a falling Event
    (root found by optimistix Newton on the dense output), restarted in a lax.while_loop until
    t_final, settling or the event capacity. `adaptive`: Tsit5 with a PID controller at rtol = atol
    = setting; else RK4 at the constant step dt = setting. Sensitivities by jax.jacfwd of qf
    (diffrax.ForwardMode), through the root finder's implicit derivative."""

    def __init__(self, adaptive):
        import jax

        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_platforms", "cpu")
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

        term = diffrax.ODETerm(lambda t, q, theta: flow(jnp, q, theta))
        event = diffrax.Event(
            lambda t, y, args, **kwargs: guard(jnp, y, args),
            root_finder=optx.Newton(rtol=1e-14, atol=1e-14),
            direction=False,
        )
        adaptive = self.adaptive
        rk4 = None if adaptive else self._rk4()

        def flight(t0, q0, theta, setting):
            if adaptive:
                solver, controller, dt0 = diffrax.Tsit5(), diffrax.PIDController(rtol=setting, atol=setting), None
            else:
                solver, controller, dt0 = rk4, diffrax.ConstantStepSize(), setting
            sol = diffrax.diffeqsolve(
                term, solver, t0, T_FINAL, dt0, q0, args=theta, event=event, stepsize_controller=controller,
                saveat=diffrax.SaveAt(t1=True), max_steps=1_000_000, adjoint=diffrax.ForwardMode(), throw=False,
            )
            return sol.ts[-1], sol.ys[-1], sol.event_mask

        def trajectory(theta, setting):
            C = EVENT_CAPACITY
            init = (jnp.asarray(0.0), initial_state(jnp, theta), jnp.asarray(0), jnp.asarray(-1),
                    jnp.zeros(C), jnp.zeros(C), jnp.zeros(C))

            def running(carry):
                return carry[3] < 0

            def body(carry):
                t, q, n, status, ev_t, ev_x, ev_y = carry
                t_e, q_e, hit = flight(t, q, theta, setting)
                q_plus, speed = impact(jnp, q_e, theta)
                full = n >= C
                slot = jnp.minimum(n, C - 1)
                record = hit & ~full
                ev_t = jnp.where(record, ev_t.at[slot].set(t_e), ev_t)
                ev_x = jnp.where(record, ev_x.at[slot].set(q_e[0]), ev_x)
                ev_y = jnp.where(record, ev_y.at[slot].set(q_e[1]), ev_y)
                settled = record & (speed < V_STOP)
                status = jnp.where(~hit, FINISHED,
                                   jnp.where(full, EVENT_CAPACITY_STATUS, jnp.where(settled, SETTLED, -1)))
                q_next = jnp.where(hit & ~full, q_plus, q_e)
                return t_e, q_next, n + record.astype(n.dtype), status, ev_t, ev_x, ev_y

            t, q, n, status, ev_t, ev_x, ev_y = jax.lax.while_loop(running, body, init)
            return q, (status, n, ev_t, ev_x, ev_y)

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
        return jax.block_until_ready(self.compiled[key](thetas, setting))

    def prepare(self, thetas, setting, sens):
        self._call(thetas, setting, sens)  # compiles: the tolerance or step is an argument, compiled once

    def run(self, thetas, setting, sens):
        (q, (status, n, ev_t, ev_x, ev_y), jac), seconds = timed(lambda: self._call(thetas, setting, sens))
        q, status, n, ev_t, ev_x, ev_y = map(np.asarray, (q, status, n, ev_t, ev_x, ev_y))
        rows = []
        for i in range(len(thetas)):
            k = int(n[i])
            rows.append({"status": int(status[i]), "ev_t": ev_t[i, :k].tolist(), "ev_x": ev_x[i, :k].tolist(),
                         "ev_y": ev_y[i, :k].tolist(), "qf": q[i].tolist(),
                         "dqf": np.asarray(jac[i]).ravel().tolist() if sens else []})
        return rows, seconds
