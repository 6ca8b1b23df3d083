#!/usr/bin/env python3
"""Times the main job's heaviest convolutions on XLA CPU in XLA's own
convolution form against the same sums written as explicit patch matrices
and matrix products (im2col + dot), and the bare products of those shapes.

XLA CPU's matrix products of the generator's shapes run faster per FLOP
than its convolutions (whose kernels pack the patches themselves); this
asks whether building the patches in the graph and calling the product
wins. Each pair of forms is checked to agree before it is timed. Through
JAX's XLA CPU (the same compiler as the PJRT plugin); run it pinned to one
core, as one XLA device of the main job runs:

    taskset -c 0 python scripts/conv_forms_xla.py [--batch 64] [--reps 30]

Prints one line per form: milliseconds per call (best of 5 rounds of
--reps calls) and GFLOP/s.
"""
import argparse
import os
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

NHWC = ("NHWC", "HWIO", "NHWC")


def best_ms(fn, args, reps):
    jax.block_until_ready(fn(*args))
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(reps):
            out = fn(*args)
        jax.block_until_ready(out)
        best = min(best, (time.perf_counter() - start) / reps)
    return best * 1e3


def conv(x, w, stride, pad):
    return jax.lax.conv_general_dilated(x, w, (stride, stride), pad, dimension_numbers=NHWC)


def patches(xp, k, stride, out):
    """The k×k windows of the padded input, taps concatenated on channels."""
    end = stride * (out - 1) + 1
    return jnp.concatenate(
        [xp[:, a:a + end:stride, b:b + end:stride, :] for a in range(k) for b in range(k)], axis=-1)


def phase_im2col(x, w):
    """One phase of the k 4, stride 2 transposed convolution: a 2×2 window."""
    xp = jnp.pad(x, ((0, 0), (1, 0), (1, 0), (0, 0)))
    n, h, _, c = x.shape
    cols = patches(xp, 2, 1, h).reshape(-1, 4 * c)
    return (cols @ w.reshape(4 * c, -1)).reshape(n, h, h, -1)


def strided_im2col(g, k):
    """The k 4, stride 2 convolution (the layer's input gradient)."""
    gp = jnp.pad(g, ((0, 0), (1, 1), (1, 1), (0, 0)))
    n, h, _, c = g.shape
    out = h // 2
    cols = patches(gp, 4, 2, out).reshape(-1, 16 * c)
    return (cols @ k.reshape(16 * c, -1)).reshape(n, out, out, -1)


def report(name, ms, flops):
    print(f"{name:58s} {ms:7.3f} ms {flops / ms / 1e6:6.1f} GFLOP/s")


def compare(name, conv_form, im2col_form, args, flops, reps):
    """Checks the two forms agree, then times each."""
    fconv, fdot = jax.jit(conv_form), jax.jit(im2col_form)
    np.testing.assert_allclose(fconv(*args), fdot(*args), rtol=1e-4, atol=1e-3)
    report(f"{name}: XLA convolution", best_ms(fconv, args, reps), flops)
    report(f"{name}: im2col + dot", best_ms(fdot, args, reps), flops)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64, help="images per XLA device (the main job: 128 over 2)")
    p.add_argument("--reps", type=int, default=30)
    a = p.parse_args()
    key = jax.random.PRNGKey(0)
    n = a.batch
    print(f"JAX {jax.__version__}, XLA CPU, batch {n}, threads: {os.environ['XLA_FLAGS']}")

    # Forward phase of the 7×7×64 → 14×14×32 layer: a 2×2 window, 64 → 32.
    x = jax.random.normal(key, (n, 7, 7, 64))
    w = jax.random.normal(key, (2, 2, 64, 32))
    compare("phase 2x2, 7x7x64 -> 32", lambda x, w: conv(x, w, 1, [(1, 0), (1, 0)]), phase_im2col,
            (x, w), 2 * n * 49 * 256 * 32, a.reps)
    # Its input gradient: k 4, stride 2, 14×14×32 → 7×7×64.
    g = jax.random.normal(key, (n, 14, 14, 32))
    k = jax.random.normal(key, (4, 4, 32, 64))
    compare("k4 s2, 14x14x32 -> 7x7x64", lambda g, k: conv(g, k, 2, [(1, 1), (1, 1)]), strided_im2col,
            (g, k), 2 * n * 49 * 512 * 64, a.reps)

    # The bare products those im2col forms call.
    for m, kk, nn in [(n * 49, 256, 32), (n * 49, 512, 64), (2048, 2048, 2048)]:
        u = jax.random.normal(key, (m, kk))
        v = jax.random.normal(key, (kk, nn))
        report(f"dot [{m},{kk}]x[{kk},{nn}]", best_ms(jax.jit(jnp.matmul), (u, v), a.reps), 2 * m * kk * nn)


if __name__ == "__main__":
    main()
