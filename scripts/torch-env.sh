# shellcheck shell=bash
# Sourced by the scripts that run Debian's PyTorch (baselines, reference
# runs): sets torch_py (TORCH_PYTHON, default /usr/bin/python3) and installs
# python3-torch and OpenBLAS when either is missing. python3-torch alone
# pulls only the reference BLAS, with which a toy MLP step is about 9× slower
# (a 300-step CD run: 26 s against 2.9 s, same result to 8 digits).
torch_py=${TORCH_PYTHON:-/usr/bin/python3}
if ! "$torch_py" -c 'import torch' 2>/dev/null || [ ! -e /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 ]; then
  sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-torch libopenblas0-pthread
fi
