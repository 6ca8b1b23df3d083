#!/usr/bin/env python3
"""JAX (XLA) port of baselines/lebm_bench.py: one LEBM training iteration as
one compiled function, for speed comparisons with cmd/bench-lebm (GoMLX on
XLA) and the eager PyTorch baseline.

What it is
----------
The model, losses and settings of lebm_bench.py (see its docstring and
docs/lebm.md), written in JAX:

  generator    z as a 1×1 NHWC image → transposed convolutions with biases
               (each one input-dilated convolution with the spatially flipped
               [k, k, cin, out] kernel, as nets.convTNative builds it for
               GoMLX on XLA), LeakyReLU 0.2 between them, tanh after the last
  prior        f = MLP nz→200→200→1, LeakyReLU 0.1; U(z) = f(z) + ‖z‖²/2
  init         the same distributions as lebm_bench.py (Xavier-normal kernels
               and weights, convolution biases uniform ±1/√(out·k²), zero MLP
               biases), drawn with numpy; parameter counts equal lebm_bench.py's
  Langevin     z ← z − (s²/2)∇U(z) + s ξ as jax.lax.scan over the noise
               [steps, B, nz] (drawn up front inside the compiled step), by
               default fully unrolled (--unroll 0), as losses.Langevin builds
               the GoMLX graph; --unroll N keeps a loop of N steps per trip.
               Posterior 0.1 × 20 (40 for cifar10), CD prior 0.4 × 60,
               generation 0.2 × 500, test posterior 0.1 × 100.
               On XLA CPU (jaxlib 0.7.1) a rolled loop is several times slower
               whenever the generator is inside it (mnist, batch 64: 2.1 s
               per training iteration rolled, 0.33 s unrolled): in the while
               body the input-gradient convolutions read the loop-invariant
               kernel in the 01oi layout, without the transposing copy that
               the unrolled graph gets, and miss the fast convolution path.
               Unrolling costs compile time (the "compile s" columns).
  iteration    posterior chain; L_G = mean ‖x − G(z_post)‖²; prior loss at
               z_post by ed (t 0.25, M 16, w 1), cd (negatives from the prior
               chain) or sm (fisher: ½ mean ‖∇U − sg(∇U_post)‖²); one gradient
               of L_G + L_prior; two Adams (generator lr 1e-4, prior 5e-5,
               betas (0.5, 0.999), ε 1e-8, torch.optim.Adam's formula); the
               finiteness flags of lebm_bench.py and, with --guard full (the
               default), the old parameters and moments kept by jnp.where when
               one fails (as lebm.TrainStepGraph does)
  state        parameters, Adam moments and step counts and the PRNG key are
               ONE pytree, the donated first argument of the compiled step
               (jax.jit(..., donate_argnums=0)), so they stay on the device;
               the five metrics and seven flags are read back to the host
               every iteration (one synchronisation, as Model.TrainStep)

Everything is float32. The Markov chains are not differentiated through:
their results, cd's negatives and sm's posterior score are computed before
jax.value_and_grad (lebm_bench.py detaches them). Random numbers are JAX's
(threefry), drawn in the same shapes as lebm_bench.py's, so the metrics
differ from its run to run; --check feeds both the same numbers.

Timing: each compiled function is built ahead of time (jit(...).lower(...)
.compile(), the "compile s" columns), called once to warm up, then --iters
(--prior-iters) times, each call timed on its own with time.perf_counter
up to its result on the host (training) or block_until_ready (others):
the median is the main column, min … max beside it.

GFLOP columns: lebm_bench.py's FlopCounter run on one eager PyTorch call of
the same measurement (imported from beside this file; needs torch, and
costs one untimed eager call per cell; 'n/a' without torch or with
--no-flops).

Threads: --threads N (default 1) sets NPROC=N, which sizes the XLA CPU
client's thread pool, before jax is imported; with 1 it also adds
--xla_cpu_multi_thread_eigen=false to XLA_FLAGS. (jaxlib 0.7's CPU runtime
ignores that flag but honours NPROC.) --threads 0 leaves the environment
alone. The header says what was set.

How to run
----------
  python3 baselines/lebm_bench_jax.py --shapes mnist --batch 64 --iters 5
  python3 baselines/lebm_bench_jax.py --shapes svhn --batch 16 --iters 5 --prior-iters 5
  python3 baselines/lebm_bench_jax.py --check --shapes mnist,svhn --batch 8

--check (needs torch and lebm_bench.py): for each shape and method, builds
the torch model of lebm_bench.py and the JAX state from the same numpy
weights, replays torch's random draws of one lebm_bench.train_step and feeds
them to the JAX step, and prints both sets of metrics, the updated
parameters' and Adam moments' differences and the parameter counts.

Dependencies: jax (CPU), numpy; torch only for --check and the GFLOP columns.
"""

import argparse
import datetime
import functools
import math
import os
import statistics
import sys
import time


