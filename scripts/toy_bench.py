#!/usr/bin/python3
"""PyTorch CPU baseline for the 2-D toy density experiments (25-Gaussians).

What it measures
----------------
Training throughput (optimiser steps per second) of the toy energy MLP
2 -> 128 -> 128 -> 128 -> 128 -> 1 (softplus activations, biases, default
nn.Linear init) trained on 25-Gaussians with Adam (lr 1e-3), batch 128 fresh
samples per step, and a parameter EMA (decay 0.999) updated every step. This
matches the Go implementation's toy benchmark (see /work/shared/SPEC.md,
"Toy density estimation"), so the two can be run side by side on one machine.

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
with log p_data computed exactly from the mixture.

How to run (Debian's PyTorch: apt-get install python3-torch)
-----------------------------------------------------------
  /usr/bin/python3 scripts/toy_bench.py --method all --threads 2
  /usr/bin/python3 scripts/toy_bench.py --method ed --steps 5000 --json
  /usr/bin/python3 scripts/toy_bench.py --check [--check-steps 5000]

Dependencies: torch and the Python standard library only.

Caveats that dominate the numbers
---------------------------------
* BLAS. Debian's python3-torch is built with BLAS_INFO=generic and calls the
  system libblas.so.3. If only the reference (Netlib) BLAS is installed, every
  matmul runs on it and training is ~4-8x slower than with OpenBLAS. The
  script reports the library it actually loaded (field "blas"). To benchmark
  with OpenBLAS either install it system-wide (apt-get install
  libopenblas0-pthread, which switches the libblas.so.3 alternative), or
  extract it privately and point the loader at it:
      apt-get download libopenblas0-pthread
      dpkg -x libopenblas0-pthread_*.deb /tmp/ob
      LD_LIBRARY_PATH=/tmp/ob/usr/lib/x86_64-linux-gnu/openblas-pthread \
          /usr/bin/python3 scripts/toy_bench.py ...
* Threads. torch's intra-op threads are OpenMP threads. These layers are
  small (at most 640x128 activations), so on a 2-core machine shared with
  other processes --threads 2 can be several times SLOWER than --threads 1
  (OpenMP barriers wait on a busy core); compare both.
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
# Data: 25-Gaussians
# ---------------------------------------------------------------------------

GRID = (-1.0, -0.5, 0.0, 0.5, 1.0)
SCALE = 4.0 / 1.414
STD = 0.2 / 1.414
CENTRES = torch.tensor([[SCALE * a, SCALE * b] for a in GRID for b in GRID])


def sample_data(n):
    """Draws n points from the 25-Gaussians mixture (equal weights)."""
    idx = torch.randint(len(CENTRES), (n,))
    return CENTRES[idx] + STD * torch.randn(n, 2)


def log_p_data(x):
    """Exact log-density of the 25-Gaussians mixture at x [N,2] (float64)."""
    x = x.double()
    c = CENTRES.double()
    sq = ((x[:, None, :] - c[None, :, :]) ** 2).sum(-1)  # [N,K]
    log_comp = -sq / (2 * STD ** 2) - math.log(2 * math.pi * STD ** 2)
    return torch.logsumexp(log_comp, dim=1) - math.log(len(c))


# ---------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------


def make_energy(hidden=128, depth=4):
    """Energy MLP 2 -> hidden x depth -> 1 with softplus activations."""
    layers, d_in = [], 2
    for _ in range(depth):
        layers += [nn.Linear(d_in, hidden), nn.Softplus()]
        d_in = hidden
    layers.append(nn.Linear(d_in, 1))
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

    def __init__(self, method, batch, lr=1e-3, ema=0.999):
        self.loss_fn = LOSSES[method]
        self.batch = batch
        self.net = make_energy()
        self.ema_net = copy.deepcopy(self.net)
        for p in self.ema_net.parameters():
            p.requires_grad_(False)
        self.params = list(self.net.parameters())
        self.ema_params = list(self.ema_net.parameters())
        self.ema_weight = 1.0 - ema
        self.opt = torch.optim.Adam(self.params, lr=lr)

    def step(self):
        """One full training step; returns the loss as a 0-d tensor."""
        x = sample_data(self.batch)
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


def bench(method, steps, warmup, batch):
    """Returns steps per second over `steps` timed steps after `warmup`."""
    tr = Trainer(method, batch)
    for _ in range(warmup):
        tr.step()
    t0 = time.perf_counter()
    for _ in range(steps):
        tr.step()
    return steps / (time.perf_counter() - t0)


@torch.no_grad()
def log_density_mse(net, n=5000):
    """Log-density MSE of exp(-E) against the exact mixture, log Z by IS."""
    xs = sample_data(n)
    log_w = -energy(net, xs).double() - log_p_data(xs)
    log_z = torch.logsumexp(log_w, 0) - math.log(n)
    xt = sample_data(n)
    err = -energy(net, xt).double() - log_z - log_p_data(xt)
    return (err ** 2).mean().item(), log_z.item()


def check(method, steps, batch, window=100):
    """Trains `steps` steps; returns loss summaries and the EMA model's MSE."""
    tr = Trainer(method, batch)
    losses = torch.empty(steps)
    t0 = time.perf_counter()
    for i in range(steps):
        losses[i] = tr.step()
    secs = time.perf_counter() - t0
    w = min(window, steps)
    mse, log_z = log_density_mse(tr.ema_net)
    return {
        "method": method,
        "steps": steps,
        "loss_first": losses[:w].mean().item(),
        "loss_last": losses[-w:].mean().item(),
        "logdens_mse_ema": mse,
        "logZ": log_z,
        "seconds": secs,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--method", default="all", choices=["ed", "sm", "cd", "all"])
    ap.add_argument("--steps", type=int, default=2000, help="timed steps")
    ap.add_argument("--warmup", type=int, default=100, help="untimed steps first")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch intra-op threads (default: torch's default)")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="one JSON line per method")
    ap.add_argument("--check", action="store_true",
                    help="train --check-steps steps per method, print loss and MSE")
    ap.add_argument("--check-steps", type=int, default=5000)
    args = ap.parse_args(argv)

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    blas = blas_library()
    methods = ["ed", "sm", "cd"] if args.method == "all" else [args.method]

    if args.check:
        print(f"# torch {torch.__version__}, threads {threads}, batch {args.batch},"
              f" blas {blas}")
        print(f"{'method':<6} {'steps':>6} {'loss@first100':>14} {'loss@last100':>13}"
              f" {'logdens MSE (EMA)':>18} {'logZ':>8} {'secs':>7}")
        for m in methods:
            torch.manual_seed(args.seed)
            r = check(m, args.check_steps, args.batch)
            if args.json:
                print(json.dumps({"impl": "pytorch", "torch": torch.__version__,
                                  "threads": threads, "blas": blas, **r}))
            else:
                print(f"{m:<6} {r['steps']:>6} {r['loss_first']:>14.4f} {r['loss_last']:>13.4f}"
                      f" {r['logdens_mse_ema']:>18.4f} {r['logZ']:>8.3f} {r['seconds']:>7.1f}")
            sys.stdout.flush()
        return

    if not args.json:
        print(f"# torch {torch.__version__}, threads {threads}, batch {args.batch},"
              f" {args.steps} timed steps after {args.warmup} warmup")
        print(f"# blas {blas}")
        print(f"{'method':<6} {'steps/s':>10} {'ms/step':>9}")
    for m in methods:
        torch.manual_seed(args.seed)
        sps = bench(m, args.steps, args.warmup, args.batch)
        if args.json:
            print(json.dumps({"impl": "pytorch", "method": m, "steps_per_sec": sps,
                              "threads": threads, "torch": torch.__version__,
                              "batch": args.batch, "steps": args.steps, "blas": blas}))
        else:
            print(f"{m:<6} {sps:>10.1f} {1000.0 / sps:>9.3f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
