#!/usr/bin/python3
"""PyTorch CPU baseline for the 2-D toy density experiments (25-Gaussians,
8-Gaussians, checkerboard, pinwheel).

What it measures
----------------
Training throughput (optimiser steps per second) of the toy energy MLP
2 -> 128 -> 128 -> 128 -> 128 -> 1 (softplus activations, biases) trained on
a 2-D toy set (default 25-Gaussians) with Adam (lr 1e-3), batch 128 fresh
samples per step, and a parameter EMA (decay 0.999) updated every step. This
matches the Go implementation's toy benchmark (see docs/density.md,
"25 Gaussians"), so the two can be run side by side on one machine.

Data (--data), as the Go package datasets/toy2d, with s = 1.414 (the
literature's rounded sqrt 2) and exact log-densities:
  25gaussians   centres 4(a, b)/s, a, b in {-1, -1/2, 0, 1/2, 1}, std 0.2/s,
                equal weights (the default);
  8gaussians    centres 4(cos k pi/4, sin k pi/4)/s, k = 0..7, std 0.5/s;
  checkerboard  uniform on the eight 2x2 squares of [-4,4]^2 whose cell
                indices floor(x/2) + floor(y/2) are even (log p = -log 32
                on the closed squares, -inf elsewhere), drawn as toy2d
                draws it;
  pinwheel      five arms: r = 1 + 0.3n, q = 0.1n', angle a = 2 pi k/5 +
                0.25 e^r, x = 2 R(-a)(r, q), its exact log-density by the
                change of variables from (r, q) (toy2d's pinwheelLogDensity;
                the two agree to 1e-12 on 5,000 points).
The mixtures are drawn in float32 (centre + std * randn), the checkerboard in
float64 and then rounded to float32 as toy2d does (the pinwheel too); the distributions match
toy2d's, the random streams do not (torch's generator, not Go's PCG).

Initialisation (--init) of every nn.Linear of the energy:
  pytorch  nn.Linear's default, weights and biases uniform in +-1/sqrt(fan_in)
           (the default);
  xavier   torch.nn.init.xavier_normal_ weights (std sqrt(2/(fan_in +
           fan_out))) and zero biases, as the Go nets.EnergyMLP's dense layers.

One timed step = sample a batch, compute the loss, backward, Adam step, EMA
update. Three losses:

  ed  Energy Discrepancy, Gaussian perturbation, t = 1, M = 4, w = 1:
        y_ij = x_i + sqrt(t) xi_i + sqrt(t) xi'_ij,
        L = mean_i [ logsumexp([log w, E(x_i) - E(y_i1), ..., E(x_i) - E(y_iM)])
                     - log M ],
      with the energy evaluated in ONE batched call over all B(1+M) points.
  sm  Exact Hyvarinen score matching (log p = -E):
        L = mean_i [ 1/2 |grad E(x_i)|^2 - Laplacian E(x_i) ],
      the Laplacian computed exactly by one second-derivative pass per input
      dimension (two for 2-D), with create_graph=True.
  cd  Contrastive divergence with 10 Langevin steps started at the data,
        x <- x - (eps/2) grad E(x) + sqrt(eps) xi,  eps = 0.01 (detached),
        L = mean E(x_pos) - mean E(x_neg) + 0.3 mean(E_pos^2 + E_neg^2),
      positives and negatives evaluated in one batched call.

Only the steps after --warmup untimed steps are timed (time.perf_counter).

With --check, each method is instead trained for --check-steps steps (default
5000), and the script prints the mean loss over the first and last 100 steps
and the log-density MSE of the EMA model:
  log Z ~= logsumexp_i(-E(x_i) - log p_data(x_i)) - log N,  N = 5000 data samples,
  MSE = mean((-E(x) - log Z - log p_data(x))^2) on 5000 fresh samples,
with log p_data computed exactly (float64) from the set's density, as Go's
density.LogDensityMSE. torch.manual_seed(--seed) is called before each method
builds its model, so a --check run is reproducible for a given seed, data,
init and thread count. The MSE is also taken every --curve-every steps
(default 1000; field "curve", [step, MSE] pairs ending at the last step, as
train-toy's mse.csv); those evaluations run under torch.random.fork_rng, so
the training and its final MSE are the same with or without them. With
--json every line (both modes) is one JSON object, carrying data, init and
seed.

How to run (Debian's PyTorch: apt-get install python3-torch)
-----------------------------------------------------------
  /usr/bin/python3 baselines/toy_bench.py --method all --threads 2
  /usr/bin/python3 baselines/toy_bench.py --method ed --steps 5000 --json
  /usr/bin/python3 baselines/toy_bench.py --check [--check-steps 5000]
  /usr/bin/python3 baselines/toy_bench.py --check --check-steps 10000 --json \
      --data checkerboard --init xavier --seed 1 --threads 1

Dependencies: torch and the Python standard library only.

Caveats that dominate the numbers
---------------------------------
* BLAS. Debian's python3-torch is built with BLAS_INFO=generic and calls the
  system libblas.so.3. If only the reference (Netlib) BLAS is installed, every
  matmul runs on it and training is ~4-9x slower than with OpenBLAS (a
  300-step CD check on the pinwheel: 26 s against 2.9 s, 2026-11-26). The
  script reports the library it actually loaded (field "blas"). To benchmark
  with OpenBLAS either install it system-wide (apt-get install
  libopenblas0-pthread, which switches the libblas.so.3 alternative), or
  extract it privately and point the loader at it:
      apt-get download libopenblas0-pthread
      dpkg -x libopenblas0-pthread_*.deb /tmp/ob
      LD_LIBRARY_PATH=/tmp/ob/usr/lib/x86_64-linux-gnu/openblas-pthread \
          /usr/bin/python3 baselines/toy_bench.py ...
* Threads. torch's intra-op threads are OpenMP threads. These layers are
  small (at most 640x128 activations), so on a 2-core machine shared with
  other processes --threads 2 can be several times SLOWER than --threads 1
  (OpenMP barriers wait on a busy core); compare both.
* Checkerboard MSE. log p is constant on the support and the MSE is taken on
  data samples only, so a flat energy (an untrained or barely moved EMA)
  already scores ~0 there: compare checkerboard runs by their curves and
  pictures, not by a small MSE alone. Rounding a sample to float32 can move
  it onto an edge (about 1 point in 10^7): log p counts closed squares, as
  toy2d does, so such a point stays inside the support.
"""

