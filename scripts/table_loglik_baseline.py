"""Held-out log-likelihoods of two simple models of a train-table run's table,
beside its energy models' (docs/tables.md): independent columns (each number a
Gaussian, each category its training share) and a joint Gaussian of the numbers
with independent categories, fitted to the run's training rows and averaged over
its held-out rows, in nats a row on the data's scale.

A number with a spike (table.json's `spike`: a value held by a tenth of the rows
or more) is counted as train-table counts it: at the spike, the training rows'
share there (a probability); off it, the share off times a Gaussian fitted to
the training rows off the spike. Spiked numbers are independent of the rest in
both models; the joint Gaussian covers the numbers without a spike.

  python3 scripts/table_loglik_baseline.py RUN DATA.csv   (needs NumPy and pandas)
"""
import json, sys, os
import numpy as np, pandas as pd

run, data = sys.argv[1], sys.argv[2]
rec = json.load(open(os.path.join(run, "table.json")))
df = pd.read_csv(data, keep_default_na=False, dtype=str)
columns = rec["schema"]["columns"]
tr, te = df.iloc[rec["train_rows"]], df.iloc[rec["test_rows"]]
spiked = {c["name"]: c["spike"] for c in columns if c["kind"] == "numeric" and c.get("spike") is not None}
nums = [c["name"] for c in columns if c["kind"] == "numeric" and c["name"] not in spiked]
cats = [c["name"] for c in columns if c["kind"] != "numeric"]


def gauss(x, mu, sd):
    return -0.5 * ((x - mu) / sd) ** 2 - np.log(sd * np.sqrt(2 * np.pi))


def cat_ll(frame):
    ll = np.zeros(len(frame))
    for c in cats:
        p = tr[c].value_counts(normalize=True)
        ll += np.log(frame[c].map(p).fillna(1e-12).to_numpy())
    return ll


def spike_ll(frame):
    ll = np.zeros(len(frame))
    for c, s in spiked.items():
        xtr, x = tr[c].astype(float).to_numpy(), frame[c].astype(float).to_numpy()
        at = np.mean(xtr == s)
        off = xtr[xtr != s]
        ll += np.where(x == s, np.log(at), np.log(1 - at) + gauss(x, off.mean(), off.std()))
    return ll


xtr, xte = tr[nums].astype(float).to_numpy(), te[nums].astype(float).to_numpy()
mu, sd = xtr.mean(0), xtr.std(0)
ind = gauss(xte, mu, sd).sum(1)
if nums:
    cov = np.cov(xtr.T).reshape(len(nums), len(nums))
    inv = np.linalg.inv(cov)
    _, logdet = np.linalg.slogdet(cov)
    d = xte - mu
    joint = -0.5 * np.einsum("ij,jk,ik->i", d, inv, d) - 0.5 * logdet - len(nums) / 2 * np.log(2 * np.pi)
else:
    joint = np.zeros(len(xte))
rest = cat_ll(te) + spike_ll(te)
print("independent columns (Gaussian numbers): %.4f" % (ind + rest).mean())
print("a joint Gaussian of the numbers, independent categories: %.4f" % (joint + rest).mean())
