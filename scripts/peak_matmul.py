#!/usr/bin/env python3
"""The machine's measured float32 peak for the CPU speed tables: GFLOP/s of
a large square matrix product (2·n³ FLOPs), the best of several timed runs
after a warm-up, through PyTorch (its CPU BLAS, oneDNN/MKL) and through XLA
(JAX's CPU backend), each on the threads given. Run it pinned to the same
cores as the benchmarks (taskset). Prints one line per library:

    peak <library> <threads> <n> <GFLOP/s>

  peak_matmul.py --threads 2 [--n 2048] [--reps 10] [--libs torch,jax]
"""
import argparse
import os
import time


def best_seconds(fn, reps):
    fn()  # warm-up (and, for XLA, compile)
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def torch_peak(n, threads, reps):
    import torch
    torch.set_num_threads(threads)
    a, b = torch.randn(n, n), torch.randn(n, n)
    return best_seconds(lambda: torch.mm(a, b), reps)


def jax_peak(n, threads, reps):
    # The XLA CPU client sizes its thread pool from NPROC when it starts
    # (as baselines/lebm_bench_jax.py sets it).
    os.environ["NPROC"] = str(threads)
    if threads == 1:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false").strip()
    import jax
    import jax.numpy as jnp
    key = jax.random.PRNGKey(0)
    a = jax.random.normal(key, (n, n), jnp.float32)
    b = jax.random.normal(jax.random.PRNGKey(1), (n, n), jnp.float32)
    mm = jax.jit(jnp.matmul)
    return best_seconds(lambda: mm(a, b).block_until_ready(), reps)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--libs", default="torch,jax")
    args = ap.parse_args()
    for lib in args.libs.split(","):
        seconds = {"torch": torch_peak, "jax": jax_peak}[lib](args.n, args.threads, args.reps)
        print(f"peak {lib} {args.threads} {args.n} {2 * args.n ** 3 / seconds / 1e9:.1f}", flush=True)


if __name__ == "__main__":
    main()
