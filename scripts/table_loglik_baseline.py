"""Held-out log-likelihoods of two simple models of a train-table run's table,
beside its energy models' (docs/tables.md): independent columns (each number a
Gaussian, each category its training share) and a joint Gaussian of the numbers
with independent categories, fitted to the run's training rows and averaged over
its held-out rows, in nats a row on the data's scale.

  python3 scripts/table_loglik_baseline.py RUN DATA.csv   (needs NumPy and pandas)
"""
import json, sys, os
import numpy as np, pandas as pd
run, data = sys.argv[1], sys.argv[2]
rec = json.load(open(os.path.join(run, "table.json")))
df = pd.read_csv(data, keep_default_na=False, dtype=str)
kinds = {c["name"]: c["kind"] for c in rec["schema"]["columns"]}
tr, te = df.iloc[rec["train_rows"]], df.iloc[rec["test_rows"]]
nums = [c for c, k in kinds.items() if k == "numeric"]
cats = [c for c, k in kinds.items() if k != "numeric"]
xtr, xte = tr[nums].astype(float).to_numpy(), te[nums].astype(float).to_numpy()
def cat_ll(frame):
    ll = np.zeros(len(frame))
    for c in cats:
        p = tr[c].value_counts(normalize=True)
        ll += np.log(frame[c].map(p).fillna(1e-12).to_numpy())
    return ll
mu, sd = xtr.mean(0), xtr.std(0)
ind = (-0.5*((xte-mu)/sd)**2 - np.log(sd*np.sqrt(2*np.pi))).sum(1)
cov = np.cov(xtr.T); inv = np.linalg.inv(cov); _, logdet = np.linalg.slogdet(cov)
d = xte - mu
joint = -0.5*np.einsum("ij,jk,ik->i", d, inv, d) - 0.5*logdet - len(nums)/2*np.log(2*np.pi) if nums else np.zeros(len(xte))
c = cat_ll(te)
print("independent columns (Gaussian numbers): %.4f" % (ind + c).mean())
print("a joint Gaussian of the numbers, independent categories: %.4f" % (joint + c).mean())
