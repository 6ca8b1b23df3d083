# Sourced by the GPU scripts: points GoMLX at the CUDA PJRT plugin of
# Python's jax-cuda13-pjrt (the device machine has it; the recipe of
# docs/gomlx.md). The plugin is loaded by absolute path, so
# nothing is downloaded; XLA_FLAGS is set because go-xla v0.1.4's CUDA check
# would otherwise pick a wrong data dir. Sets CUDA_PLUGIN, GOMLX_BACKEND,
# LD_LIBRARY_PATH, XLA_FLAGS and GOPJRT_CUDA_CHECKS; $PYTHON (default
# python3) is the Python that has the plugin. Returns 1 without a plugin.
# shellcheck shell=bash

cuda_site=$("${PYTHON:-python3}" -c 'import site; print(site.getsitepackages()[0])')
CUDA_PLUGIN=$cuda_site/jax_plugins/xla_cuda13/xla_cuda_plugin.so
if [[ ! -f $CUDA_PLUGIN ]]; then
  echo "no CUDA PJRT plugin at $CUDA_PLUGIN (is jax-cuda13-pjrt installed for ${PYTHON:-python3}?)" >&2
  return 1
fi
cuda_libs=
for d in "$cuda_site"/nvidia/*/lib; do
  if [[ -d $d ]]; then cuda_libs=${cuda_libs:+$cuda_libs:}$d; fi
done
export LD_LIBRARY_PATH=$cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export XLA_FLAGS=--xla_gpu_cuda_data_dir=$cuda_site/nvidia/cu13
export GOPJRT_CUDA_CHECKS=0
export GOMLX_BACKEND=xla:$CUDA_PLUGIN
export CUDA_PLUGIN
