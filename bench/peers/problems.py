"""The problems of bench/peers/run.py for its Python peers, the twins of problems.hpp.

Each problem writes its model's flow, guard and reset once over an array module `xp` (numpy for
scipy, jax.numpy for diffrax) and states what every tool follows: the end time, the event
capacity, whether an impact settles the trajectory, and which pre-event state components an event
record keeps (`event_states`). Records are those of the C++ peers (peer_common.hpp): per row
status, event times ev_t, pre-event states ev_q (event_states numbers per event), qf and (with
sensitivities) dqf, row-major N x P.
"""

FINISHED, EVENT_CAPACITY_STATUS, SETTLED = 0, 1, 2


class TerrainBall:
    """include/saltation/models/terrain_ball.hpp: x' = vx, y' = vy, vx' = -c vx, vy' = -g - c vy
    (x0 = 0, y0 = 1, g = 9.81); terrain h(x) = sum a_k exp(-(x-b_k)^2/(2 w_k^2)); guard y - h(x),
    falling; at impact v+ = -e (v.n) n + (1 - mu) (v.t) t, position unchanged. The problem is
    bench/terrain_batch.hpp's seed_options: t_final 3, the impact settles the ball (status 2, qf the
    post-impact state) when its normal speed |v.n| is below v_stop = 0.25, at most 16 events."""

    name, N, event_states = "terrain_ball", 4, 2
    t_final, event_capacity, v_stop = 3.0, 16, 0.25
    X0, Y0, GRAVITY = 0.0, 1.0, 9.81

    @staticmethod
    def terrain(xp, x, theta):
        """Height and slope of the terrain at x for one row theta."""
        a, b, w = theta[5::3], theta[6::3], theta[7::3]
        u = (x - b) / w
        bump = a * xp.exp(-0.5 * u * u)
        return xp.sum(bump), xp.sum(-bump * u / w)

    def initial_state(self, xp, theta):
        return xp.stack([self.X0 * xp.ones_like(theta[0]), self.Y0 * xp.ones_like(theta[0]), theta[0], theta[1]])

    def flow(self, xp, q, theta):
        c = theta[2]
        return xp.stack([q[2], q[3], -c * q[2], -self.GRAVITY - c * q[3]])

    def guard(self, xp, q, theta):
        return q[1] - self.terrain(xp, q[0], theta)[0]

    def impact(self, xp, q, theta):
        """The post-impact state, and whether the impact settles the ball (|v.n| < v_stop)."""
        _, dh = self.terrain(xp, q[0], theta)
        inv_norm = 1.0 / xp.sqrt(1.0 + dh * dh)
        nx, ny, tx, ty = -dh * inv_norm, inv_norm, inv_norm, dh * inv_norm
        vn = q[2] * nx + q[3] * ny
        vt = q[2] * tx + q[3] * ty
        an, at = -theta[3] * vn, (1.0 - theta[4]) * vt
        return xp.stack([q[0], q[1], an * nx + at * tx, an * ny + at * ty]), xp.abs(vn) < self.v_stop


class ModelFileProblem:
    """A model file of bench/models on the rows of its box (bench/file_models.hpp), the problem of
    bench_probe_cost: t_final 20, event capacity 64, no settling; every event keeps the whole
    pre-event state."""

    t_final, event_capacity = 20.0, 64

    @property
    def event_states(self):
        return self.N

    def impact(self, xp, q, theta):
        return self.reset(xp, q, theta), xp.zeros((), dtype=bool)


class DuffingStop(ModelFileProblem):
    """bench/models/duffing_stop.json: q = (x, v, tau), x' = v, v' = -delta v - alpha x - beta x^3 +
    gamma cos(omega tau), tau' = 1; guard stop - x (stop = 1), falling; v+ = -e v.
    theta = [x0, v0, delta, alpha, beta, gamma, omega, e]."""

    name, N = "duffing_stop", 3
    STOP = 1.0

    def initial_state(self, xp, theta):
        return xp.stack([theta[0], theta[1], 0.0 * theta[0]])

    def flow(self, xp, q, theta):
        delta, alpha, beta, gamma, omega = theta[2], theta[3], theta[4], theta[5], theta[6]
        x, v = q[0], q[1]
        dv = -delta * v - alpha * x - beta * (x * x * x) + gamma * xp.cos(omega * q[2])
        return xp.stack([v, dv, xp.ones_like(x)])

    def guard(self, xp, q, theta):
        return self.STOP - q[0]

    def reset(self, xp, q, theta):
        return xp.stack([q[0], -theta[7] * q[1], q[2]])


class PendulumDrag(ModelFileProblem):
    """bench/models/pendulum_drag.json: q = (phi, omega), phi' = omega, omega' = -g / L sin(phi) -
    k omega |omega| (g = 9.81); guard phi - wall (wall = 0), falling; omega+ = -e omega.
    theta = [phi0, omega0, L, k, e]."""

    name, N = "pendulum_drag", 2
    GRAVITY, WALL = 9.81, 0.0

    def initial_state(self, xp, theta):
        return xp.stack([theta[0], theta[1]])

    def flow(self, xp, q, theta):
        L, k = theta[2], theta[3]
        return xp.stack([q[1], -self.GRAVITY / L * xp.sin(q[0]) - k * q[1] * xp.abs(q[1])])

    def guard(self, xp, q, theta):
        return q[0] - self.WALL

    def reset(self, xp, q, theta):
        return xp.stack([q[0], -theta[4] * q[1]])


PROBLEMS = {p.name: p for p in (TerrainBall(), DuffingStop(), PendulumDrag())}