def configure_threads(argv):
    """Sets the XLA CPU thread environment for --threads (must run before
    jax is imported); returns a description of what was set."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--threads", type=int, default=1)
    threads = pre.parse_known_args(argv)[0].threads
    if threads > 0:
        os.environ["NPROC"] = str(threads)
        if threads == 1:
            flag = "--xla_cpu_multi_thread_eigen=false"
            old = os.environ.get("XLA_FLAGS", "")
            if flag not in old.split():
                os.environ["XLA_FLAGS"] = (old + " " + flag).strip()
    return (f"--threads {threads}: NPROC={os.environ.get('NPROC', '(unset)')} "
            f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '(unset)')!r}")


THREADS_NOTE = configure_threads(sys.argv[1:]) if __name__ == "__main__" else "not set"

import jax  # noqa: E402  (after the thread environment)
import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

# ---------------------------------------------------------------------------
# Configuration (as lebm_bench.py: lebm.DefaultConfig, nets.GeneratorPreset)
# ---------------------------------------------------------------------------

# ConvTLayer (out channels, kernel, stride, padding), as nets/generator.go.
GENERATOR_PRESETS = {
    "svhn": (100, [(512, 4, 1, 0), (256, 4, 2, 1), (128, 4, 2, 1), (3, 4, 2, 1)]),
    "cifar10": (128, [(1024, 8, 1, 0), (512, 4, 2, 1), (256, 4, 2, 1), (3, 3, 1, 1)]),
    "celeba64": (100, [(1024, 4, 1, 0), (512, 4, 2, 1), (256, 4, 2, 1), (128, 4, 2, 1),
                       (3, 4, 2, 1)]),
    "celeba128": (100, [(1024, 4, 1, 0), (512, 4, 2, 1), (256, 4, 2, 1), (128, 4, 2, 1),
                        (64, 4, 2, 1), (3, 4, 2, 1)]),
    "mnist": (16, [(128, 4, 1, 0), (64, 3, 2, 1), (32, 4, 2, 1), (1, 4, 2, 1)]),
}
GENERATOR_LEAKY_SLOPE = 0.2
PRIOR_HIDDEN = (200, 200)
PRIOR_LEAKY_SLOPE = 0.1
METRICS = ["generator loss", "prior loss", "mean f(z_post)", "mean f(z_prior)",
           "reconstruction MSE"]
CHECKS = ["input batch x", "posterior samples z_post", "generator loss", "prior loss",
          "mean f(z_post)", "mean f(z_prior)", "updated model and optimizer variables"]


class Config:
    """lebm.DefaultConfig(shape) with the given prior update (SM: fisher)."""

    def __init__(self, shape, method="ed"):
        if shape not in GENERATOR_PRESETS:
            raise SystemExit(f"lebm_bench_jax: unknown shape {shape!r}; valid: "
                             f"{', '.join(sorted(GENERATOR_PRESETS))}")
        if method not in ("ed", "cd", "sm"):
            raise SystemExit(f"lebm_bench_jax: unknown method {method!r}; valid: ed, cd, sm")
        self.shape, self.method = shape, method
        self.nz, self.layers = GENERATOR_PRESETS[shape]
        self.sigma, self.prior_sigma = 0.3, 1.0
        # (step size s, steps)
        self.posterior_langevin = (0.1, 40 if shape == "cifar10" else 20)
        self.test_posterior_langevin = (0.1, 100)
        self.prior_langevin = (0.4, 60)
        self.generation_langevin = (0.2, 500)
        self.ed_t, self.ed_m, self.ed_w = 0.25, 16, 1.0
        self.generator_lr, self.prior_lr = 1e-4, 5e-5
        self.betas, self.adam_eps = (0.5, 0.999), 1e-8

    def image_shape(self):
        """(height, width, channels) of the generator's output (NHWC)."""
        size = 1
        for _, k, s, p in self.layers:
            size = (size - 1) * s - 2 * p + k
        return size, size, self.layers[-1][0]


# ---------------------------------------------------------------------------
# Parameters, networks and energies
# ---------------------------------------------------------------------------


def init_params(cfg, rng):
    """numpy float32 parameters: {"gen": [(kernel [k, k, cin, out], bias
    [out])…], "prior": [(weight [in, out], bias [out])…]} (the Go layouts)."""
    gen, cin = [], cfg.nz
    for out, k, _, _ in cfg.layers:
        std = math.sqrt(2.0 / ((cin + out) * k * k))
        bound = 1.0 / math.sqrt(out * k * k)
        gen.append((rng.normal(0.0, std, (k, k, cin, out)).astype(np.float32),
                    rng.uniform(-bound, bound, out).astype(np.float32)))
        cin = out
    dims = [cfg.nz, *PRIOR_HIDDEN, 1]
    prior = [(rng.normal(0.0, math.sqrt(2.0 / (a + b)), (a, b)).astype(np.float32),
              np.zeros(b, np.float32)) for a, b in zip(dims[:-1], dims[1:])]
    return {"gen": gen, "prior": prior}


def count_params(tree):
    return sum(int(np.prod(leaf.shape)) for leaf in jax.tree_util.tree_leaves(tree))


