"""The contact-sim method's design loop: choose the launch velocity so that the ball's second impact lands at
x = target, with optax's Adam. The landing objective is JAX; the trajectory comes from the served
solver through tesseract_jax.apply_tesseract, so one jax.grad spans both (the solver's part is
one /vector_jacobian_product call per step, from its forward sensitivities).

    python examples/python/landing_adam.py --url http://127.0.0.1:8000 [--steps 60]
"""

import jax
import jax.numpy as jnp
import optax
from tesseract_jax import apply_tesseract

from served_terrain import argument_parser, connect, terrain


def main():
    parser = argument_parser(__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--target", type=float, default=2.0, help="x of the second impact")
    parser.add_argument("--launch", type=float, nargs=2, default=(1.2, 0.3), metavar=("VX0", "VY0"))
    args = parser.parse_args()
    solver = connect(args.url)
    inputs = terrain()

    def landing_miss(launch):
        out = apply_tesseract(solver, {**inputs, "launch_velocity": launch[None, :]})
        second_impact_x = out["impact_points"][0, 1, 0]
        return (second_impact_x - args.target) ** 2, second_impact_x

    value_and_grad = jax.jit(jax.value_and_grad(landing_miss, has_aux=True))
    optimizer = optax.adam(args.learning_rate)
    launch = jnp.asarray(args.launch, dtype=jnp.float64)
    state = optimizer.init(launch)
    misses = []
    for step in range(args.steps):
        (miss, x2), grad = value_and_grad(launch)
        misses.append(miss)
        print(f"step {step:3d}  launch ({launch[0]:.5f}, {launch[1]:.5f})  second impact x = {x2:.6f}  "
              f"miss^2 = {miss:.3e}  grad ({grad[0]:+.3e}, {grad[1]:+.3e})")
        updates, state = optimizer.update(grad, state)
        launch = optax.apply_updates(launch, updates)
    (miss, x2), _ = value_and_grad(launch)
    print(f"result: launch velocity ({launch[0]:.6f}, {launch[1]:.6f}) puts the second impact at x = {x2:.6f} "
          f"(target {args.target}); miss^2 {misses[0]:.3e} -> {miss:.3e}")


if __name__ == "__main__":
    main()