import argparse
import copy
import json
import math
import os
import sys
import time

import torch
from torch import nn

# ---------------------------------------------------------------------------
# Data: the 2-D sets of datasets/toy2d with an exact density
# ---------------------------------------------------------------------------

SQRT2 = 1.414  # the literature's rounded sqrt(2), as toy2d's sqrt2
LOG_2PI = math.log(2 * math.pi)


def mixture(centres, std):
    """Sampler and exact log-density of an equal-weight isotropic 2-D Gaussian
    mixture; centres is a float64 [K,2] tensor, std a Python float."""
    centres32 = centres.float()

    def sample(n):
        idx = torch.randint(len(centres32), (n,))
        return centres32[idx] + std * torch.randn(n, 2)

    def log_p(x):
        sq = ((x.double()[:, None, :] - centres[None, :, :]) ** 2).sum(-1)  # [N,K]
        log_comp = -sq / (2 * std * std) - 2 * math.log(std) - LOG_2PI
        return torch.logsumexp(log_comp, dim=1) - math.log(len(centres))

    return sample, log_p


# 25gaussians: centres 4(a, b)/s for a, b in {-1, -1/2, 0, 1/2, 1}, std 0.2/s.
GRID = (-1.0, -0.5, 0.0, 0.5, 1.0)
STD = 0.2 / SQRT2
CENTRES64 = torch.tensor([[4 * a / SQRT2, 4 * b / SQRT2] for a in GRID for b in GRID],
                         dtype=torch.float64)
CENTRES = CENTRES64.float()
# 8gaussians: centres 4(cos k pi/4, sin k pi/4)/s for k = 0..7, std 0.5/s.
CENTRES8 = torch.tensor([[4 * math.cos(k * math.pi / 4) / SQRT2,
                          4 * math.sin(k * math.pi / 4) / SQRT2] for k in range(8)],
                        dtype=torch.float64)