def random_images(cfg, n, seed=1):
    """Uniform noise in [-1, 1] of the generator's output shape, NHWC."""
    rng = np.random.default_rng(seed)
    return (2 * rng.random((n, *cfg.image_shape())) - 1).astype(np.float32)


def generator(gen, z, cfg):
    """nets.Generator: G(z) [B, H, W, C]."""
    h = z.reshape(z.shape[0], 1, 1, cfg.nz)
    for i, ((kernel, bias), (_, k, s, p)) in enumerate(zip(gen, cfg.layers)):
        if i > 0:
            h = jax.nn.leaky_relu(h, GENERATOR_LEAKY_SLOPE)
        h = lax.conv_general_dilated(h, kernel[::-1, ::-1], window_strides=(1, 1),
                                     padding=[(k - 1 - p, k - 1 - p)] * 2, lhs_dilation=(s, s),
                                     dimension_numbers=("NHWC", "HWIO", "NHWC")) + bias
    return jnp.tanh(h)


def f(prior, z):
    """The prior's learned energy f(z) [B]."""
    h = z
    for i, (w, b) in enumerate(prior):
        h = h @ w + b
        if i < len(prior) - 1:
            h = jax.nn.leaky_relu(h, PRIOR_LEAKY_SLOPE)
    return h[:, 0]


def prior_energy(prior, z, cfg):
    """U(z) = f(z) + ‖z‖²/(2σ0²) [B]."""
    return f(prior, z) + jnp.square(z).sum(1) * (1.0 / (2 * cfg.prior_sigma ** 2))


def squared_error(gen, x, z, cfg):
    """‖x − G(z)‖² per example [B]."""
    return jnp.square(x - generator(gen, z, cfg)).sum((1, 2, 3))


def posterior_energy(params, x, z, cfg):
    """U_post(z) = ‖x − G(z)‖²/(2σ²) + U(z) [B]."""
    return (squared_error(params["gen"], x, z, cfg) * (1.0 / (2 * cfg.sigma ** 2))
            + prior_energy(params["prior"], z, cfg))


def score(energy, z):
    """∇_z Σ_i E(z_i) [B, nz]: per-example gradients (examples independent)."""
    return jax.grad(lambda q: energy(q).sum())(z)


def langevin(energy, z0, step_size, noise, unroll):
    """losses.Langevin: z ← z − (s²/2)∇E(z) + s ξ for each ξ in noise
    [steps, B, nz] (lax.scan); the final state, gradient stopped."""
    s = step_size

    def body(z, xi):
        z = z - (s * s / 2) * score(energy, z)
        return z + s * xi, None

    z, _ = lax.scan(body, z0, noise, unroll=unroll if unroll > 0 else True)
    return lax.stop_gradient(z)


# ---------------------------------------------------------------------------
# Prior losses (losses/*.go); random draws are arguments
# ---------------------------------------------------------------------------


def draw_prior_noise(key, cfg, b):
    """The random numbers of one prior loss at batch b."""
    k1, k2 = jax.random.split(key)
    nz = cfg.nz
    if cfg.method == "ed":
        return {"xi": jax.random.normal(k1, (b, nz)),
                "xi_prime": jax.random.normal(k2, (b, cfg.ed_m, nz))}
    if cfg.method == "cd":
        return {"z0": jax.random.normal(k1, (b, nz)),
                "chain": jax.random.normal(k2, (cfg.prior_langevin[1], b, nz))}
    return {}


def prior_loss_data(params, x, z, noise, cfg, unroll):
    """What the prior loss treats as data: cd's negatives (prior chain from
    N(0, I)), sm's posterior score ∇U_post(z), ed's noise."""
    if cfg.method == "cd":
        s, _ = cfg.prior_langevin
        return {"z_neg": langevin(functools.partial(prior_energy, params["prior"], cfg=cfg),
                                  noise["z0"], s, noise["chain"], unroll)}
    if cfg.method == "sm":
        post = functools.partial(posterior_energy, params, x, cfg=cfg)
        return {"post_score": lax.stop_gradient(score(post, z))}
    return noise


def prior_loss(prior, z, data, cfg):
    """lebm.PriorLoss as a function of the prior's parameters: (loss, mean
    f(z_prior) for cd, else 0)."""
    b = z.shape[0]
    if cfg.method == "ed":
        st = math.sqrt(cfg.ed_t)
        y = (z + st * data["xi"])[:, None, :] + st * data["xi_prime"]  # [B, M, nz]
        points = jnp.concatenate([z[:, None, :], y], 1).reshape(b * (1 + cfg.ed_m), cfg.nz)
        e = prior_energy(prior, points, cfg).reshape(b, 1 + cfg.ed_m)
        diff = e[:, :1] - e[:, 1:]
        log_w = jnp.full((b, 1), math.log(cfg.ed_w) if cfg.ed_w > 0 else -math.inf, z.dtype)
        per_example = jax.nn.logsumexp(jnp.concatenate([log_w, diff], 1), 1) - math.log(cfg.ed_m)
        return per_example.mean(), jnp.zeros((), z.dtype)
    if cfg.method == "cd":
        e = f(prior, jnp.concatenate([z, data["z_neg"]], 0)).reshape(2, b)
        return e[0].mean() - e[1].mean(), lax.stop_gradient(e[1].mean())
    prior_score = score(functools.partial(prior_energy, prior, cfg=cfg), z)
    diff = prior_score - data["post_score"]
    return 0.5 * jnp.square(diff).sum(1).mean(), jnp.zeros((), z.dtype)


