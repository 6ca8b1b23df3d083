#!/usr/bin/python3
"""PyTorch reference of one LEBM training iteration, for speed comparisons
with cmd/bench-lebm (GoMLX).

What it is
----------
A line-by-line PyTorch port of what lebm.TrainStepGraph computes in one
training iteration of the latent-space energy-based prior model (Pang et al.
2020) with an Energy Discrepancy (ED), contrastive divergence (CD) or score
matching (SM) prior update, at the paper's data-set shapes (svhn, cifar10,
celeba64; also celeba128 and mnist), with lebm.DefaultConfig's settings:

  prior        p(z) ∝ exp(-f(z)) N(0, σ0² I), σ0 = 1; U(z) = f(z) + ‖z‖²/(2σ0²);
               f = MLP nz→200→200→1, LeakyReLU 0.1, Xavier-normal weights,
               zero biases (nets.LEBMPriorMLP, nets.EnergyMLP)
  generator    z as a 1×1 image → ConvTranspose2d layers with biases, LeakyReLU
               0.2 between them, tanh after the last; no batch norm;
               Xavier-normal kernels, biases uniform ±1/√(out·k²)
               (nets.Generator, nets.ConvTranspose2DLayer)
  likelihood   U_post(z) = ‖x − G(z)‖²/(2σ²) + U(z), σ = 0.3, summed over pixels
  Langevin     z ← z − (s²/2) ∇U(z) + s ξ, chains from N(0, I) (losses.Langevin)
               posterior s 0.1, 20 steps (40 for cifar10); CD prior chains
               s 0.4, 60 steps; generation s 0.2, 500 steps; test posterior
               s 0.1, 100 steps

One training iteration (lebm.Losses + TrainStepGraph):
  1. z0 ~ N(0, I) [B, nz]; z_post = posterior Langevin on U_post (detached);
  2. generator loss  L_G = mean_i ‖x_i − G(z_post,i)‖² (summed squared error);
     metrics: reconstruction MSE = L_G / pixels, mean f(z_post) (no grad);
  3. prior loss at the same z_post, with the pre-update generator:
       ed  z'_ij = z_i + √t ξ_i + √t ξ'_ij, t 0.25, M 16, w 1;
           L = mean_i [logsumexp([log w, U(z_i) − U(z'_i1), …]) − log M],
           U evaluated once on all B(1+M) points (losses.EnergyDiscrepancy)
       cd  z_prior = prior Langevin on U from N(0, I) (B chains, detached);
           L = mean f(z_post) − mean f(z_prior), both through f in one call
           (losses.ContrastiveDivergenceWithNegatives, regulariser 0)
       sm  "fisher" (the default SMVariant): L = ½ mean_i ‖∇U(z_i) −
           sg(∇U_post(z_i))‖² (the posterior score needs a generator forward
           and backward pass); "exact" and "sliced" also available
  4. one backward pass of L_G + L_prior (disjoint parameters), then two Adams:
     generator lr 1e-4, prior lr 5e-5, betas (0.5, 0.999), ε 1e-8;
  5. finiteness checks of x, z_post, both losses, the energies and every
     updated parameter and Adam moment; if one fails the update is undone
     (--guard full, the default: a snapshot before the step, restored on
     failure; TrainStepGraph selects old values with Where instead); the
     metrics and flags are read back to the host (one synchronisation per
     iteration, as Model.TrainStep reads them).

The "prior update alone" (cmd/bench-lebm's measurePrior): z ~ N(0, I) at
--prior-batch, the prior loss and its gradient with respect to the prior's
parameters (for cd this includes the 60-step prior chains, for sm/fisher
a generator forward and backward pass on --prior-batch random images).

A second table times sampling: generation (500 prior Langevin steps of 0.2
from N(0, I), then G, at --gen-batch; Model.Generate) and the test-time
posterior (100 Langevin steps of 0.1 on U_post from N(0, I), at --batch;
Model.PosteriorSample, which returns z).

Images are uniform noise in [-1, 1] of the generator's output shape, NCHW
(the Go code is NHWC; sums over pixels are the same). Parameter counts
equal the Go model's (see --print-params); random numbers differ.

Timing: one warm-up call, then --iters (--prior-iters) timed calls with
time.perf_counter, torch.cuda.synchronize() around the timed region on CUDA
(and per call: each training iteration reads its metrics back; each prior
update and sampling call is synchronised).

Work: beside each time, the FLOPs of one call as counted while it runs
(FlopCounter: 2 per multiply-add of every aten matrix product and
convolution, forward and backward, the convention of cmd/bench-lebm's
lebm.Config.TrainingFLOPs, which are computed from the architecture instead:
the two columns check each other) and the rate achieved. The count is taken
on an extra, untimed call.

How to run
----------
  python3 baselines/lebm_bench.py --device cuda --batch 128 --out docs/results/lebm-speed-gpu-pytorch.md
  /usr/bin/python3 baselines/lebm_bench.py --device cpu --threads 1 --shapes svhn --batch 2 --iters 1
  python3 baselines/lebm_bench.py --print-params        # per-layer shapes and totals
  python3 baselines/lebm_bench.py --check               # ED (and Langevin) vs a numpy loop, float64

Dependencies: torch (1.13 or later), numpy only for --check.
"""

import argparse
import datetime
import math
import os
import sys
import time

import torch
from torch import nn
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

# ---------------------------------------------------------------------------
# Configuration (lebm.DefaultConfig, nets.GeneratorPreset, nets.LEBMPriorMLP)
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


