"""Writes the SVHN-format fixtures of matfile's TestReadMATScipyFiles and
svhn's TestLoadScipyFiles with scipy.io.savemat, a MAT-file writer
independent of the Go reader and of the tests' own writer (internal/matwrite).

Run from this directory with Debian's python3-scipy: /usr/bin/python3 scipy_fixtures.py
"""
import os

import numpy as np
import scipy.io

H, W, C, N = 2, 3, 3, 4

# Pixel (n, h, w, c) is byte k*255//71 of NHWC index k, as testPixel in matfile_test.go and svhn_test.go.
X = np.zeros((H, W, C, N), dtype=np.uint8)
for n in range(N):
    for h in range(H):
        for w in range(W):
            for c in range(C):
                k = ((n * H + h) * W + w) * C + c
                X[h, w, c, n] = k * 255 // (N * H * W * C - 1)
y = np.array([[10], [1], [5], [9]], dtype=np.float64)

variables = {
    "X": X,
    "y": y,
    # Variables of other classes, which the reader skips.
    "note": "house numbers",
    "cells": np.array([[1.0, "two"]], dtype=object),
    "info": {"source": "scipy", "n": 4},
    "z": np.array([[1 + 2j]]),
}
for name, compress in (("scipy-plain", False), ("scipy-compressed", True)):
    os.makedirs(name, exist_ok=True)
    scipy.io.savemat(os.path.join(name, "test_32x32.mat"), variables, do_compression=compress)
