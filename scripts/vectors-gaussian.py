#!/usr/bin/python3
"""The Gaussian baseline of docs/own-data.md's density table: for each
train-vectors run folder given, the held-out log-likelihood per row of a
full-covariance Gaussian fitted (maximum likelihood) to the run's own
training rows, on its own split (the run's data.json), with NumPy; on the
columns the run modelled (the constant ones it set aside left out, as in
its log-likelihoods; every column for a run recorded before that).

    /usr/bin/python3 scripts/vectors-gaussian.py /tmp/vectors-sklearn/*-s[0-9]
"""
import gzip
import json
import sys

import numpy as np


def rows(record):
    """The file's vectors as train-vectors read them."""
    opener = gzip.open if record["file"].endswith(".gz") else open
    with opener(record["file"], "rt") as f:
        lines = f.read().splitlines()[record["read"].get("SkipRows", 0):]
    x = np.array([[float(v) for v in line.split(",")] for line in lines if line.strip()])
    if record["read"].get("Label") == "last":
        x = x[:, :-1]
    return x


for run in sys.argv[1:]:
    run = run.rstrip("/")
    with open(f"{run}/data.json") as f:
        record = json.load(f)
    x = rows(record)
    x = np.delete(x, [c["index"] for c in record.get("set_aside_columns", [])], axis=1)
    train, test = x[record["train_rows"]], x[record["test_rows"]]
    mu = train.mean(0)
    cov = np.cov(train, rowvar=False, bias=True) + 1e-6 * np.eye(x.shape[1]) * train.var(0).mean()
    sign, logdet = np.linalg.slogdet(cov)
    d = x.shape[1]
    diff = test - mu
    maha = np.einsum("ij,jk,ik->i", diff, np.linalg.inv(cov), diff)
    ll = -0.5 * (maha + logdet + d * np.log(2 * np.pi))
    print(f"{run},gaussian,{ll.mean():.4f}")
