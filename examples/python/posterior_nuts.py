"""The contact-sim method's inference loop: the posterior over restitution e and friction mu given observed
impact points, sampled by NumPyro's NUTS with every gradient through the served solver
(tesseract_jax.apply_tesseract: /apply and /vector_jacobian_product per leapfrog step).

The observations are made here: three launches over the example terrain solved at the true
(e, mu), their first `--impacts` impact points (x and y) perturbed by Gaussian noise of `--noise`.

    python examples/python/posterior_nuts.py --url http://127.0.0.1:8000 [--samples 100 --warmup 100]
"""

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS
from tesseract_jax import apply_tesseract

from served_terrain import argument_parser, connect, terrain

LAUNCHES = jnp.array([[1.5, 0.5], [0.9, 1.0], [1.2, 0.3]])


def main():
    parser = argument_parser(__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--max-tree-depth", type=int, default=4)
    parser.add_argument("--true", type=float, nargs=2, default=(0.8, 0.15), metavar=("E", "MU"))
    parser.add_argument("--noise", type=float, default=0.01, help="sd of the observation noise")
    parser.add_argument("--impacts", type=int, default=3, help="impacts observed per launch")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    solver = connect(args.url)
    inputs = {**terrain(), "launch_velocity": LAUNCHES, "event_capacity": args.impacts}

    def impact_points(e, mu):
        out = apply_tesseract(solver, {**inputs, "restitution": e, "friction": mu})
        return out["impact_points"]  # (launches, impacts, 2); the capacity makes every slot an impact

    e_true, mu_true = args.true
    noise = np.random.default_rng(args.seed).normal(0.0, args.noise, (len(LAUNCHES), args.impacts, 2))
    observed = impact_points(jnp.float64(e_true), jnp.float64(mu_true)) + noise

    def model(observed):
        e = numpyro.sample("e", dist.Uniform(0.5, 1.0))
        mu = numpyro.sample("mu", dist.Uniform(0.0, 0.5))
        numpyro.sample("obs", dist.Normal(impact_points(e, mu), args.noise), obs=observed)

    mcmc = MCMC(NUTS(model, max_tree_depth=args.max_tree_depth), num_warmup=args.warmup,
                num_samples=args.samples, progress_bar=False)
    mcmc.run(jax.random.PRNGKey(args.seed), observed)
    samples = mcmc.get_samples()
    divergences = int(mcmc.get_extra_fields()["diverging"].sum())
    for name, truth in (("e", e_true), ("mu", mu_true)):
        draws = np.asarray(samples[name])
        low, high = np.quantile(draws, [0.05, 0.95])
        print(f"{name:2s}: posterior mean {draws.mean():.5f}, sd {draws.std():.5f}, 90% interval "
              f"[{low:.5f}, {high:.5f}], true {truth}")
    print(f"result: {args.samples} NUTS samples after {args.warmup} warm-up, {divergences} divergent; "
          f"observations: {len(LAUNCHES)} launches x {args.impacts} impact points, noise sd {args.noise}")


if __name__ == "__main__":
    main()