def sample_checkerboard(n):
    """Uniform on the eight 2x2 squares of [-4,4)^2 with floor(x/2) + floor(y/2)
    even, drawn as toy2d's checkerboard (in float64, then rounded to float32)."""
    x = 4 * torch.rand(n, dtype=torch.float64) - 2
    # y's unit cell has the parity of x's, so the squares alternate.
    y = (torch.rand(n, dtype=torch.float64)
         - 2 * torch.randint(2, (n,), dtype=torch.float64)
         + (torch.floor(x).long() & 1))
    return (2 * torch.stack([x, y], dim=1)).float()


def log_p_checkerboard(x):
    """log(1/32) on the checkerboard's closed squares, -inf elsewhere (float64),
    as toy2d: a point on an edge is inside when a filled square borders it."""
    h = x.double() / 2
    lo, hi = torch.ceil(h) - 1, torch.floor(h)  # the cells whose closures hold h
    ok = torch.zeros(len(x), dtype=torch.bool)
    for kx in (lo[:, 0], hi[:, 0]):
        for ky in (lo[:, 1], hi[:, 1]):
            ok |= ((kx >= -2) & (kx <= 1) & (ky >= -2) & (ky <= 1)
                   & (torch.remainder(kx + ky, 2) == 0))
    out = torch.full((len(x),), -math.inf, dtype=torch.float64)
    out[ok] = -math.log(32)
    return out


# pinwheel: arm k in {0..4}, r = 1 + 0.3n, q = 0.1n', angle a = 2 pi k/5 +
# 0.25 e^r, x = 2 R(-a)(r, q), as toy2d's pinwheel.
PIN_RSTD, PIN_QSTD, PIN_RATE, PIN_ARMS = 0.3, 0.1, 0.25, 5


def sample_pinwheel(n):
    """The pinwheel drawn as toy2d draws it (float64, then float32)."""
    r = 1 + PIN_RSTD * torch.randn(n, dtype=torch.float64)
    q = PIN_QSTD * torch.randn(n, dtype=torch.float64)
    a = 2 * math.pi * torch.randint(PIN_ARMS, (n,), dtype=torch.float64) / PIN_ARMS \
        + PIN_RATE * torch.exp(r)
    c, s = torch.cos(a), torch.sin(a)
    return (2 * torch.stack([r * c + q * s, -r * s + q * c], dim=1)).float()


