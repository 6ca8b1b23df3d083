#!/usr/bin/env bash
# The paper's "Qualitative Results on the Effect of t, M, and w" (issue 23):
# ED's density grids over t × M (w = 1) and over w × M (t = 1) on each toy
# set of DATA, with the paper's M ∈ {1, 4, 32, 128}, by toy-studies. Each
# set's grids go to OUT/toy-grid-SET (grid_tm.csv/png, grid_wm.csv/png)
# with every finished cell kept in its cells/ folder, so the script run
# again trains only the cells not done (the M = 128 cells take about 17
# minutes each on XLA CPU). Point OUT into docs/results and commit the
# cells as they come: nothing outside the repository survives a replaced
# machine.
#
#   nohup nice scripts/toy-grids.sh docs/results > toy-grids.log 2>&1 &
#
# Settings (environment): DATA, MS (values of M), STUDIES, BACKEND, and
# EPOCHS, POINTS for a quick trial.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs}
data=${DATA:-25gaussians pinwheel}
ms=${MS:-1,4,32,128}
studies=${STUDIES:-tm wm}
backend=${BACKEND:-auto}
epochs=${EPOCHS:-65}
points=${POINTS:-20000}

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/" ./cmd/toy-studies
for d in $data; do
  for study in $studies; do
    echo "$(date -u +%T) $study grid on $d"
    "$bin/toy-studies" -backend "$backend" -study "$study" -grid-data "$d" -grid-m "$ms" \
      -grid-epochs "$epochs" -grid-points "$points" -out "$out/toy-grid-$d"
  done
done
