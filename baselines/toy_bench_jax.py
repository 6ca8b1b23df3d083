#!/usr/bin/env python3
"""JAX (XLA CPU) port of baselines/toy_bench.py: the 2-D toy energy-MLP
training step (25-Gaussians) for ED, SM and CD as one compiled function.

What it measures
----------------
The step of toy_bench.py (see its docstring and docs/density.md, "25
Gaussians"): energy MLP 2 → 128 → 128 → 128 → 128 → 1, softplus,
biases, nn.Linear's default init (weights and biases U(±1/√fan_in), drawn
with numpy); Adam (lr 1e-3, betas (0.9, 0.999), ε 1e-8, torch.optim.Adam's
formula); batch 128 fresh samples per step; parameter EMA 0.999 updated
every step. One step = sample a batch, the loss, its gradient, Adam, EMA:

  ed  t = 1, M = 4, w = 1, the energy evaluated once on all B(1+M) points;
  sm  exact Hyvärinen score matching, the Laplacian by one reverse-mode
      pass per input dimension over the reverse-mode gradient (as torch's
      double backward; forward-over-reverse would be the JAX idiom);
  cd  10 Langevin steps from the data, x ← x − (ε/2)∇E + √ε ξ, ε = 0.01, as
      jax.lax.scan over the noise [10, B, 2], fully unrolled by default
      (--unroll 0, as the GoMLX graph), then mean E+ − mean E− +
      0.3 mean(E+² + E−²).

Everything is float32. The step is jax.jit(step, donate_argnums=0) over ONE
pytree (parameters, EMA, Adam moments and count, PRNG key), so the state
stays on the device; the data and all noise are drawn inside the step.

Timing: the step is compiled ahead of time (jit(...).lower(...).compile(),
"compile s"), run --warmup times, then --steps times in a loop that does not
wait for each step (as toy_bench.py's loop, which never reads the loss);
the clock stops when the last step's state is ready.

Threads: --threads N sets NPROC=N, which sizes the XLA CPU client's thread
pool, before jax is imported; with 1 it also adds
--xla_cpu_multi_thread_eigen=false to XLA_FLAGS (ignored by jaxlib 0.7's CPU
runtime, which honours NPROC). Without --threads the environment is left
alone (XLA's default, as toy_bench.py keeps torch's). The header says what
was set.

How to run
----------
  python3 baselines/toy_bench_jax.py --method all --threads 1
  python3 baselines/toy_bench_jax.py --method ed --steps 5000 --json
  python3 baselines/toy_bench_jax.py --check     # one step vs toy_bench.py (needs torch)

--check builds toy_bench.py's Trainer and the JAX state from the same numpy
weights, replays torch's random draws of one Trainer.step, feeds them to the
JAX step and prints the losses, gradients (Adam m), parameters and EMA
differences.

Dependencies: jax (CPU), numpy; torch only for --check.
"""

import argparse
import functools
import json
import math
import os
import sys
import time


def configure_threads(argv):
    """Sets the XLA CPU thread environment for --threads (must run before
    jax is imported); returns a description of what was set."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--threads", type=int, default=None)
    threads = pre.parse_known_args(argv)[0].threads
    if threads is not None and threads > 0:
        os.environ["NPROC"] = str(threads)
        if threads == 1:
            flag = "--xla_cpu_multi_thread_eigen=false"
            old = os.environ.get("XLA_FLAGS", "")
            if flag not in old.split():
                os.environ["XLA_FLAGS"] = (old + " " + flag).strip()
    return (f"NPROC={os.environ.get('NPROC', '(unset)')} "
            f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '(unset)')!r}")


THREADS_NOTE = configure_threads(sys.argv[1:]) if __name__ == "__main__" else "not set"

import jax  # noqa: E402  (after the thread environment)
import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

# ---------------------------------------------------------------------------
# Data, model, losses (as toy_bench.py)
# ---------------------------------------------------------------------------

GRID = (-1.0, -0.5, 0.0, 0.5, 1.0)
SCALE = 4.0 / 1.414
STD = 0.2 / 1.414
CENTRES = np.array([[SCALE * a, SCALE * b] for a in GRID for b in GRID], np.float32)
HIDDEN, DEPTH = 128, 4
ED_T, ED_M, ED_W = 1.0, 4, 1.0
CD_STEPS, CD_EPS, CD_REG = 10, 0.01, 0.3
LR, BETAS, ADAM_EPS, EMA = 1e-3, (0.9, 0.999), 1e-8, 0.999


def init_params(rng):
    """[(weight [in, out], bias [out])…], nn.Linear's default init."""
    dims = [2] + [HIDDEN] * DEPTH + [1]
    params = []
    for a, b in zip(dims[:-1], dims[1:]):
        bound = 1.0 / math.sqrt(a)
        params.append((rng.uniform(-bound, bound, (a, b)).astype(np.float32),
                       rng.uniform(-bound, bound, b).astype(np.float32)))
    return params