class Config:
    """lebm.DefaultConfig(shape), method ED unless changed."""

    def __init__(self, shape, method="ed", sm_variant="fisher", sm_projections=1):
        if shape not in GENERATOR_PRESETS:
            raise SystemExit(f"lebm_bench: unknown shape {shape!r}; valid: "
                             f"{', '.join(sorted(GENERATOR_PRESETS))}")
        self.shape = shape
        self.nz, self.layers = GENERATOR_PRESETS[shape]
        self.sigma = 0.3
        self.prior_sigma = 1.0
        # (step size s, steps)
        self.posterior_langevin = (0.1, 40 if shape == "cifar10" else 20)
        self.test_posterior_langevin = (0.1, 100)
        self.prior_langevin = (0.4, 60)
        self.generation_langevin = (0.2, 500)
        self.method = method
        self.ed_t, self.ed_m, self.ed_w, self.ed_drop_log_m = 0.25, 16, 1.0, False
        self.sm_variant = sm_variant
        self.sm_projections = sm_projections
        self.generator_lr, self.prior_lr = 1e-4, 5e-5
        self.betas = (0.5, 0.999)
        self.adam_eps = 1e-8

    def image_shape(self):
        """(channels, height, width) of the generator's output."""
        size = 1
        for _, k, s, p in self.layers:
            size = (size - 1) * s - 2 * p + k
        return self.layers[-1][0], size, size


# ---------------------------------------------------------------------------
# Networks
# ---------------------------------------------------------------------------


class Generator(nn.Module):
    """nets.Generator: transposed convolutions with biases, LeakyReLU 0.2
    between them, tanh after the last; no normalisation."""

    def __init__(self, cfg):
        super().__init__()
        self.nz = cfg.nz
        layers, cin = [], cfg.nz
        for out, k, s, p in cfg.layers:
            conv = nn.ConvTranspose2d(cin, out, k, stride=s, padding=p, bias=True)
            # Xavier-normal, std √(2/((cin+out)·k²)) (nets.ConvTranspose2DLayer).
            nn.init.xavier_normal_(conv.weight)
            bound = 1.0 / math.sqrt(out * k * k)
            nn.init.uniform_(conv.bias, -bound, bound)
            layers.append(conv)
            cin = out
        self.layers = nn.ModuleList(layers)

    def forward(self, z):
        x = z.reshape(z.shape[0], self.nz, 1, 1)
        for i, conv in enumerate(self.layers):
            if i > 0:
                x = F.leaky_relu(x, GENERATOR_LEAKY_SLOPE)
            x = conv(x)
        return torch.tanh(x)


class PriorMLP(nn.Module):
    """nets.EnergyMLP with nets.LEBMPriorMLP: nz→200→200→1, LeakyReLU 0.1,
    Xavier-normal weights, zero biases; returns f(z) [B]."""

    def __init__(self, nz, hidden=PRIOR_HIDDEN, slope=PRIOR_LEAKY_SLOPE):
        super().__init__()
        dims = [nz, *hidden, 1]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        for lin in self.layers:
            nn.init.xavier_normal_(lin.weight)
            nn.init.zeros_(lin.bias)
        self.slope = slope

    def forward(self, z):
        h = z
        for i, lin in enumerate(self.layers):
            h = lin(h)
            if i < len(self.layers) - 1:
                h = F.leaky_relu(h, self.slope)
        return h.squeeze(-1)


class LEBM:
    """The generator, the prior, their energies and their two Adams."""

    def __init__(self, cfg, device, dtype, compile_mode=False, channels_last=False,
                 adam_impl="default", autocast_bf16=False):
        self.cfg = cfg
        self.autocast_bf16 = autocast_bf16
        self.device, self.dtype = device, dtype
        self.gen = Generator(cfg).to(device=device, dtype=dtype)
        self.prior = PriorMLP(cfg.nz).to(device=device, dtype=dtype)
        self.channels_last = channels_last
        if channels_last:
            self.gen = self.gen.to(memory_format=torch.channels_last)
        self.G, self.f_net = self.gen, self.prior
        self.f_net_eager = self.prior  # for double backward (SM): compiled graphs lack it
        if compile_mode:
            self.G, self.f_net = torch.compile(self.gen), torch.compile(self.prior)
        self.opt_g = make_adam(self.gen.parameters(), cfg.generator_lr, cfg, adam_impl)
        self.opt_p = make_adam(self.prior.parameters(), cfg.prior_lr, cfg, adam_impl)

    # Energies (lebm/energy.go) ------------------------------------------------
    def f(self, z, eager=False):
        """EBMEnergy: the learned part f(z) [B]."""
        return (self.f_net_eager if eager else self.f_net)(z)

    def U(self, z, eager=False):
        """PriorEnergy: U(z) = f(z) + ‖z‖²/(2σ0²) [B]."""
        s0 = self.cfg.prior_sigma
        return self.f(z, eager) + z.square().sum(1) * (1.0 / (2 * s0 * s0))

    def decode(self, z):
        if not self.autocast_bf16:
            return self.G(z)
        # Like Go's -compute-dtype bfloat16: only the generator's layers in
        # bfloat16; energies, losses and Langevin updates stay in float32.
        with torch.autocast(device_type=self.device.type, dtype=torch.bfloat16):
            x = self.G(z)
        return x.float()

    def squared_error(self, x, z):
        """‖x − G(z)‖² per example [B]."""
        return (x - self.decode(z)).square().sum((1, 2, 3))

    def U_post(self, x, z, eager=False):
        """PosteriorEnergy: ‖x − G(z)‖²/(2σ²) + U(z) [B]."""
        s = self.cfg.sigma
        return self.squared_error(x, z) * (1.0 / (2 * s * s)) + self.U(z, eager)

    def base_sample(self, n):
        return torch.randn(n, self.cfg.nz, device=self.device, dtype=self.dtype)

    def random_images(self, n, seed=1):
        """Uniform noise in [-1, 1] of the generator's output shape."""
        c, h, w = self.cfg.image_shape()
        g = torch.Generator(device="cpu").manual_seed(seed)
        x = (2 * torch.rand(n, c, h, w, generator=g, dtype=torch.float64) - 1)
        x = x.to(device=self.device, dtype=self.dtype)
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        return x