def log_p_pinwheel(x):
    """The pinwheel's exact log-density (float64), by the change of variables
    from its Gaussian (r, q), as toy2d's pinwheelLogDensity: at u = x/2 with
    |u| = rho, arm k's preimages are the angles alpha of (r, q) =
    rho (cos alpha, sin alpha) where g(alpha) = alpha - 0.25 e^(rho cos alpha)
    - 2 pi k/5 - angle(u) is a multiple of 2 pi, each weighted by
    1/|g'(alpha)| = 1/|1 + 0.25 e^r q|. Roots are bracketed on a grid fine
    enough that g moves less than about 0.1 rad a step, then bisected. The
    grid grows like rho e^rho, so points go in chunks of similar rho, each
    chunk's grid about 2^22 values."""
    u = x.double() / 2
    rho = torch.linalg.norm(u, dim=1)
    out = torch.empty(len(x), dtype=torch.float64)
    order = torch.argsort(rho, descending=True)
    start = 0
    while start < len(x):
        steps = pinwheel_grid_steps(rho[order[start]].item())
        chunk = order[start:start + max(1, (1 << 22) // steps)]
        out[chunk] = pinwheel_log_density_chunk(u[chunk], steps)
        start += len(chunk)
    return out


def pinwheel_grid_steps(rho):
    """Grid points per turn for |u| up to rho: g varies by at most
    2 pi (1 + 0.25 e^rho rho) over a turn, about 0.1 rad a step."""
    return int(64 + 64 * (1 + PIN_RATE * math.exp(rho) * rho))


def pinwheel_log_density_chunk(u, steps):
    """log_p_pinwheel at x = 2u, scanning each arm on `steps` grid points."""
    rho = torch.linalg.norm(u, dim=1)
    theta = torch.atan2(u[:, 1], u[:, 0])
    alpha = torch.linspace(-math.pi, math.pi, steps + 1, dtype=torch.float64)
    twopi = 2 * math.pi
    norm = 2 * math.pi * PIN_RSTD * PIN_QSTD
    p = torch.zeros(len(u), dtype=torch.float64)

    def g(a, rho, shift):  # elementwise; the roots sought are g = 2 pi m
        return a - PIN_RATE * torch.exp(rho * torch.cos(a)) - shift

    for k in range(PIN_ARMS):
        shift = twopi * k / PIN_ARMS + theta
        turns = torch.floor(g(alpha[None, :], rho[:, None], shift[:, None]) / twopi)  # [N, steps+1]
        # A step whose floor(g/2pi) changes crosses the multiple between; the
        # last grid point is the first one again (alpha = pi = -pi), left out.
        idx, j = torch.nonzero(turns[:, 1:] != turns[:, :-1], as_tuple=True)
        target = twopi * torch.maximum(turns[idx, j], turns[idx, j + 1])
        lo, hi = alpha[j].clone(), alpha[j + 1].clone()
        rho_i, shift_i = rho[idx], shift[idx] + target
        f_lo = g(lo, rho_i, shift_i)
        for _ in range(60):
            mid = (lo + hi) / 2
            f_mid = g(mid, rho_i, shift_i)
            same = (f_mid < 0) == (f_lo < 0)
            lo, f_lo = torch.where(same, mid, lo), torch.where(same, f_mid, f_lo)
            hi = torch.where(same, hi, mid)
        r, q = rho_i * torch.cos(lo), rho_i * torch.sin(lo)
        dens = torch.exp(-(((r - 1) / PIN_RSTD) ** 2 + (q / PIN_QSTD) ** 2) / 2) / norm \
            / torch.abs(1 + PIN_RATE * torch.exp(r) * q)
        p.index_add_(0, idx, dens)
    return torch.log(p / PIN_ARMS / 4)


# name -> (sample(n) -> float32 [n,2], log_p(x [N,2]) -> float64 [N])
DATASETS = {
    "25gaussians": mixture(CENTRES64, STD),
    "8gaussians": mixture(CENTRES8, 0.5 / SQRT2),
    "checkerboard": (sample_checkerboard, log_p_checkerboard),
    "pinwheel": (sample_pinwheel, log_p_pinwheel),
}


# ---------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------


INITS = ("pytorch", "xavier")


def make_energy(hidden=128, depth=4, init="pytorch"):
    """Energy MLP 2 -> hidden x depth -> 1 with softplus activations.

    init "pytorch" keeps nn.Linear's default (weights and biases uniform in
    +-1/sqrt(fan_in)); "xavier" redraws every weight with xavier_normal_
    (std sqrt(2/(fan_in+fan_out))) and zeroes every bias, as the Go nets.dense.
    """
    if init not in INITS:
        raise ValueError(f"init {init!r}: want one of {INITS}")
    layers, d_in = [], 2
    for _ in range(depth):
        layers += [nn.Linear(d_in, hidden), nn.Softplus()]
        d_in = hidden
    layers.append(nn.Linear(d_in, 1))
    if init == "xavier":
        for layer in layers:
            if isinstance(layer, nn.Linear):
                nn.init.xavier_normal_(layer.weight)
                nn.init.zeros_(layer.bias)
    return nn.Sequential(*layers)


def energy(net, x):
    """E(x) as a vector [N]."""
    return net(x).squeeze(-1)


# ---------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------

ED_T, ED_M, ED_W = 1.0, 4, 1.0
CD_STEPS, CD_EPS, CD_REG = 10, 0.01, 0.3


def loss_ed(net, x, t=ED_T, m=ED_M, w=ED_W):
    """Energy Discrepancy with Gaussian perturbation and w-stabiliser."""
    b, d = x.shape
    s = math.sqrt(t)
    xi = torch.randn(b, 1, d)
    xi2 = torch.randn(b, m, d)
    y = x[:, None, :] + s * xi + s * xi2  # [B,M,d]
    e = energy(net, torch.cat([x, y.reshape(b * m, d)], dim=0))  # one call
    e_x, e_y = e[:b], e[b:].reshape(b, m)
    diff = e_x[:, None] - e_y  # [B,M]
    logw = torch.full((b, 1), math.log(w))
    return (torch.logsumexp(torch.cat([logw, diff], dim=1), dim=1) - math.log(m)).mean()


def loss_sm(net, x):
    """Exact Hyvarinen score matching with the Laplacian (double backward)."""
    x = x.detach().requires_grad_(True)
    e = energy(net, x)
    (g,) = torch.autograd.grad(e.sum(), x, create_graph=True)  # [B,d]
    lap = torch.zeros_like(e)
    for k in range(x.shape[1]):
        (h,) = torch.autograd.grad(g[:, k].sum(), x, create_graph=True)
        lap = lap + h[:, k]
    return (0.5 * (g ** 2).sum(1) - lap).mean()


def langevin(net, x, steps=CD_STEPS, eps=CD_EPS):
    """Unadjusted Langevin on exp(-E) from x; returns detached samples."""
    x = x.detach()
    noise = math.sqrt(eps)
    for _ in range(steps):
        x.requires_grad_(True)
        (g,) = torch.autograd.grad(energy(net, x).sum(), x)
        x = (x - 0.5 * eps * g + noise * torch.randn_like(x)).detach()
    return x


def loss_cd(net, x):
    """Contrastive divergence with short-run Langevin negatives from the data."""
    b = x.shape[0]
    x_neg = langevin(net, x)
    e = energy(net, torch.cat([x, x_neg], dim=0))  # one call
    e_pos, e_neg = e[:b], e[b:]
    return e_pos.mean() - e_neg.mean() + CD_REG * (e_pos ** 2 + e_neg ** 2).mean()


LOSSES = {"ed": loss_ed, "sm": loss_sm, "cd": loss_cd}

# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------


class Trainer:
    """Holds the model, its EMA copy and the optimiser for one method."""

    def __init__(self, method, batch, lr=1e-3, ema=0.999, data="25gaussians",
                 init="pytorch"):
        self.loss_fn = LOSSES[method]
        self.batch = batch
        self.sample = DATASETS[data][0]
        self.net = make_energy(init=init)
        self.ema_net = copy.deepcopy(self.net)
        for p in self.ema_net.parameters():
            p.requires_grad_(False)
        self.params = list(self.net.parameters())
        self.ema_params = list(self.ema_net.parameters())
        self.ema_weight = 1.0 - ema
        self.opt = torch.optim.Adam(self.params, lr=lr)

    def step(self):
        """One full training step; returns the loss as a 0-d tensor."""
        x = self.sample(self.batch)
        loss = self.loss_fn(self.net, x)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        with torch.no_grad():
            for pe, p in zip(self.ema_params, self.params):
                pe.lerp_(p, self.ema_weight)
        return loss.detach()


def blas_library():
    """Path of the BLAS shared library torch has loaded (Linux), or "unknown"."""
    torch.randn(64, 64) @ torch.randn(64, 64)  # make sure BLAS is in use
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f
                     if "blas" in os.path.basename(line.split()[-1]).lower()}
    except OSError:
        return "unknown"
    paths = sorted(os.path.realpath(p) for p in paths if p.startswith("/"))
    return ",".join(paths) if paths else "unknown"


def bench(method, steps, warmup, batch, data="25gaussians", init="pytorch"):
    """Returns steps per second over `steps` timed steps after `warmup`."""
    tr = Trainer(method, batch, data=data, init=init)
    for _ in range(warmup):
        tr.step()
    t0 = time.perf_counter()
    for _ in range(steps):
        tr.step()
    return steps / (time.perf_counter() - t0)


@torch.no_grad()
def log_density_mse(net, data, n=5000):
    """Log-density MSE of exp(-E) against the exact density, log Z by IS."""
    sample, log_p = DATASETS[data]
    xs = sample(n)
    log_w = -energy(net, xs).double() - log_p(xs)
    log_z = torch.logsumexp(log_w, 0) - math.log(n)
    xt = sample(n)
    err = -energy(net, xt).double() - log_z - log_p(xt)
    return (err ** 2).mean().item(), log_z.item()


def check(method, steps, batch, data="25gaussians", init="pytorch", window=100,
          curve_every=0):
    """Trains `steps` steps; returns loss summaries and the EMA model's MSE.

    With curve_every > 0 the EMA model's MSE is also recorded every
    curve_every steps (as train-toy's mse.csv). Those evaluations run under
    fork_rng, so the training's random stream and the final value are the
    same as without them.
    """
    tr = Trainer(method, batch, data=data, init=init)
    losses = torch.empty(steps)
    curve = []
    secs = 0.0
    for i in range(steps):
        t0 = time.perf_counter()
        losses[i] = tr.step()
        secs += time.perf_counter() - t0
        if curve_every > 0 and (i + 1) % curve_every == 0 and i + 1 < steps:
            with torch.random.fork_rng():
                curve.append([i + 1, log_density_mse(tr.ema_net, data)[0]])
    w = min(window, steps)
    mse, log_z = log_density_mse(tr.ema_net, data)
    curve.append([steps, mse])
    return {
        "method": method,
        "data": data,
        "init": init,
        "steps": steps,
        "loss_first": losses[:w].mean().item(),
        "loss_last": losses[-w:].mean().item(),
        "logdens_mse_ema": mse,
        "logZ": log_z,
        "seconds": secs,
        "curve": curve if curve_every > 0 else None,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--method", default="all", choices=["ed", "sm", "cd", "all"])
    ap.add_argument("--steps", type=int, default=2000, help="timed steps")
    ap.add_argument("--warmup", type=int, default=100, help="untimed steps first")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch intra-op threads (default: torch's default)")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0,
                    help="torch.manual_seed before each method (initialisation, data, noise)")
    ap.add_argument("--data", default="25gaussians", choices=list(DATASETS),
                    help="2-D data set, as datasets/toy2d (default 25gaussians)")
    ap.add_argument("--init", default="pytorch", choices=list(INITS),
                    help="pytorch: nn.Linear's default; xavier: xavier_normal_ weights, zero biases")
    ap.add_argument("--json", action="store_true", help="one JSON line per method")
    ap.add_argument("--check", action="store_true",
                    help="train --check-steps steps per method, print loss and MSE")
    ap.add_argument("--check-steps", type=int, default=5000)
    ap.add_argument("--curve-every", type=int, default=1000,
                    help="--check: also record the EMA model's MSE every this many steps (0: last only)")
    args = ap.parse_args(argv)

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    blas = blas_library()
    methods = ["ed", "sm", "cd"] if args.method == "all" else [args.method]

    if args.check:
        if not args.json:
            print(f"# torch {torch.__version__}, threads {threads}, batch {args.batch},"
                  f" data {args.data}, init {args.init}, seed {args.seed}, blas {blas}")
            print(f"{'method':<6} {'steps':>6} {'loss@first100':>14} {'loss@last100':>13}"
                  f" {'logdens MSE (EMA)':>18} {'logZ':>8} {'secs':>7}")
        for m in methods:
            torch.manual_seed(args.seed)
            r = check(m, args.check_steps, args.batch, args.data, args.init,
                      curve_every=args.curve_every)
            if args.json:
                print(json.dumps({"impl": "pytorch", "torch": torch.__version__,
                                  "threads": threads, "blas": blas, "seed": args.seed,
                                  "batch": args.batch, **r}))
            else:
                print(f"{m:<6} {r['steps']:>6} {r['loss_first']:>14.4f} {r['loss_last']:>13.4f}"
                      f" {r['logdens_mse_ema']:>18.4f} {r['logZ']:>8.3f} {r['seconds']:>7.1f}")
            sys.stdout.flush()
        return

    if not args.json:
        print(f"# torch {torch.__version__}, threads {threads}, batch {args.batch},"
              f" {args.steps} timed steps after {args.warmup} warmup,"
              f" data {args.data}, init {args.init}, seed {args.seed}")
        print(f"# blas {blas}")
        print(f"{'method':<6} {'steps/s':>10} {'ms/step':>9}")
    for m in methods:
        torch.manual_seed(args.seed)
        sps = bench(m, args.steps, args.warmup, args.batch, args.data, args.init)
        if args.json:
            print(json.dumps({"impl": "pytorch", "method": m, "steps_per_sec": sps,
                              "threads": threads, "torch": torch.__version__,
                              "batch": args.batch, "steps": args.steps, "blas": blas,
                              "data": args.data, "init": args.init, "seed": args.seed}))
        else:
            print(f"{m:<6} {sps:>10.1f} {1000.0 / sps:>9.3f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
