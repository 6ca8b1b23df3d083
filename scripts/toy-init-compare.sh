#!/usr/bin/env bash
# The initialisation comparison of issue 15 on every 2-D set with an exact
# density (25gaussians, 8gaussians, checkerboard, pinwheel): ED, SM and CD trained
# STEPS steps from PyTorch's nn.Linear initialisation (the authors') and
# from Xavier-normal weights with zero biases (the project's old one), for
# each seed of SEEDS, by Go (train-toy -init) and by PyTorch
# (baselines/toy_bench.py --check --init, for the inits of PY_INITS: a
# PyTorch method costs 2-6 minutes of a core with OpenBLAS, a Go run 2-5),
# one thread each. Writes the log-density MSE of each run's EMA model at the
# last step as a Markdown table, toy-init.md, and each run's MSE over the
# steps, curves-DATA-METHOD.png (toy-studies -study init-report), into OUT
# or DOCS (below). Finished runs are skipped: run it again after
# an interruption. With DOCS (e.g. docs/results/toy-init), each finished
# run's curves (mse.csv per method, PyTorch's JSON lines) are copied there
# at once, runs whose copies DOCS holds are not run again even if OUT is
# gone (a machine replaced between sessions), and the table is made from
# DOCS's copies and written there too. A PyTorch run's methods are run one
# at a time, each finished method's line kept in DOCS/pytorch/*.partial
# until its three are in.
#
#   nohup nice scripts/toy-init-compare.sh [OUT] > toy-init.log 2>&1 &
#
# Settings (environment): SEEDS, DATA, INITS, PY_INITS (default INITS), STEPS.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$HOME/runs/toy-init}
seeds=${SEEDS:-1 2}
data=${DATA:-25gaussians 8gaussians checkerboard pinwheel}
inits=${INITS:-pytorch xavier}
py_inits=${PY_INITS:-$inits}
steps=${STEPS:-10000}
results=${DOCS:-$out} # where the table reads the runs from
mkdir -p "$out/bin" "$out/pytorch" "$results/pytorch"
go build -o "$out/bin/" ./cmd/train-toy ./cmd/toy-studies
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# shellcheck source=scripts/torch-env.sh
. scripts/torch-env.sh

for seed in $seeds; do
  for init in $inits; do
    for d in $data; do
      go_run=$out/go/$init-s$seed
      kept=$results/go/$init-s$seed/$d
      if [ ! -f "$go_run/$d/done" ] && [ ! -f "$kept/done" ]; then
        mkdir -p "$go_run"
        echo "$(date -u +%T) go $d $init seed $seed"
        "$out/bin/train-toy" -backend cpu,devices=1 -data "$d" -methods ed,sm,cd -steps "$steps" -eval-every "$((steps < 1000 ? steps : 1000))" -seed "$seed" \
          -init "$init" -out "$go_run" >"$go_run-$d.log" 2>&1
        touch "$go_run/$d/done"
      fi
      if [ "$results" != "$out" ] && [ ! -f "$kept/done" ]; then
        for method in ed sm cd; do
          mkdir -p "$kept/$method" && cp "$go_run/$d/$method/mse.csv" "$kept/$method/"
        done
        touch "$kept/done"
      fi
      py=$out/pytorch/$d-$init-s$seed.jsonl
      kept_py=$results/pytorch/$(basename "$py")
      case " $py_inits " in *" $init "*) ;; *) continue ;; esac
      if [ ! -s "$py" ] && [ ! -s "$kept_py" ]; then
        # One method at a time (toy_bench seeds each method alike either
        # way), each line kept as it comes, in DOCS when set: a run cut off
        # loses only the method in flight.
        for method in ed sm cd; do
          grep -qs "\"method\": \"$method\"" "$kept_py.partial" && continue
          echo "$(date -u +%T) pytorch $d $init seed $seed: $method"
          "$torch_py" baselines/toy_bench.py --check --check-steps "$steps" --method "$method" --data "$d" --init "$init" \
            --seed "$seed" --threads 1 --json >"$py.tmp"
          cat "$py.tmp" >>"$kept_py.partial"
        done
        cp "$kept_py.partial" "$py"
        rm -f "$py.tmp"
      fi
      if [ ! -s "$kept_py" ]; then
        cp "$py" "$kept_py"
      fi
      rm -f "$kept_py.partial"
    done
  done
done

"$out/bin/toy-studies" -study init-report -init-dir "$results"
cat "$results/toy-init.md"