def make_adam(params, lr, cfg, impl):
    kw = dict(lr=lr, betas=cfg.betas, eps=cfg.adam_eps)
    if impl in ("foreach", "fused"):
        try:
            return torch.optim.Adam(params, **kw, **{impl: True})
        except (TypeError, RuntimeError) as err:
            print(f"# Adam {impl}=True unavailable ({err}); using the default", file=sys.stderr)
    return torch.optim.Adam(params, **kw)


# ---------------------------------------------------------------------------
# Langevin and losses (losses/*.go)
# ---------------------------------------------------------------------------


def energy_gradient(energy, z, create_graph=False):
    """(E(z), ∇_z Σ E(z)): the per-example gradient, examples independent."""
    e = energy(z)
    (g,) = torch.autograd.grad(e.sum(), z, create_graph=create_graph)
    return e, g


def langevin(energy, z0, step_size, steps, no_noise=False):
    """losses.Langevin: z ← z − (s²/2)∇E(z) + s ξ, ξ ~ N(0, I); returns the
    final state detached. Only ∇_z is computed (autograd.grad on z)."""
    s = step_size
    z = z0.detach()
    for _ in range(steps):
        z.requires_grad_(True)
        _, g = energy_gradient(energy, z)
        with torch.no_grad():
            z = z - (s * s / 2) * g
            if not no_noise:
                z = z + s * torch.randn_like(z)
    return z.detach()


def ed_loss_with_noise(energy, z, xi, xi_prime, t, m, w, drop_log_m=False):
    """losses.EnergyDiscrepancyWithNoise: xi like z [B, d], xi_prime [B, M, d];
    L = mean_i log(w/M + (1/M) Σ_j exp(E(z_i) − E(y_ij))), by logsumexp over
    [log w, E(z_i) − E(y_i1), …] minus log M; E evaluated once on B(1+M) rows."""
    b, d = z.shape
    st = math.sqrt(t)
    y = (z + st * xi).unsqueeze(1) + st * xi_prime  # [B, M, d]
    points = torch.cat([z.unsqueeze(1), y], 1).reshape(b * (1 + m), d)
    e = energy(points).reshape(b, 1 + m)
    diff = e[:, :1] - e[:, 1:]  # [B, M]
    log_w = torch.full((b, 1), math.log(w) if w > 0 else -math.inf,
                       device=z.device, dtype=z.dtype)
    per_example = torch.logsumexp(torch.cat([log_w, diff], 1), 1)
    if not drop_log_m:
        per_example = per_example - math.log(m)
    return per_example.mean()


def ed_loss(energy, z, t, m, w, drop_log_m=False):
    """losses.EnergyDiscrepancy: draws ξ [B, d] and ξ' [B, M, d]."""
    xi = torch.randn_like(z)
    xi_prime = torch.randn(z.shape[0], m, z.shape[1], device=z.device, dtype=z.dtype)
    return ed_loss_with_noise(energy, z, xi, xi_prime, t, m, w, drop_log_m)


def cd_loss_with_negatives(f, z_pos, z_neg):
    """losses.ContrastiveDivergenceWithNegatives, regulariser 0: positives and
    (detached) negatives through f in one call; returns (loss, mean f(z_neg))."""
    b = z_pos.shape[0]
    e = f(torch.cat([z_pos, z_neg.detach()], 0)).reshape(2, b)
    return e[0].mean() - e[1].mean(), e[1].detach().mean()


def exact_sm_loss(energy, z):
    """losses.ScoreMatching: mean_i [½‖∇E‖² − ΔE], the Laplacian by one
    backward pass per dimension."""
    z = z.detach().requires_grad_(True)
    _, g = energy_gradient(energy, z, create_graph=True)
    lap = torch.zeros(z.shape[0], device=z.device, dtype=z.dtype)
    for k in range(z.shape[1]):
        (h,) = torch.autograd.grad(g[:, k].sum(), z, create_graph=True)
        lap = lap + h[:, k]
    return (0.5 * g.square().sum(1) - lap).mean()


def sliced_sm_loss(energy, z, projections):
    """losses.SlicedScoreMatching (Gaussian v, not variance-reduced):
    mean [−vᵀ∇²E v + ½(vᵀ∇E)²] over K projections, all in one batch."""
    k, (b, d) = projections, z.shape
    v = torch.randn(k, b, d, device=z.device, dtype=z.dtype).reshape(k * b, d)
    xs = z.detach().unsqueeze(0).expand(k, b, d).reshape(k * b, d).requires_grad_(True)
    _, g = energy_gradient(energy, xs, create_graph=True)
    gv = (g * v).sum(1)
    (hv,) = torch.autograd.grad(gv.sum(), xs, create_graph=True)
    vhv = (hv * v).sum(1)
    return (0.5 * gv.square() - vhv).mean()


