#!/usr/bin/python3
"""Writes evalfile/testdata/*.npz: FID statistics as NumPy (and so pytorch-fid,
which saves them with np.savez_compressed(path, mu=mu, sigma=sigma)) writes
them, for eval's .npz exchange tests. The values follow closed forms the Go
test recomputes:

    mu[i]       = 0.5 i - 1
    sigma[i, j] = sum_k a(i, k) a(j, k) + [i == j],  a(i, k) = sin(i + 2k + 1)

  stats-d5-f8.npz        d = 5, float64, compressed (pytorch-fid's layout)
  stats-d4-f4-fortran.npz d = 4, float32, Fortran order, uncompressed

(npy/testdata/make_fixtures.py writes the single arrays of package npy's
tests.)

Run: /usr/bin/python3 evalfile/testdata/make_npz_fixtures.py
"""
import os

import numpy as np


def stats(d):
    mu = np.array([0.5 * i - 1 for i in range(d)])
    a = np.array([[np.sin(i + 2 * k + 1) for k in range(d)] for i in range(d)])
    return mu, a @ a.T + np.eye(d)


out = os.path.dirname(os.path.abspath(__file__))
mu, sigma = stats(5)
np.savez_compressed(os.path.join(out, "stats-d5-f8.npz"), mu=mu, sigma=sigma)
mu, sigma = stats(4)
np.savez(os.path.join(out, "stats-d4-f4-fortran.npz"), mu=mu.astype(np.float32),
         sigma=np.asfortranarray(sigma.astype(np.float32)))