# ---------------------------------------------------------------------------
# Adam (torch.optim.Adam's formula) and the training iteration
# ---------------------------------------------------------------------------


def init_state(params, key):
    """The donated training state: parameters, the two Adams' moments and
    step counts, the PRNG key."""
    params = jax.tree_util.tree_map(jnp.asarray, params)
    zeros = lambda tree: jax.tree_util.tree_map(jnp.zeros_like, tree)
    opt = {name: {"m": zeros(params[name]), "v": zeros(params[name]),
                  "t": jnp.zeros((), jnp.float32)} for name in ("gen", "prior")}
    return {"params": params, "opt": opt, "key": key}


def adam(params, grads, opt, lr, cfg):
    """One torch.optim.Adam step; 1 − β^t as −expm1(t·log β), without
    float32 cancellation (torch computes it in double)."""
    b1, b2 = cfg.betas
    t = opt["t"] + 1
    m = jax.tree_util.tree_map(lambda m, g: m * b1 + g * (1 - b1), opt["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: v * b2 + g * g * (1 - b2), opt["v"], grads)
    step_size = lr / -jnp.expm1(t * math.log(b1))
    bc2_sqrt = jnp.sqrt(-jnp.expm1(t * math.log(b2)))
    new = jax.tree_util.tree_map(
        lambda p, m, v: p - step_size * (m / (jnp.sqrt(v) / bc2_sqrt + cfg.adam_eps)),
        params, m, v)
    return new, {"m": m, "v": v, "t": t}


def all_finite(tree):
    return jnp.stack([jnp.isfinite(leaf).all() for leaf in jax.tree_util.tree_leaves(tree)]).all()


def train_core(params, opt, x, z0, post_noise, noise, cfg, guard, unroll):
    """One iteration of lebm.TrainStepGraph given its random draws; returns
    (params, opt, metrics [5], flags [7])."""
    s, _ = cfg.posterior_langevin
    z_post = langevin(functools.partial(posterior_energy, params, x, cfg=cfg), z0, s,
                      post_noise, unroll)
    data = prior_loss_data(params, x, z_post, noise, cfg, unroll)

    def loss_fn(p):
        gen_loss = squared_error(p["gen"], x, z_post, cfg).mean()
        p_loss, neg_energy = prior_loss(p["prior"], z_post, data, cfg)
        return gen_loss + p_loss, (gen_loss, p_loss, neg_energy)

    (_, (gen_loss, p_loss, neg_energy)), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    post_energy = f(params["prior"], z_post).mean()
    metrics = jnp.stack([gen_loss, p_loss, post_energy, neg_energy,
                         gen_loss / math.prod(cfg.image_shape())])

    new_gen, opt_gen = adam(params["gen"], grads["gen"], opt["gen"], cfg.generator_lr, cfg)
    new_prior, opt_prior = adam(params["prior"], grads["prior"], opt["prior"], cfg.prior_lr, cfg)
    new_params, new_opt = {"gen": new_gen, "prior": new_prior}, {"gen": opt_gen, "prior": opt_prior}
    if guard == "none":
        return new_params, new_opt, metrics, jnp.ones(len(CHECKS), bool)
    flags = jnp.stack([jnp.isfinite(x).all(), jnp.isfinite(z_post).all()]
                      + [jnp.isfinite(v) for v in (gen_loss, p_loss, post_energy, neg_energy)]
                      + [all_finite((new_params, new_opt["gen"]["m"], new_opt["gen"]["v"],
                                     new_opt["prior"]["m"], new_opt["prior"]["v"]))])
    if guard == "full":
        ok = flags.all()
        keep = lambda new, old: jnp.where(ok, new, old)
        new_params = jax.tree_util.tree_map(keep, new_params, params)
        new_opt = jax.tree_util.tree_map(keep, new_opt, opt)
    return new_params, new_opt, metrics, flags


def train_step(state, x, cfg, guard, unroll):
    """The benchmarked step: draws its random numbers from state["key"]."""
    key, k0, k1, k2 = jax.random.split(state["key"], 4)
    b, steps = x.shape[0], cfg.posterior_langevin[1]
    params, opt, metrics, flags = train_core(
        state["params"], state["opt"], x, jax.random.normal(k0, (b, cfg.nz)),
        jax.random.normal(k1, (steps, b, cfg.nz)), draw_prior_noise(k2, cfg, b), cfg, guard,
        unroll)
    return {"params": params, "opt": opt, "key": key}, metrics, flags


def prior_update(params, x, key, cfg, unroll):
    """cmd/bench-lebm measurePrior: the prior loss at z ~ N(0, I) and its
    gradient with respect to the prior's parameters; returns their sum."""
    k0, k1 = jax.random.split(key)
    z = jax.random.normal(k0, (x.shape[0], cfg.nz))
    data = prior_loss_data(params, x, z, draw_prior_noise(k1, cfg, x.shape[0]), cfg, unroll)
    loss, grads = jax.value_and_grad(lambda pr: prior_loss(pr, z, data, cfg)[0])(params["prior"])
    return loss + sum(g.sum() for g in jax.tree_util.tree_leaves(grads))


def generate(params, key, cfg, n, unroll):
    """Model.Generate: prior Langevin from N(0, I), then G."""
    k0, k1 = jax.random.split(key)
    s, steps = cfg.generation_langevin
    z = langevin(functools.partial(prior_energy, params["prior"], cfg=cfg),
                 jax.random.normal(k0, (n, cfg.nz)), s,
                 jax.random.normal(k1, (steps, n, cfg.nz)), unroll)
    return generator(params["gen"], z, cfg)


def test_posterior(params, x, key, cfg, unroll):
    """Model.PosteriorSample: test-time posterior Langevin from N(0, I)."""
    k0, k1 = jax.random.split(key)
    s, steps = cfg.test_posterior_langevin
    b = x.shape[0]
    return langevin(functools.partial(posterior_energy, params, x, cfg=cfg),
                    jax.random.normal(k0, (b, cfg.nz)), s,
                    jax.random.normal(k1, (steps, b, cfg.nz)), unroll)


# ---------------------------------------------------------------------------
# Timing and FLOPs
# ---------------------------------------------------------------------------


def compile_ahead(fn, args, donate=()):
    """(compiled fn, seconds to trace, lower and compile it)."""
    t0 = time.perf_counter()
    compiled = jax.jit(fn, donate_argnums=donate).lower(*args).compile()
    return compiled, time.perf_counter() - t0


def timed(call, iters):
    """Seconds of each of iters calls after one warm-up call; call() must
    return only once its results are on the host or ready."""
    call()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return times


class TorchFlops:
    """lebm_bench.py's FlopCounter on one eager PyTorch call (None when torch
    or lebm_bench.py cannot be imported, or counting is off)."""

    def __init__(self, enabled, threads):
        self.lb = None
        if not enabled:
            return
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        try:
            import lebm_bench
            import torch
        except ImportError as err:
            print(f"# no GFLOP columns: {err}", file=sys.stderr)
            return
        self.lb, self.torch = lebm_bench, torch
        if threads > 0:
            torch.set_num_threads(threads)

    def count(self, what, shape, method, batch, seed):
        """FLOPs of one call of `what` (train, generate, posterior), or None."""
        if self.lb is None:
            return None
        lb, torch = self.lb, self.torch
        torch.manual_seed(seed)
        model = lb.LEBM(lb.Config(shape, method), torch.device("cpu"), torch.float32)
        x = model.random_images(batch)
        calls = {"train": lambda: lb.train_step(model, x),
                 "generate": lambda: lb.generate(model, batch),
                 "posterior": lambda: lb.test_posterior(model, x)}
        return lb.counted(calls[what], torch.device("cpu"))


def gflop(flops):
    if flops is None:
        return "n/a"
    g = flops / 1e9
    return f"{g:.4g}" if g < 1000 else f"{g:.0f}"


def rate_cells(flops, seconds):
    return f"{gflop(flops)} | " + ("n/a" if flops is None else f"{flops / seconds / 1e12:.3g}")


def spread(times):
    return f"{min(times):.4f} … {max(times):.4f}"


# ---------------------------------------------------------------------------
# --check: one step against lebm_bench.train_step, same weights and noise
# ---------------------------------------------------------------------------


def jax_tensors(new_params, new_opt):
    """{"gen"/"prior": {"p"/"m"/"v": [arrays]}} of a JAX step's result."""
    leaves = jax.tree_util.tree_leaves
    return {name: {"p": [np.asarray(a) for a in leaves(new_params[name])],
                   "m": [np.asarray(a) for a in leaves(new_opt[name]["m"])],
                   "v": [np.asarray(a) for a in leaves(new_opt[name]["v"])]}
            for name in ("gen", "prior")}


def torch_tensors(model):
    """jax_tensors of a lebm_bench.LEBM after its step, in Go layouts."""
    go = lambda a: a.transpose(2, 3, 0, 1) if a.ndim == 4 else a.T if a.ndim == 2 else a
    out = {}
    for name, net, opt in (("gen", model.gen, model.opt_g), ("prior", model.prior, model.opt_p)):
        ps = [p for layer in net.layers for p in (layer.weight, layer.bias)]
        out[name] = {"p": [go(p.detach().numpy()) for p in ps],
                     "m": [go(opt.state[p]["exp_avg"].numpy()) for p in ps],
                     "v": [go(opt.state[p]["exp_avg_sq"].numpy()) for p in ps]}
    return out


def tensor_errors(cfg, got, want):
    """Worst differences of two steps' results (jax_tensors) over both
    models: Adam's moments relative to each tensor's largest entry (m is
    (1 − β1)·gradient), and parameters in units of the learning rate where
    |gradient| exceeds 1e-6 and 1e-3 of the tensor's largest (Adam's first
    step is lr·g/(|g| + ε), ε = 1e-8, about lr·sign(g), which small
    differences in g flip where |g| is near 0 or ε). For ed and cd the loss
    does not depend on the prior's output bias (it cancels in U(z) − U(y)
    and in mean f(z_post) − mean f(z_prior)): its gradient is rounding noise
    (about 1e-9), left out."""
    worst = {"m": 0.0, "v": 0.0, "p": 0.0}
    for name, lr in (("gen", cfg.generator_lr), ("prior", cfg.prior_lr)):
        a, b = got[name], want[name]
        n = len(b["p"]) - (1 if name == "prior" and cfg.method in ("ed", "cd") else 0)
        for i in range(n):
            for key in ("m", "v"):
                d = float(np.abs(a[key][i] - b[key][i]).max())
                worst[key] = max(worst[key], d / max(float(np.abs(b[key][i]).max()), 1e-30))
            g = np.abs(b["m"][i]) / (1 - cfg.betas[0])
            mask = g > max(1e-6, 1e-3 * float(g.max()))
            if mask.any():
                d = float(np.abs(a["p"][i] - b["p"][i])[mask].max())
                worst["p"] = max(worst["p"], d / lr)
    return worst


def check(shapes, methods, batch, guard, unroll, seed, tol=1e-4):
    """--check: one step against lebm_bench.train_step with the same weights,
    images and random draws; returns the exit code. Each difference is shown
    beside a float32 noise floor, the same difference between two JAX steps
    whose chains (posterior, and cd's prior chain) start from z0 and
    z0·(1 + 1e-7): the chains amplify rounding (a 1e-7 change of z0 can move
    svhn's generator gradients by ~1e-3). A difference passes if it is
    within tol (relative) or 10× its floor."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import lebm_bench as lb
    import torch

    ok = True

    def verdict(diff, floor, scale=1.0):
        nonlocal ok
        good = diff <= max(tol * scale, 10 * floor)
        ok &= good
        return "OK" if good else "MISMATCH"

    core = jax.jit(train_core, static_argnums=(6, 7, 8))
    torch.set_num_threads(1)
    print(f"# one training step, JAX vs lebm_bench.train_step (torch {torch.__version__}), "
          f"float32, same numpy weights and images, torch's random draws, batch {batch}, "
          f"guard {guard}; floor: JAX vs JAX with chains from z0·(1 + 1e-7)")
    for shape in shapes:
        for method in methods:
            cfg = Config(shape, method)
            params = init_params(cfg, np.random.default_rng(seed))
            x = random_images(cfg, batch, seed)
            model = lb.LEBM(lb.Config(shape, method), torch.device("cpu"), torch.float32)
            with torch.no_grad():
                for conv, (kernel, bias) in zip(model.gen.layers, params["gen"]):
                    conv.weight.copy_(torch.from_numpy(kernel.transpose(2, 3, 0, 1).copy()))
                    conv.bias.copy_(torch.from_numpy(bias))
                for lin, (w, b) in zip(model.prior.layers, params["prior"]):
                    lin.weight.copy_(torch.from_numpy(w.T.copy()))
                    lin.bias.copy_(torch.from_numpy(b))
            counts_j = (count_params(params["gen"]), count_params(params["prior"]))
            counts_t = (sum(p.numel() for p in model.gen.parameters()),
                        sum(p.numel() for p in model.prior.parameters()))
            ok &= counts_j == counts_t
            print(f"{shape}/{method}: parameters (generator, prior) jax {counts_j} "
                  f"torch {counts_t} {'OK' if counts_j == counts_t else 'MISMATCH'}")

            # The draws of lebm_bench.train_step, in its order.
            b, nz, steps = batch, cfg.nz, cfg.posterior_langevin[1]
            torch.manual_seed(seed)
            z0 = torch.randn(b, nz).numpy()
            post_noise = np.stack([torch.randn(b, nz).numpy() for _ in range(steps)])
            if method == "ed":
                noise = {"xi": torch.randn(b, nz).numpy(),
                         "xi_prime": torch.randn(b, cfg.ed_m, nz).numpy()}
            elif method == "cd":
                noise = {"z0": torch.randn(b, nz).numpy(),
                         "chain": np.stack([torch.randn(b, nz).numpy()
                                            for _ in range(cfg.prior_langevin[1])])}
            else:
                noise = {}

            g_t = model.gen(torch.from_numpy(z0)).detach().numpy().transpose(0, 2, 3, 1)
            g_j = np.asarray(generator(params["gen"], jnp.asarray(z0), cfg))
            diff = float(np.abs(g_j - g_t).max())
            print(f"  {'G(z0), max |diff|':<28} {diff:.2e}  {verdict(diff, 0.0)}")
            torch.manual_seed(seed)
            metrics_t, flags_t = lb.train_step(model, torch.from_numpy(
                x.transpose(0, 3, 1, 2).copy()), guard)
            state = init_state(params, jax.random.PRNGKey(seed))
            nudge = lambda a: a * np.float32(1 + 1e-7)
            nudged = {k: nudge(v) if k == "z0" else v for k, v in noise.items()}
            results = [core(state["params"], state["opt"], x, z, post_noise, n, cfg, guard, unroll)
                       for z, n in ((z0, noise), (nudge(z0), nudged))]
            (p_j, opt_j, metrics_j, flags_j), (p_f, opt_f, metrics_f, _) = results
            for name, got, want, other in zip(METRICS, np.asarray(metrics_j, np.float64),
                                              metrics_t.numpy(), np.asarray(metrics_f, np.float64)):
                diff, floor = abs(got - want), abs(got - other)
                print(f"  {name:<28} jax {got: .8e}  torch {want: .8e}  |diff| {diff:.2e}  "
                      f"floor {floor:.2e}  {verdict(diff, floor, max(1.0, abs(want)))}")
            same_flags = bool(np.array_equal(np.asarray(flags_j), flags_t.numpy()))
            ok &= same_flags
            print(f"  {'finiteness flags':<28} jax {np.asarray(flags_j).astype(int).tolist()} "
                  f"torch {flags_t.numpy().astype(int).tolist()}  "
                  f"{'OK' if same_flags else 'MISMATCH'}")
            mine = jax_tensors(p_j, opt_j)
            err = tensor_errors(cfg, mine, torch_tensors(model))
            floor = tensor_errors(cfg, jax_tensors(p_f, opt_f), mine)
            for key, name in (("m", "Adam m (gradients), rel"), ("v", "Adam v, rel"),
                              ("p", "new parameters, |diff| / lr")):
                print(f"  {name:<28} {err[key]:.2e}  floor {floor[key]:.2e}  "
                      f"{verdict(err[key], floor[key])}")
    print("check: all match" if ok else "check: MISMATCH")
    return 0 if ok else 1


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default="svhn,cifar10,celeba64",
                    help="data-set shapes (generator presets)")
    ap.add_argument("--methods", default="ed,cd,sm", help="prior updates")
    ap.add_argument("--batch", type=int, default=128, help="batch size")
    ap.add_argument("--iters", type=int, default=3,
                    help="timed iterations per row (after one warm-up); also the sampling rows")
    ap.add_argument("--prior-iters", type=int, default=20,
                    help="timed prior-update-only iterations per row (0: skip)")
    ap.add_argument("--prior-batch", type=int, default=0,
                    help="batch of the prior-update-only measurement (0: --batch)")
    ap.add_argument("--gen-batch", type=int, default=0,
                    help="batch of the generation timing (0: --batch)")
    ap.add_argument("--no-sampling", action="store_true",
                    help="skip the generation and test-posterior table")
    ap.add_argument("--threads", type=int, default=1,
                    help="XLA CPU threads (NPROC, set before jax is imported; 0: leave alone)")
    ap.add_argument("--guard", default="full", choices=["full", "check", "none"],
                    help="full: finiteness checks + old state kept on failure; "
                         "check: checks only; none: neither")
    ap.add_argument("--unroll", type=int, default=0,
                    help="Langevin steps per lax.scan trip (0: fully unrolled, as the GoMLX graph)")
    ap.add_argument("--no-flops", action="store_true",
                    help="skip the GFLOP columns (counted by lebm_bench.py on torch)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="", help="Markdown file to write (default: print only)")
    ap.add_argument("--check", action="store_true",
                    help="compare one step with lebm_bench.train_step (same weights and noise), "
                         "then exit")
    args = ap.parse_args(argv)

    shapes = [s for s in args.shapes.split(",") if s]
    methods = [m for m in args.methods.split(",") if m]
    if args.check:
        return check(shapes, methods, args.batch, args.guard, args.unroll, args.seed)

    batch = args.batch
    prior_batch = args.prior_batch or batch
    gen_batch = args.gen_batch or batch
    flops = TorchFlops(not args.no_flops, args.threads)
    dev = (f"{jax.devices()[0].platform} ({args.threads} thread{'s' if args.threads != 1 else ''})"
           if args.threads > 0 else f"{jax.devices()[0].platform} (XLA's default threads)")
    langevin_note = ("lax.scan fully unrolled" if args.unroll <= 0 else
                     f"lax.scan, unroll {args.unroll}")
    header = (f"Command: `lebm_bench_jax.py {' '.join(sys.argv[1:] if argv is None else argv)}` — "
              f"JAX {jax.__version__} (jaxlib {jaxlib.__version__}), XLA {jax.default_backend()}, "
              f"float32, jit with donated state, Langevin {langevin_note}, guard {args.guard}, "
              f"SM fisher, threads {THREADS_NOTE}, "
              f"{datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d')}.\n\n")
    table = (f"| shape | method | s / training iteration (batch {batch}, median) | "
             f"GFLOP / iteration | TFLOP/s | min … max s | compile s | s / prior update alone "
             f"(batch {prior_batch}, median) | prior update ÷ CD's | device |\n"
             "|---|---|---|---|---|---|---|---|---|---|\n")
    print(header + table, end="", flush=True)
    lines, sampling = [], []
    for shape in shapes:
        rows = {}
        for method in methods:
            cfg = Config(shape, method)
            params = init_params(cfg, np.random.default_rng(args.seed))
            x = jnp.asarray(random_images(cfg, batch, args.seed))
            state = init_state(params, jax.random.PRNGKey(args.seed))
            step, t_compile = compile_ahead(
                functools.partial(train_step, cfg=cfg, guard=args.guard, unroll=args.unroll),
                (state, x), donate=(0,))
            last = {}

            def one_step():
                nonlocal state
                state, metrics, flags = step(state, x)
                last["metrics"], last["flags"] = jax.device_get((metrics, flags))
                if not last["flags"].all():
                    bad = CHECKS[int(np.flatnonzero(~last["flags"])[0])]
                    print(f"# warning: training step diverged: {bad} contains NaN or Inf; "
                          + ("the update was undone" if args.guard == "full" else
                             f"update kept (--guard {args.guard})"), file=sys.stderr)

            times = timed(one_step, args.iters)
            prior = 0.0
            if args.prior_iters > 0:
                xp = jnp.asarray(random_images(cfg, prior_batch, args.seed))
                key = jax.random.PRNGKey(args.seed + 1)
                fn, _ = compile_ahead(functools.partial(prior_update, cfg=cfg, unroll=args.unroll),
                                      (state["params"], xp, key))
                prior = statistics.median(
                    timed(lambda: fn(state["params"], xp, key).block_until_ready(),
                          args.prior_iters))
            count = flops.count("train", shape, method, batch, args.seed)
            rows[method] = (times, t_compile, prior, count)
            print(f"# {shape}/{method}: parameters generator {count_params(params['gen'])} "
                  f"prior {count_params(params['prior'])}; "
                  + ", ".join(f"{k} {v:.4g}" for k, v in zip(METRICS, last["metrics"])),
                  file=sys.stderr, flush=True)
        prior_cd = rows["cd"][2] if "cd" in rows else 0.0
        for method in methods:
            times, t_compile, prior, count = rows[method]
            med = statistics.median(times)
            ratio = f"{prior / prior_cd:.3f}" if prior_cd > 0 else "–"
            line = (f"| {shape} | {method} | {med:.4f} | {rate_cells(count, med)} "
                    f"| {spread(times)} | {t_compile:.2f} | {prior:.5f} | {ratio} | {dev} |\n")
            lines.append(line)
            print(line, end="", flush=True)
        if not args.no_sampling:
            cfg = Config(shape)
            params = jax.tree_util.tree_map(jnp.asarray,
                                            init_params(cfg, np.random.default_rng(args.seed)))
            xt = jnp.asarray(random_images(cfg, batch, args.seed))
            key = jax.random.PRNGKey(args.seed + 2)
            gen_fn, c_gen = compile_ahead(
                functools.partial(generate, cfg=cfg, n=gen_batch, unroll=args.unroll),
                (params, key))
            post_fn, c_post = compile_ahead(
                functools.partial(test_posterior, cfg=cfg, unroll=args.unroll), (params, xt, key))
            t_gen = statistics.median(timed(lambda: gen_fn(params, key).block_until_ready(),
                                            args.iters))
            t_post = statistics.median(timed(lambda: post_fn(params, xt, key).block_until_ready(),
                                             args.iters))
            sampling.append((shape, t_gen, flops.count("generate", shape, "ed", gen_batch,
                                                       args.seed),
                             t_post, flops.count("posterior", shape, "ed", batch, args.seed),
                             c_gen, c_post))
    text = header + table + "".join(lines)
    if sampling:
        stable = (f"\n| shape | s / generation (500 prior Langevin steps of 0.2 + G, batch "
                  f"{gen_batch}, median) | GFLOP | TFLOP/s | s / test posterior (100 Langevin "
                  f"steps of 0.1, batch {batch}, median) | GFLOP | TFLOP/s | compile s "
                  f"(generation, posterior) | device |\n|---|---|---|---|---|---|---|---|---|\n")
        stable += "".join(f"| {s} | {g:.4f} | {rate_cells(fg, g)} | {p:.4f} | {rate_cells(fp, p)} "
                          f"| {cg:.2f}, {cp:.2f} | {dev} |\n"
                          for s, g, fg, p, fp, cg, cp in sampling)
        text += stable
        print(stable, end="", flush=True)
    if args.out:
        d = os.path.dirname(args.out)
        if d:
            os.makedirs(d, exist_ok=True)
        with open(args.out + ".tmp", "w") as fh:
            fh.write(text)
        os.replace(args.out + ".tmp", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