def prior_loss(model, x, z_post):
    """lebm.PriorLoss: (loss, mean f(z_prior) for cd else None)."""
    cfg = model.cfg
    z = z_post.detach()
    if cfg.method == "ed":
        return ed_loss(model.U, z, cfg.ed_t, cfg.ed_m, cfg.ed_w, cfg.ed_drop_log_m), None
    if cfg.method == "cd":
        s, steps = cfg.prior_langevin
        z_prior = langevin(model.U, model.base_sample(z.shape[0]), s, steps)
        return cd_loss_with_negatives(model.f, z, z_prior)
    if cfg.method != "sm":
        raise SystemExit(f"lebm_bench: unknown method {cfg.method!r}")
    prior_energy = lambda q: model.U(q, eager=True)  # double backward: eager
    if cfg.sm_variant == "fisher":
        # ∇log p_θ(z) − ∇log p(z|x) = ∇U_post(z) − ∇U(z); the posterior score
        # (generator forward + backward) is data: no gradient through it.
        zp = z.clone().requires_grad_(True)
        _, prior_score = energy_gradient(prior_energy, zp, create_graph=True)
        zq = z.clone().requires_grad_(True)
        _, post_score = energy_gradient(lambda q: model.U_post(x, q, eager=True), zq)
        diff = prior_score - post_score.detach()
        return 0.5 * diff.square().sum(1).mean(), None
    if cfg.sm_variant == "exact":
        return exact_sm_loss(prior_energy, z), None
    if cfg.sm_variant == "sliced":
        return sliced_sm_loss(prior_energy, z, cfg.sm_projections), None
    raise SystemExit(f"lebm_bench: unknown SM variant {cfg.sm_variant!r}")


# ---------------------------------------------------------------------------
# One training iteration (lebm.TrainStepGraph) and the other timed calls
# ---------------------------------------------------------------------------

METRICS = ["generator loss", "prior loss", "mean f(z_post)", "mean f(z_prior)",
           "reconstruction MSE"]
CHECKS = ["input batch x", "posterior samples z_post", "generator loss", "prior loss",
          "mean f(z_post)", "mean f(z_prior)", "updated model and optimizer variables"]


class Snapshot:
    """Parameters and Adam states before an update, to undo it (--guard full)."""

    def __init__(self, opts):
        self.saved = []
        for opt in opts:
            for group in opt.param_groups:
                for p in group["params"]:
                    st = opt.state.get(p)
                    st = ({k: (v.clone() if torch.is_tensor(v) else v) for k, v in st.items()}
                          if st else None)
                    self.saved.append((opt, p, p.detach().clone(), st))

    def restore(self):
        with torch.no_grad():
            for opt, p, value, st in self.saved:
                p.copy_(value)
                if st is None:
                    opt.state.pop(p, None)
                else:
                    opt.state[p] = st


def all_finite(tensors):
    return torch.stack([torch.isfinite(t).all() for t in tensors]).all()


def train_step(model, x, guard="full"):
    """One iteration of lebm.TrainStepGraph; returns (metrics, flags) on the host."""
    cfg = model.cfg
    b = x.shape[0]
    pixels = x[0].numel()
    s, steps = cfg.posterior_langevin
    z_post = langevin(lambda z: model.U_post(x, z), model.base_sample(b), s, steps)

    sse = model.squared_error(x, z_post)
    gen_loss = sse.mean()
    with torch.no_grad():
        recon_mse = gen_loss.detach() / pixels
        post_energy = model.f(z_post).mean()
    p_loss, prior_energy = prior_loss(model, x, z_post)
    if prior_energy is None:
        prior_energy = torch.zeros_like(post_energy)

    flags = [torch.isfinite(t).all() if guard != "none"
             else torch.ones((), dtype=torch.bool, device=x.device)
             for t in (x, z_post, gen_loss, p_loss, post_energy, prior_energy)]
    model.opt_g.zero_grad(set_to_none=True)
    model.opt_p.zero_grad(set_to_none=True)
    (gen_loss + p_loss).backward()
    # GoMLX's Adam updates every variable, with a zero gradient where the loss
    # does not depend on it (SM: the prior's output bias); torch.optim.Adam
    # skips parameters whose .grad is None.
    for p in list(model.gen.parameters()) + list(model.prior.parameters()):
        if p.grad is None:
            p.grad = torch.zeros_like(p)
    snap = Snapshot([model.opt_g, model.opt_p]) if guard == "full" else None
    model.opt_g.step()
    model.opt_p.step()
    if guard != "none":
        updated = list(model.gen.parameters()) + list(model.prior.parameters())
        for opt in (model.opt_g, model.opt_p):
            for st in opt.state.values():
                updated += [st[k] for k in ("exp_avg", "exp_avg_sq") if k in st]
        flags.append(all_finite(updated))
    else:
        flags.append(torch.ones((), dtype=torch.bool, device=x.device))

    metrics = torch.stack([gen_loss.detach(), p_loss.detach(), post_energy, prior_energy,
                           recon_mse]).double().cpu()
    flags = torch.stack(flags).cpu()
    if not bool(flags.all()):
        bad = CHECKS[int((~flags).nonzero()[0])]
        if snap is not None:
            snap.restore()
        print(f"# warning: training step diverged: {bad} contains NaN or Inf; "
              f"{'the update was undone' if snap else 'update kept (--guard ' + guard + ')'}",
              file=sys.stderr)
    return metrics, flags