def energy(params, x):
    """E(x) [N]."""
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = jax.nn.softplus(h)
    return h[:, 0]


def grad_x(params, x):
    """∇_x Σ E(x) [N, 2]."""
    return jax.grad(lambda q: energy(params, q).sum())(x)


def loss_ed(params, x, noise):
    """Energy Discrepancy, Gaussian perturbation, w-stabiliser; noise xi
    [B, 1, d], xi2 [B, M, d]."""
    b, d = x.shape
    s = math.sqrt(ED_T)
    y = x[:, None, :] + s * noise["xi"] + s * noise["xi2"]  # [B, M, d]
    e = energy(params, jnp.concatenate([x, y.reshape(b * ED_M, d)], 0))
    diff = e[:b, None] - e[b:].reshape(b, ED_M)
    log_w = jnp.full((b, 1), math.log(ED_W), x.dtype)
    return (jax.nn.logsumexp(jnp.concatenate([log_w, diff], 1), 1) - math.log(ED_M)).mean()


def loss_sm(params, x, _noise):
    """Exact Hyvärinen score matching: mean ½‖∇E‖² − ΔE (no noise; the
    signature of loss_ed)."""
    g = grad_x(params, x)
    lap = sum(jax.grad(lambda q, k=k: grad_x(params, q)[:, k].sum())(x)[:, k]
              for k in range(x.shape[1]))
    return (0.5 * jnp.square(g).sum(1) - lap).mean()


def langevin(params, x, noise, unroll):
    """Unadjusted Langevin on exp(−E) from x, one step per row of noise
    [steps, B, d]; gradient stopped."""

    def body(z, xi):
        return z - 0.5 * CD_EPS * grad_x(params, z) + math.sqrt(CD_EPS) * xi, None

    z, _ = lax.scan(body, x, noise, unroll=unroll if unroll > 0 else True)
    return lax.stop_gradient(z)


def loss_cd(params, x, x_neg):
    """Contrastive divergence with regulariser, positives and negatives in
    one call."""
    b = x.shape[0]
    e = energy(params, jnp.concatenate([x, x_neg], 0))
    e_pos, e_neg = e[:b], e[b:]
    return e_pos.mean() - e_neg.mean() + CD_REG * (jnp.square(e_pos) + jnp.square(e_neg)).mean()


# ---------------------------------------------------------------------------
# The training step
# ---------------------------------------------------------------------------


def init_state(params, key):
    """The donated state; every leaf its own buffer (donation needs that)."""
    tm = jax.tree_util.tree_map
    return {"params": tm(jnp.array, params), "ema": tm(jnp.array, params),
            "m": tm(jnp.zeros_like, params), "v": tm(jnp.zeros_like, params),
            "t": jnp.zeros((), jnp.float32), "key": key}


def step_core(state, x, noise, method, unroll):
    """One step given the batch and the noise; returns (state, loss)."""
    params = state["params"]
    if method == "cd":
        x_neg = langevin(params, x, noise["chain"], unroll)
        loss, grads = jax.value_and_grad(loss_cd)(params, x, x_neg)
    else:
        loss, grads = jax.value_and_grad(loss_ed if method == "ed" else loss_sm)(params, x, noise)
    b1, b2 = BETAS
    t = state["t"] + 1
    tm = jax.tree_util.tree_map
    m = tm(lambda m, g: m * b1 + g * (1 - b1), state["m"], grads)
    v = tm(lambda v, g: v * b2 + g * g * (1 - b2), state["v"], grads)
    step_size = LR / -jnp.expm1(t * math.log(b1))  # 1 − β^t without cancellation
    bc2_sqrt = jnp.sqrt(-jnp.expm1(t * math.log(b2)))
    params = tm(lambda p, m, v: p - step_size * (m / (jnp.sqrt(v) / bc2_sqrt + ADAM_EPS)),
                params, m, v)
    ema = tm(lambda e, p: e + (1 - EMA) * (p - e), state["ema"], params)
    return {"params": params, "ema": ema, "m": m, "v": v, "t": t, "key": state["key"]}, loss


