#!/usr/bin/python3
"""Writes npy/testdata/*: arrays as NumPy writes them, for package npy's
tests. The values are arange(6).reshape(2, 3) - 2 (so two are negative),
stored as

  rect-2x3-fortran-be.npy  float64, Fortran order, big-endian (element order
                           and byte order; arange(6) without the shift)
  ints-i2-be.npy           int16, big-endian
  ints-u1.npy              uint8 (arange(6), unsigned)
  ints-i8.npy              int64
  floats-f4.npy            float32
  xy.npz                   x = the float64 array, y = [0, 1] as int64,
                           compressed

Run: /usr/bin/python3 npy/testdata/make_fixtures.py
"""
import os

import numpy as np

out = os.path.dirname(os.path.abspath(__file__))
a = np.arange(6.0).reshape(2, 3) - 2
np.save(os.path.join(out, "rect-2x3-fortran-be.npy"),
        np.asfortranarray(np.arange(6.0).reshape(2, 3)).astype(">f8"))
np.save(os.path.join(out, "ints-i2-be.npy"), a.astype(">i2"))
np.save(os.path.join(out, "ints-u1.npy"), np.arange(6).reshape(2, 3).astype(np.uint8))
np.save(os.path.join(out, "ints-i8.npy"), a.astype(np.int64))
np.save(os.path.join(out, "floats-f4.npy"), a.astype(np.float32))
np.savez_compressed(os.path.join(out, "xy.npz"), x=a, y=np.array([0, 1]))