def prior_update(model, x, n):
    """cmd/bench-lebm measurePrior: the prior loss at z ~ N(0, I) and its
    gradient with respect to the prior's parameters; returns their sum."""
    z = model.base_sample(n)
    loss, _ = prior_loss(model, x, z)
    # allow_unused: SM's loss depends on ∇_z f only, not on the output bias
    # (GoMLX's Gradient gives zeros there).
    grads = torch.autograd.grad(loss, list(model.prior.parameters()), allow_unused=True)
    total = loss.detach()
    for g in grads:
        if g is not None:
            total = total + g.sum()
    return total


def generate(model, n):
    """Model.Generate: prior Langevin from N(0, I) with the generation
    settings, then G."""
    s, steps = model.cfg.generation_langevin
    z = langevin(model.U, model.base_sample(n), s, steps)
    with torch.no_grad():
        return model.decode(z)


def test_posterior(model, x):
    """Model.PosteriorSample: test-time posterior Langevin from N(0, I)."""
    s, steps = model.cfg.test_posterior_langevin
    return langevin(lambda z: model.U_post(x, z), model.base_sample(x.shape[0]), s, steps)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# ---------------------------------------------------------------------------
# FLOP counting (torch.utils.flop_counter's rules; that module is newer than
# Debian's torch 1.13)
# ---------------------------------------------------------------------------


def conv_flops(x_shape, w_shape, out_shape, transposed):
    """2 per multiply-add of a convolution: the kernel (all of its weight
    tensor, groups 1) at every position it slides over, which for a
    transposed convolution are the input's pixels (the parts of the output
    that padding crops included)."""
    spatial = x_shape[2:] if transposed else out_shape[2:]
    return 2 * x_shape[0] * math.prod(spatial) * math.prod(w_shape)


def op_flops(name, args, out):
    """FLOPs of one aten call, 0 for anything but matrix products and
    convolutions."""
    if name in ("mm", "addmm"):
        a, b = args[1:3] if name == "addmm" else args[0:2]  # addmm(bias, a, b)
        return 2 * a.shape[0] * a.shape[1] * b.shape[1]
    if name == "bmm":
        a, b = args[0], args[1]
        return 2 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
    if name == "convolution":
        x, w, transposed = args[0], args[1], args[6]
        return conv_flops(x.shape, w.shape, out.shape, transposed)
    if name == "convolution_backward":
        # Each of the input and weight gradients costs the forward pass.
        grad_out, x, w, transposed, mask = args[0], args[1], args[2], args[7], args[10]
        return conv_flops(x.shape, w.shape, grad_out.shape, transposed) * (int(mask[0]) + int(mask[1]))
    if name in ("matmul", "linear", "conv2d", "conv_transpose2d", "baddbmm", "addbmm"):
        raise RuntimeError(f"FlopCounter: aten.{name} reached the dispatcher; count it")
    return 0


class FlopCounter(TorchDispatchMode):
    """Counts the FLOPs (op_flops) of the aten calls made under it, forward
    and backward (autograd's backward calls pass through the mode too)."""

    def __init__(self):
        super().__init__()
        self.flops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.flops += op_flops(func.overloadpacket.__name__, args, out)
        return out


def counted(fn, device):
    """FLOPs of one call of fn."""
    with FlopCounter() as counter:
        fn()
    sync(device)
    return counter.flops


def gflop(flops):
    """GFLOP, four significant digits or an integer from 1,000 on (as
    cmd/bench-lebm writes them)."""
    g = flops / 1e9
    return f"{g:.4g}" if g < 1000 else f"{g:.0f}"


def rate_cells(flops, seconds):
    return f"{gflop(flops)} | {flops / seconds / 1e12:.3g}"


def timed(fn, iters, device):
    """Seconds per call of fn over iters calls after one warm-up call; each
    call is followed by a synchronisation."""
    fn()
    sync(device)
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
        sync(device)
    return (time.perf_counter() - t0) / iters


def profile_kernels(fn, device, path, iters=3):
    """Writes torch.profiler's table of the kernels of iters calls of fn,
    heaviest first: where PyTorch's time goes, to set beside XLA's."""
    from torch.profiler import ProfilerActivity, profile
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=acts) as prof:
        for _ in range(iters):
            fn()
        sync(device)
    key = "cuda_time_total" if device.type == "cuda" else "cpu_time_total"
    text = (f"# {iters} calls; torch.profiler key_averages sorted by {key}\n"
            + prof.key_averages().table(sort_by=key, row_limit=40, max_name_column_width=90))
    write_atomic(path, text)
    print(f"# kernel profile in {path}", file=sys.stderr)


# ---------------------------------------------------------------------------
# --print-params
# ---------------------------------------------------------------------------