def draw(key, method, batch, centres):
    """A fresh batch of 25-Gaussians and the method's noise."""
    k_idx, k_x, k1, k2 = jax.random.split(key, 4)
    idx = jax.random.randint(k_idx, (batch,), 0, centres.shape[0])
    x = centres[idx] + STD * jax.random.normal(k_x, (batch, 2))
    if method == "ed":
        return x, {"xi": jax.random.normal(k1, (batch, 1, 2)),
                   "xi2": jax.random.normal(k2, (batch, ED_M, 2))}
    if method == "cd":
        return x, {"chain": jax.random.normal(k1, (CD_STEPS, batch, 2))}
    return x, {}


def train_step(state, method, batch, unroll):
    """The benchmarked step: draws from state["key"], then step_core."""
    key, sub = jax.random.split(state["key"])
    x, noise = draw(sub, method, batch, jnp.asarray(CENTRES))
    state, loss = step_core(state, x, noise, method, unroll)
    return {**state, "key": key}, loss


def bench(method, steps, warmup, batch, seed, unroll):
    """(steps per second over `steps` steps after `warmup`, compile seconds)."""
    state = init_state(init_params(np.random.default_rng(seed)), jax.random.PRNGKey(seed))
    t0 = time.perf_counter()
    step = jax.jit(functools.partial(train_step, method=method, batch=batch, unroll=unroll),
                   donate_argnums=0).lower(state).compile()
    compile_s = time.perf_counter() - t0
    for _ in range(warmup):
        state, _ = step(state)
    jax.block_until_ready(state)
    t0 = time.perf_counter()
    for _ in range(steps):
        state, _ = step(state)
    jax.block_until_ready(state)
    return steps / (time.perf_counter() - t0), compile_s


# ---------------------------------------------------------------------------
# --check: one step against toy_bench.Trainer.step
# ---------------------------------------------------------------------------


