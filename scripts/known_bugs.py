#!/usr/bin/env python3
"""Puts back, one at a time, bugs that once passed the whole suite, and
checks that the test written for each now fails.

Each bug is a textual edit of one source file; the file is restored after
its test ran, whatever happens. Prints one line per bug (KILLED: the test
failed, as it should; SURVIVED: it passed; BROKEN: the edit did not build)
and exits non-zero unless every bug is killed. The backend is the tests'
default (SimpleGo) unless $EDLEBM_TEST_BACKEND names another.

  python3 scripts/known_bugs.py [NAME-SUBSTRING ...]
  python3 scripts/known_bugs.py --check   (only that every bug's original
                                           text is still there: the suite
                                           runs this, so the list stays
                                           current)
"""

import os
import subprocess
import sys

# (name, file, original text, buggy text, package, -run pattern of the test
# that must catch it). docs/testing.md lists them with their tests.
BUGS = [
    ("eval-lebm's reconstruction MSE averaged per image, not per pixel", "lebmeval/eval.go",
     "imageErrors[i/size] += d * d / float64(size)", "imageErrors[i/size] += d * d",
     "./lebmeval", "TestEvaluatesACheckpoint"),
    ("eval-lebm compares each reconstruction with the next image", "lebmeval/eval.go",
     "d := float64(v - test.Pixels[i])", "d := float64(v - test.Pixels[(i+size)%len(recon)])",
     "./lebmeval", "TestEvaluatesACheckpoint"),
    ("a run resumed mid-epoch starts the epoch's batches over", "lebmrun/run.go",
     "batches.Seek(int(step/perEpoch), int(step%perEpoch))", "batches.Seek(int(step/perEpoch), 0)",
     "./cmd/train-lebm", "TestStopMidEpochAndResumeEqualsUninterrupted"),
    ("prior trained by gradient ascent", "lebm/train.go",
     "train.AddLoss(ctx, Add(l.Generator, l.Prior))", "train.AddLoss(ctx, Sub(l.Generator, l.Prior))",
     "./lebm", "TestOneStepLowersEachLossAtItsOwnSamples"),
    ("generator trained by gradient ascent", "lebm/train.go",
     "train.AddLoss(ctx, Add(l.Generator, l.Prior))", "train.AddLoss(ctx, Sub(l.Prior, l.Generator))",
     "./lebm", "TestOneStepLowersEachLossAtItsOwnSamples"),
    ("divergence guard keeps updates whenever they are finite", "lebm/train.go",
     "keep := LogicalAnd(ok, newFinite)", "keep := newFinite",
     "./lebm", "TestGuardKeepsEveryVariableUnlessAllChecksPass"),
    ("test-time posterior runs the training chain", "lebm/sampling.go",
     "post := m.cfg.TestPosteriorLangevin",
     "post := m.cfg.PosteriorLangevin",
     "./lebm", "TestBlockedChainsMatchTheUnrolledChain"),
    ("generation runs CD's prior chain", "lebm/energy.go",
     "z = PriorSample(ctx, cfg, z0, withSteps(cfg.GenerationLangevin, steps))",
     "z = PriorSample(ctx, cfg, z0, withSteps(cfg.PriorLangevin, steps))",
     "./lebm", "TestBlockedChainsMatchTheUnrolledChain"),
    ("Adam's moments reset on load", "lebm/checkpoint.go",
     "\t// Loaded variables come back trainable; only the two models' are.\n",
     "\t_ = ctx.InAbsPath(\"/adam_\" + GeneratorScope).DeleteVariablesInScope()\n"
     "\t_ = ctx.InAbsPath(\"/adam_\" + PriorScope).DeleteVariablesInScope()\n"
     "\t// Loaded variables come back trainable; only the two models' are.\n",
     "./lebm", "TestResumeEqualsUninterruptedTraining"),
    ("logsumexp without its max shift", "losses/logsumexp.go",
     "sum := ReduceSum(Exp(Sub(x, shift)), axis)\n\treturn Add(Log(sum), Squeeze(shift, axis))",
     "sum := ReduceSum(Exp(x), axis)\n\treturn Log(sum)",
     "./losses", "TestLogSumExpInFloat32|TestEnergyDiscrepancyInFloat32AtLargeEnergyGaps"),
]


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    wanted = sys.argv[1:]
    check_only = "--check" in wanted
    wanted = [w for w in wanted if w != "--check"]
    failed = 0
    for name, path, original, buggy, package, run in BUGS:
        if wanted and not any(w in name for w in wanted):
            continue
        source = open(path).read()
        if source.count(original) != 1:
            print(f"STALE     {name}: {path} no longer holds the original text once")
            failed += 1
            continue
        if check_only:
            continue
        try:
            with open(path, "w") as f:
                f.write(source.replace(original, buggy))
            r = subprocess.run(["go", "test", "-count=1", "-run", run, package], capture_output=True, text=True)
        finally:
            with open(path, "w") as f:
                f.write(source)
        out = r.stdout + r.stderr
        if "build failed" in out or "setup failed" in out:
            status = "BROKEN"
        elif r.returncode != 0:
            status = "KILLED"
        else:
            status = "SURVIVED"
        print(f"{status:9} {name} ({path}; {package} -run '{run}')", flush=True)
        if status != "KILLED":
            failed += 1
            print(out[-2000:])
    if check_only and not failed:
        print(f"known_bugs: all {len(BUGS)} original texts in place")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