def print_params(shapes):
    for shape in shapes:
        cfg = Config(shape)
        gen, prior = Generator(cfg), PriorMLP(cfg.nz)
        c, h, w = cfg.image_shape()
        print(f"{shape}: nz {cfg.nz}, images {c}×{h}×{w}")
        for scope, net in (("generator", gen), ("prior", prior)):
            total = 0
            for name, p in net.named_parameters():
                # Go names: layer_<i>/weights and layer_<i>/biases; the Go
                # layouts are [k, k, cin, out] (convT) and [in, out] (dense).
                idx = name.split(".")[1]
                kind = "weights" if name.endswith("weight") else "biases"
                if kind == "weights" and p.dim() == 4:
                    go = [p.shape[2], p.shape[3], p.shape[0], p.shape[1]]
                elif kind == "weights":
                    go = [p.shape[1], p.shape[0]]
                else:
                    go = list(p.shape)
                total += p.numel()
                print(f"  /{scope}/layer_{idx}/{kind:<7} torch {str(list(p.shape)):<20} "
                      f"go {str(go):<20} {p.numel():>10}")
            print(f"  {scope} total {total}")
        print(f"{shape} totals: generator {sum(p.numel() for p in gen.parameters())} "
              f"prior {sum(p.numel() for p in prior.parameters())}")


# ---------------------------------------------------------------------------
# --check: ED (and the Langevin convention) against a direct numpy loop
# ---------------------------------------------------------------------------


def check():
    import numpy as np

    torch.set_default_dtype(torch.float64)
    ok = True

    def report(name, a, b, tol=1e-10):
        nonlocal ok
        diff = abs(a - b)
        good = diff <= tol * max(1.0, abs(b))
        ok &= good
        print(f"{name:<48} torch {a: .15f}  numpy {b: .15f}  |diff| {diff:.2e}  "
              f"{'OK' if good else 'MISMATCH'}")

    def ed_numpy(energy_np, z, xi, xi_prime, t, m, w, drop_log_m):
        """SPEC.md: z'_ij = z_i + √t ξ_i + √t ξ'_ij; L = mean_i log(w/M +
        (1/M) Σ_j exp(U(z_i) − U(z'_ij))), written out as a plain loop."""
        total = 0.0
        for i in range(z.shape[0]):
            s = w / m
            for j in range(m):
                y = z[i] + math.sqrt(t) * xi[i] + math.sqrt(t) * xi_prime[i, j]
                s += math.exp(energy_np(z[i]) - energy_np(y)) / m
            v = math.log(s)
            if drop_log_m:
                v += math.log(m)
            total += v
        return total / z.shape[0]

    # 1. A quadratic energy E(z) = ½ zᵀAz + bᵀz, A symmetric positive definite.
    torch.manual_seed(7)
    d, bsz = 3, 5
    a_half = torch.randn(d, d)
    A = a_half @ a_half.T + 0.5 * torch.eye(d)
    bvec = torch.randn(d)
    quad = lambda z: 0.5 * ((z @ A) * z).sum(1) + z @ bvec
    An, bn = A.numpy(), bvec.numpy()
    quad_np = lambda z: float(0.5 * z @ An @ z + bn @ z)
    z = torch.randn(bsz, d)
    print("# ED loss, torch (the benchmark's ed_loss_with_noise) vs a numpy loop, float64")
    for t, m, w, drop in [(0.25, 16, 1.0, False), (1.0, 4, 1.0, False), (0.25, 16, 0.0, False),
                          (0.5, 8, 2.0, True)]:
        xi, xi_prime = torch.randn(bsz, d), torch.randn(bsz, m, d)
        got = ed_loss_with_noise(quad, z, xi, xi_prime, t, m, w, drop).item()
        want = ed_numpy(quad_np, z.numpy(), xi.numpy(), xi_prime.numpy(), t, m, w, drop)
        report(f"quadratic d={d} B={bsz} t={t} M={m} w={w} dropLogM={drop}", got, want)

    # 2. The LEBM prior energy U(z) = f(z) + ‖z‖²/2 (svhn prior MLP, nz 100),
    #    with the loss drawing its own noise (ed_loss, as in training).
    cfg = Config("svhn")
    model = LEBM(cfg, torch.device("cpu"), torch.float64)
    Ws = [(l.weight.detach().numpy(), l.bias.detach().numpy()) for l in model.prior.layers]

    def u_np(zv):
        h = zv
        for i, (W, bb) in enumerate(Ws):
            h = W @ h + bb
            if i < len(Ws) - 1:
                h = np.where(h > 0, h, PRIOR_LEAKY_SLOPE * h)
        return float(h[0] + 0.5 * zv @ zv)

    # At z ~ N(0, I) in 100 dimensions the perturbed points have ‖y‖² ≈ ‖z‖² +
    # 50, so exp(U(z) − U(y)) ≈ 0 and L ≈ log(w/M): also check w = 0, and
    # latents of scale 3, where the Σ_j term matters.
    bsz = 8
    for scale, w in [(1.0, cfg.ed_w), (1.0, 0.0), (3.0, cfg.ed_w)]:
        z = scale * torch.randn(bsz, cfg.nz)
        torch.manual_seed(11)
        got = ed_loss(model.U, z, cfg.ed_t, cfg.ed_m, w).item()
        torch.manual_seed(11)  # the same draws, in the same order, as ed_loss
        xi = torch.randn(bsz, cfg.nz)
        xi_prime = torch.randn(bsz, cfg.ed_m, cfg.nz)
        want = ed_numpy(u_np, z.numpy(), xi.numpy(), xi_prime.numpy(), cfg.ed_t, cfg.ed_m,
                        w, False)
        report(f"LEBM prior U, svhn nz=100 B={bsz} t=0.25 M=16 w={w:g} |z|~{scale:g}",
               got, want)

    # 3. The Langevin convention z ← z − (s²/2)∇E + s ξ on the quadratic.
    s, steps = 0.4, 3
    z0 = torch.randn(bsz, d)
    torch.manual_seed(13)
    got = langevin(quad, z0, s, steps)
    torch.manual_seed(13)
    zn = z0.numpy().copy()
    for _ in range(steps):
        noise = torch.randn(bsz, d).numpy()
        zn = zn - (s * s / 2) * (zn @ An + bn) + s * noise
    report(f"Langevin s={s} {steps} steps on the quadratic: Σ z", got.sum().item(),
           float(zn.sum()))
    report("  max |z_torch − z_numpy| (want 0)", float((got.numpy() - zn).__abs__().max()), 0.0)
    print("check: all match" if ok else "check: MISMATCH")
    return 0 if ok else 1


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def set_tf32(on):
    """TF32 for float32 matmuls and cuDNN convolutions (off unless --tf32)."""
    matmul, conv = torch.backends.cuda.matmul, getattr(torch.backends.cudnn, "conv", None)
    if hasattr(matmul, "fp32_precision") and conv is not None and hasattr(conv, "fp32_precision"):
        mode = "tf32" if on else "ieee"
        matmul.fp32_precision = mode
        conv.fp32_precision = mode
    else:
        matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on