def check(methods, batch, seed, unroll, tol=1e-5):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import toy_bench as tb
    import torch
    from torch import nn

    torch.set_num_threads(1)
    core = jax.jit(step_core, static_argnums=(3, 4))
    ok = True
    print(f"# one step, JAX vs toy_bench.Trainer.step (torch {torch.__version__}), float32, "
          f"same numpy weights, torch's random draws, batch {batch}")
    for method in methods:
        params = init_params(np.random.default_rng(seed))
        tr = tb.Trainer(method, batch)
        with torch.no_grad():
            for net in (tr.net, tr.ema_net):
                linears = [layer for layer in net if isinstance(layer, nn.Linear)]
                for lin, (w, b) in zip(linears, params):
                    lin.weight.copy_(torch.from_numpy(w.T.copy()))
                    lin.bias.copy_(torch.from_numpy(b))
        # The draws of Trainer.step, in its order.
        torch.manual_seed(seed)
        idx = torch.randint(len(tb.CENTRES), (batch,))
        x = (tb.CENTRES[idx] + tb.STD * torch.randn(batch, 2)).numpy()
        if method == "ed":
            noise = {"xi": torch.randn(batch, 1, 2).numpy(),
                     "xi2": torch.randn(batch, ED_M, 2).numpy()}
        elif method == "cd":
            noise = {"chain": np.stack([torch.randn(batch, 2).numpy() for _ in range(CD_STEPS)])}
        else:
            noise = {}
        torch.manual_seed(seed)
        loss_t = tr.step().item()
        state, loss_j = core(init_state(params, jax.random.PRNGKey(seed)), x, noise, method,
                             unroll)
        go = lambda t: t.detach().numpy().T if t.dim() == 2 else t.detach().numpy()
        # torch.optim.Adam has no state for a parameter that got no gradient
        # (sm: the output bias); JAX's gradient there is 0, and so is m.
        torch_m = [go(tr.opt.state[p]["exp_avg"]) if tr.opt.state.get(p) else
                   np.zeros(tuple(p.shape[::-1])) for p in tr.params]
        leaves = jax.tree_util.tree_leaves
        # ed's loss does not depend on the output bias (it cancels in E(x) −
        # E(y)): its gradient is rounding noise, left out. Parameters are
        # compared in units of lr where |g| exceeds 1e-6 and 1e-3 of the
        # tensor's largest: Adam's first step is lr·g/(|g| + ε), about
        # lr·sign(g), which float32 differences flip where g is near 0.
        n = len(tr.params) - (1 if method == "ed" else 0)
        rows = list(zip(leaves(state["m"]), torch_m, leaves(state["params"]),
                        [go(p) for p in tr.params], leaves(state["ema"]),
                        [go(p) for p in tr.ema_params]))[:n]
        errs = {"Adam m (gradients), rel": 0.0, "new parameters, |diff| / lr": 0.0,
                "EMA, |diff| / lr": 0.0}
        for mj, mt, pj, pt, ej, et in rows:
            errs["Adam m (gradients), rel"] = max(
                errs["Adam m (gradients), rel"],
                float(np.abs(np.asarray(mj) - mt).max()) / max(float(np.abs(mt).max()), 1e-30))
            g = np.abs(mt) / (1 - BETAS[0])
            mask = g > max(1e-6, 1e-3 * float(g.max()))
            for name, a, b in (("new parameters, |diff| / lr", pj, pt),
                               ("EMA, |diff| / lr", ej, et)):
                if mask.any():
                    errs[name] = max(errs[name],
                                     float(np.abs(np.asarray(a) - b)[mask].max()) / LR)
        diff = abs(float(loss_j) - loss_t)
        good = diff <= tol * max(1.0, abs(loss_t))
        ok &= good
        print(f"{method}: loss jax {float(loss_j): .8e} torch {loss_t: .8e} |diff| {diff:.2e}  "
              f"{'OK' if good else 'MISMATCH'}")
        for name, err in errs.items():
            ok &= err <= 100 * tol
            print(f"  {name:<28} {err:.2e}  {'OK' if err <= 100 * tol else 'MISMATCH'}")
    print("check: all match" if ok else "check: MISMATCH")
    return 0 if ok else 1


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--method", default="all", choices=["ed", "sm", "cd", "all"])
    ap.add_argument("--steps", type=int, default=2000, help="timed steps")
    ap.add_argument("--warmup", type=int, default=100, help="untimed steps first")
    ap.add_argument("--threads", type=int, default=None,
                    help="XLA CPU threads (NPROC, set before jax is imported; default: XLA's)")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--unroll", type=int, default=0,
                    help="CD Langevin steps per lax.scan trip (0: fully unrolled)")
    ap.add_argument("--json", action="store_true", help="one JSON line per method")
    ap.add_argument("--check", action="store_true",
                    help="compare one step with toy_bench.py's (same weights and noise), then exit")
    args = ap.parse_args(argv)
    methods = ["ed", "sm", "cd"] if args.method == "all" else [args.method]
    if args.check:
        return check(methods, args.batch, args.seed, args.unroll)

    if not args.json:
        print(f"# jax {jax.__version__} (jaxlib {jaxlib.__version__}), "
              f"XLA {jax.default_backend()}, "
              f"{THREADS_NOTE}, batch {args.batch}, {args.steps} timed steps after "
              f"{args.warmup} warmup, CD Langevin "
              + ("fully unrolled" if args.unroll <= 0 else f"unroll {args.unroll}"))
        print(f"{'method':<6} {'steps/s':>10} {'ms/step':>9} {'compile s':>10}")
    for m in methods:
        sps, compile_s = bench(m, args.steps, args.warmup, args.batch, args.seed, args.unroll)
        if args.json:
            print(json.dumps({"impl": "jax", "method": m, "steps_per_sec": sps,
                              "compile_s": compile_s, "threads": args.threads,
                              "env": THREADS_NOTE, "jax": jax.__version__, "batch": args.batch,
                              "steps": args.steps, "unroll": args.unroll}))
        else:
            print(f"{m:<6} {sps:>10.1f} {1000.0 / sps:>9.3f} {compile_s:>10.2f}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
