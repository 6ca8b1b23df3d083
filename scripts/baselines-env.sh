# shellcheck shell=bash
# Sourced by the benchmark scripts that run PyTorch and JAX as a user
# installs them today: sets torch_py and jax_py (TORCH_PYTHON, JAX_PYTHON;
# default the python of the environment BASELINES_VENV, by default
# ~/.cache/edlebm/baselines-venv, into which the versions pinned in
# baselines/requirements.txt are installed on first use) and versions, the
# line the tables print.
venv=${BASELINES_VENV:-$HOME/.cache/edlebm/baselines-venv}
if [ -z "${TORCH_PYTHON:-}" ] || [ -z "${JAX_PYTHON:-}" ]; then
  mapfile -t pins < <(grep -E '^(torch|jax)==' baselines/requirements.txt)
  if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(any(m.version(p.split('==')[0]).split('+')[0] != p.split('==')[1] for p in sys.argv[1:]))" "${pins[@]}" 2>/dev/null; then
    echo "installing the baselines' Python environment (${pins[*]}) into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q -r baselines/requirements.txt
  fi
fi
torch_py=${TORCH_PYTHON:-$venv/bin/python}
jax_py=${JAX_PYTHON:-$venv/bin/python}
# shellcheck disable=SC2034 # used by the scripts that source this one
versions="$("$torch_py" -c 'import torch; print("PyTorch", torch.__version__)'), $("$jax_py" -c 'import jax, jaxlib; print("JAX", jax.__version__, "jaxlib", jaxlib.__version__)')"