def blas_library():
    """Path of the BLAS shared library torch has loaded (Linux), or "unknown";
    Debian's CPU torch calls the system libblas.so.3 (see toy_bench.py)."""
    torch.randn(64, 64) @ torch.randn(64, 64)
    try:
        with open("/proc/self/maps") as fh:
            paths = {line.split()[-1] for line in fh
                     if "blas" in os.path.basename(line.split()[-1]).lower()}
    except OSError:
        return "unknown"
    paths = sorted(os.path.realpath(p) for p in paths if p.startswith("/"))
    return ",".join(paths) if paths else "unknown"


def device_description(device, threads):
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return f"cpu ({threads} thread{'s' if threads != 1 else ''})"


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
    ap.add_argument("--no-training", action="store_true",
                    help="skip the training-step table: time the samplers alone")
    ap.add_argument("--count-only", action="store_true",
                    help="count the FLOPs of one call of each measurement, time nothing "
                         "(the table of cmd/bench-lebm -flops-only, counted instead of modelled)")
    ap.add_argument("--sm-variant", default="fisher", choices=["fisher", "exact", "sliced"])
    ap.add_argument("--device", default="auto", help="auto (cuda if available), cpu, cuda, cuda:N")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU intra-op threads")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--tf32", action="store_true", help="allow TF32 in matmuls and convolutions")
    ap.add_argument("--no-cudnn-benchmark", action="store_true",
                    help="leave torch.backends.cudnn.benchmark off (default: on for CUDA)")
    ap.add_argument("--channels-last", action="store_true", help="NHWC generator and images")
    ap.add_argument("--autocast-bf16", action="store_true",
                    help="the generator under torch.autocast(bfloat16), as Go's -compute-dtype "
                         "bfloat16 (energies, losses, Langevin in float32)")
    ap.add_argument("--adam", default="default", choices=["default", "foreach", "fused"],
                    help="torch.optim.Adam implementation")
    ap.add_argument("--guard", default="full", choices=["full", "check", "none"],
                    help="full: finiteness checks + snapshot/undo as TrainStepGraph; "
                         "check: checks only; none: neither")
    ap.add_argument("--compile", action="store_true",
                    help="torch.compile the generator and prior (needs torch >= 2; "
                         "SM's double backward stays eager)")
    ap.add_argument("--profile", default="",
                    help="also write torch.profiler's kernel table of 3 training steps to "
                         "PREFIX-SHAPE-METHOD.txt")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="", help="Markdown file to write (default: print only)")
    ap.add_argument("--print-params", action="store_true",
                    help="print per-layer parameter shapes and totals, then exit")
    ap.add_argument("--check", action="store_true",
                    help="compare the ED loss (and Langevin) with a numpy loop, then exit")
    args = ap.parse_args(argv)

    shapes = [s for s in args.shapes.split(",") if s]
    methods = [m for m in args.methods.split(",") if m]
    if args.no_training and args.no_sampling:
        ap.error("--no-training with --no-sampling: nothing to time")
    if args.print_params:
        print_params(shapes)
        return 0
    if args.check:
        torch.set_num_threads(args.threads)
        return check()

    torch.set_num_threads(args.threads)
    if args.device == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        device = torch.device(args.device)
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    cudnn_bench = False
    if device.type == "cuda":
        set_tf32(args.tf32)
        cudnn_bench = not args.no_cudnn_benchmark
        torch.backends.cudnn.benchmark = cudnn_bench
    compile_mode = False
    if args.compile:
        if hasattr(torch, "compile"):
            compile_mode = True
        else:
            print(f"# torch {torch.__version__} has no torch.compile: running eager",
                  file=sys.stderr)
    batch = args.batch
    prior_batch = args.prior_batch or batch
    gen_batch = args.gen_batch or batch
    dev = device_description(device, torch.get_num_threads())

    if args.count_only:
        text = (f"Command: `lebm_bench.py {' '.join(sys.argv[1:] if argv is None else argv)}` — "
                f"FLOPs counted by FlopCounter, PyTorch {torch.__version__}, {dev}.\n\n"
                + count_table(shapes, methods, args, device, dtype, batch, prior_batch, gen_batch))
        print(text, end="")
        write_atomic(args.out, text)
        return 0

    mode = "torch.compile" if compile_mode else "eager"
    if args.channels_last:
        mode += ", channels_last"
    if args.autocast_bf16:
        mode += ", generator under bfloat16 autocast"
    header = (f"Command: `lebm_bench.py {' '.join(sys.argv[1:] if argv is None else argv)}` — "
              f"PyTorch {torch.__version__}, {dev}, {args.dtype}, "
              f"TF32 {'on' if args.tf32 and device.type == 'cuda' else 'off'}, "
              f"cudnn.benchmark {'on' if cudnn_bench else 'off'}, {mode}, Adam {args.adam}, "
              f"guard {args.guard}, SM {args.sm_variant}, "
              + (f"BLAS {blas_library()}, " if device.type == "cpu" else "")
              + f"{datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d')}.\n\n")
    table = ("| shape | method | s / training iteration (batch -batch) | GFLOP / iteration | TFLOP/s "
             "| s / prior update alone (batch -prior-batch) | prior update ÷ CD's | device |\n"
             "|---|---|---|---|---|---|---|---|\n")
    if args.no_training:
        table, methods = "", []
    print(header + table, end="", flush=True)
    lines = []
    sampling = []
    for shape in shapes:
        rows = {}
        for method in methods:
            torch.manual_seed(args.seed)
            cfg = Config(shape, method, args.sm_variant)
            model = LEBM(cfg, device, dtype, compile_mode, args.channels_last, args.adam,
                         args.autocast_bf16)
            x = model.random_images(batch)
            metrics = []

            def one_step():
                metrics.append(train_step(model, x, args.guard)[0])

            full = timed(one_step, args.iters, device)
            if args.profile:
                profile_kernels(one_step, device, f"{args.profile}-{shape}-{method}.txt")
            flops = counted(one_step, device)
            prior = 0.0
            if args.prior_iters > 0:
                xp = model.random_images(prior_batch)
                prior = timed(lambda: prior_update(model, xp, prior_batch), args.prior_iters,
                              device)
            rows[method] = (full, prior, flops)
            m = metrics[-1].tolist()
            print(f"# {shape}/{method}: " + ", ".join(f"{k} {v:.4g}" for k, v in zip(METRICS, m)),
                  file=sys.stderr, flush=True)
            del model
        prior_cd = rows.get("cd", (0, 0, 0))[1]
        for method in methods:
            full, prior, flops = rows[method]
            ratio = f"{prior / prior_cd:.3f}" if prior_cd > 0 else "–"
            line = (f"| {shape} | {method} | {full:.4f} | {rate_cells(flops, full)} | {prior:.5f} "
                    f"| {ratio} | {dev} |\n")
            lines.append(line)
            print(line, end="", flush=True)
        if not args.no_sampling:
            torch.manual_seed(args.seed)
            model = LEBM(Config(shape), device, dtype, compile_mode, args.channels_last, args.adam,
                         args.autocast_bf16)
            xt = model.random_images(batch)
            t_gen = timed(lambda: generate(model, gen_batch), args.iters, device)
            t_post = timed(lambda: test_posterior(model, xt), args.iters, device)
            f_gen = counted(lambda: generate(model, gen_batch), device)
            f_post = counted(lambda: test_posterior(model, xt), device)
            sampling.append((shape, t_gen, f_gen, t_post, f_post))
            del model
    text = header + table + "".join(lines)
    if sampling:
        stable = ("" if args.no_training else "\n") + (
            f"| shape | s / generation (500 prior Langevin steps of 0.2 + G, batch "
            f"{gen_batch}) | GFLOP | TFLOP/s | s / test posterior (100 Langevin steps of 0.1, "
            f"batch {batch}) | GFLOP | TFLOP/s | device |\n|---|---|---|---|---|---|---|---|\n")
        stable += "".join(f"| {s} | {g:.4f} | {rate_cells(fg, g)} | {p:.4f} | {rate_cells(fp, p)} "
                          f"| {dev} |\n" for s, g, fg, p, fp in sampling)
        text += stable
        print(stable, end="", flush=True)
    write_atomic(args.out, text)
    return 0


