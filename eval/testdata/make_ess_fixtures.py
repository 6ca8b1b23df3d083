"""Writes ess-arviz.json: fixed arrays of MCMC draws and ArviZ's effective
sample sizes of each ("identity": as they are, "bulk", "tail"), for the
eval package's ESS tests, which compute them independently.

Run: VENV/bin/python eval/testdata/make_ess_fixtures.py
(VENV with arviz==0.22.0 from the Python package index.)
"""
import json
import os

import arviz as az
import numpy as np


def ar1(rng, chains, draws, rho):
    x = np.zeros((chains, draws))
    x[:, 0] = rng.standard_normal(chains) / np.sqrt(1 - rho * rho)
    for t in range(1, draws):
        x[:, t] = rho * x[:, t - 1] + rng.standard_normal(chains)
    return x


rng = np.random.default_rng(20261127)
cases = {
    "ar1 rho 0.7, 4 x 300": ar1(rng, 4, 300, 0.7),
    "ar1 rho 0.3, 3 x 201 (odd)": ar1(rng, 3, 201, 0.3),
    "ar1 rho -0.5, 2 x 400 (antithetic)": ar1(rng, 2, 400, -0.5),
    "one chain, ar1 rho 0.9, 1 x 500": ar1(rng, 1, 500, 0.9),
    "cauchy, 4 x 200": rng.standard_cauchy((4, 200)),
    "ties, 2 x 100": np.round(rng.standard_normal((2, 100)) * 2),
    "chains apart, 4 x 100": rng.standard_normal((4, 100)) + np.arange(4)[:, None],
}
out = []
for name, x in cases.items():
    out.append({
        "name": name,
        "chains": x.tolist(),
        "identity": float(az.ess(x, method="identity")),
        "bulk": float(az.ess(x, method="bulk")),
        "tail": float(az.ess(x, method="tail")),
    })
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ess-arviz.json"), "w") as f:
    json.dump({"arviz": az.__version__, "cases": out}, f)