def write_atomic(path, text):
    """Writes text to path (if not empty) through a temporary file."""
    if not path:
        return
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def count_table(shapes, methods, args, device, dtype, batch, prior_batch, gen_batch):
    """The FLOPs of one call of each measurement, as a Markdown table."""
    table = (f"| shape | method | GFLOP / training iteration (batch {batch}) | GFLOP / prior update "
             f"alone (batch {prior_batch}) | GFLOP / generation (batch {gen_batch}) | GFLOP / test "
             f"posterior (batch {batch}) |\n|---|---|---|---|---|---|\n")
    for shape in shapes:
        samplers = None
        for method in methods:
            torch.manual_seed(args.seed)
            model = LEBM(Config(shape, method, args.sm_variant), device, dtype)
            x, xp = model.random_images(batch), model.random_images(prior_batch)
            step = counted(lambda: train_step(model, x, args.guard), device)
            prior = counted(lambda: prior_update(model, xp, prior_batch), device)
            if samplers is None:  # the same for every method
                samplers = (counted(lambda: generate(model, gen_batch), device),
                            counted(lambda: test_posterior(model, x), device))
            line = (f"| {shape} | {method} | {gflop(step)} | {gflop(prior)} | {gflop(samplers[0])} "
                    f"| {gflop(samplers[1])} |\n")
            print(line, end="", file=sys.stderr, flush=True)
            table += line
            del model
    return table


if __name__ == "__main__":
    sys.exit(main())
