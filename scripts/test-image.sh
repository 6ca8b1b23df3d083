#!/usr/bin/env bash
# Builds the image of docker/Dockerfile with buildah, without a Docker
# engine or a container registry, and checks what can be checked without a
# GPU (docs/docker.md has a run of it and what it found):
#
#   1. makes the two base images if they are missing, from Debian's
#      packages (mmdebstrap): a stand-in for golang:1.26-bookworm (Debian
#      bookworm with gcc, git and the CA certificates, plus Go from the Go
#      module proxy's toolchain module, its hash checked against the
#      checksum database), and a plain bookworm standing in for the CUDA
#      base (the real one is Ubuntu 24.04; its environment is copied);
#   2. builds the Dockerfile as it is: buildah bud --pull=never (the FROM
#      names resolve to the local images); the image it replaces is
#      deleted;
#   3. runs the checks, each a function check_NAME listed in CHECKS, on the
#      image's root (buildah from + mount, or buildah run for what runs in
#      it): every command in /usr/local/bin; the CUDA plugin, the NVIDIA
#      libraries and their links; every library they load resolving by the
#      image's own loader except libcuda.so.1 (the NVIDIA runtime mounts
#      it); the GLIBC and GLIBCXX versions they need against the image's
#      (and Ubuntu 24.04's); sizes; a short training run on SimpleGo
#      (-backend go) through the image's entry point, resumed once; the
#      scoring service (serve) on that run answering a score and its
#      metrics, then draining on SIGTERM; and the entry point's -backend
#      cuda failing clearly without a GPU;
#   4. prints a summary, and exits 1 if any check failed.
#
# A new check is a function check_NAME that prints what it sees, fails
# (any failing command, set -e holds in it) when the image is wrong, and
# calls `summary "line"` for the summary; add NAME to CHECKS.
#
# Not part of the default test suite (scripts/test.sh): it takes minutes
# (four on 2 cores with nearby registries: the bases, Go modules, the
# build, 3 GB of NVIDIA wheels from PyPI), some 25 GB of disk at its peak
# (buildah's vfs storage copies every layer whole), root, buildah,
# mmdebstrap and the package registries (Debian's mirror, the Go module
# proxy, PyPI).
#
#   scripts/test-image.sh [-rebuild-bases] [-layers] [-no-build] [-only NAME,...] [-prune]
#
#   -rebuild-bases  make the base images again even if they exist
#                   (also REBUILD_BASES=1)
#   -layers         keep every step's layer (buildah bud --layers), so that
#                   a build of the same sources again reuses them: about
#                   14 GB more per build kept
#   -no-build       check the image already built, do not build it
#   -only NAMES     run only these checks (comma-separated; default all)
#   -prune          afterwards, delete buildah's untagged images (the
#                   layers -layers kept)
#
# Environment: WORK_DIR (default /var/tmp/edlebm-images: root file systems,
# the Go toolchain, logs, scratch), IMAGE (default edlebm), RUNTIME_BASE
# (default localhost/bookworm-cuda-base), DATA_DIR (default Debian's
# /usr/share/datasets/fashion-mnist), GO_VERSION (default go.mod's go
# line), EXTRA_CA_CERTS (PEM files added to the golang stand-in's trusted
# CAs, for a network whose TLS passes through an inspecting proxy; default
# /usr/local/share/ca-certificates/*.crt, the local additions to this
# machine's Debian trust store; set it empty to add none).
set -euo pipefail
cd "$(dirname "$0")/.."

WORK_DIR=${WORK_DIR:-/var/tmp/edlebm-images}
IMAGE=${IMAGE:-edlebm}
RUNTIME_BASE=${RUNTIME_BASE:-localhost/bookworm-cuda-base}
DATA_DIR=${DATA_DIR:-/usr/share/datasets/fashion-mnist}
REBUILD_BASES=${REBUILD_BASES:-0}
GO_VERSION=${GO_VERSION:-$(awk '$1 == "go" {print $2; exit}' go.mod)}
if [[ -v EXTRA_CA_CERTS ]]; then
  read -r -a extra_cas <<<"$EXTRA_CA_CERTS"
else
  extra_cas=()
  for f in /usr/local/share/ca-certificates/*.crt; do
    if [[ -f $f ]]; then extra_cas+=("$f"); fi
  done
fi

CHECKS=(commands plugin libraries glibc sizes smoke_go serve cuda_without_gpu)
build=1
prune=0
layers=--layers=false
while [[ $# -gt 0 ]]; do
  case $1 in
    -rebuild-bases) REBUILD_BASES=1 ;;
    -layers) layers=--layers ;;
    -no-build) build=0 ;;
    -only)
      IFS=, read -r -a CHECKS <<<"${2:?-only needs a list of checks}"
      shift
      ;;
    -prune) prune=1 ;;
    -h | -help | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "test-image: unknown argument $1 (see -h)" >&2
      exit 2
      ;;
  esac
  shift
done

# The build base is what the Dockerfile's build stage names.
BUILD_BASE=$(sed -n 's/^FROM \([^ ]*\) AS build.*/\1/p' docker/Dockerfile)
MIRRORS=(
  "deb http://deb.debian.org/debian bookworm main"
  "deb http://deb.debian.org/debian bookworm-updates main"
  "deb http://deb.debian.org/debian-security bookworm-security main"
)
# What golang:1.26-bookworm has that a build can use: buildpack-deps'
# bookworm-scm (less mercurial, subversion and bzr) and the golang image's
# compilers.
GOLANG_PACKAGES=ca-certificates,curl,gnupg,netbase,wget,git,openssh-client,procps,g++,gcc,libc6-dev,make,pkg-config
# Ubuntu 24.04, the real runtime base's system: its C and C++ libraries.
UBUNTU_GLIBC=2.39
UBUNTU_GLIBCXX=3.4.33
GOXLA=/usr/local/lib/go-xla
PLUGIN=$GOXLA/nvidia/pjrt_c_api_cuda_plugin.so

bah() { buildah --storage-driver vfs "$@"; }
log() { printf '\n== %s\n' "$*"; }

# Cleanup: the containers this run made (unmounted by rm) and its scratch.
containers=()
scratch=""
cleanup() {
  local c
  for c in "${containers[@]}"; do
    bah rm "$c" >/dev/null 2>&1 || true
  done
  if [[ -n $scratch ]]; then rm -rf "$scratch"; fi
}
trap cleanup EXIT

summary_file=""
summary() { printf '%s\n' "$*" >>"$summary_file"; }

image_exists() { bah inspect --type image "$1" >/dev/null 2>&1; }

# image_env IMAGE NAME: the value of NAME in the image's environment.
image_env() {
  bah inspect --type image --format '{{range .OCIv1.Config.Env}}{{println .}}{{end}}' "$1" |
    sed -n "s/^$2=//p"
}

# new_container IMAGE: makes a working container of IMAGE, named in
# $container; it is removed on exit, unless forget_container names it.
container=""
new_container() {
  container=$(bah from --pull=never "$1")
  containers+=("$container")
}

# forget_container NAME: NAME is gone (committed with --rm).
forget_container() {
  local kept=() c
  for c in "${containers[@]}"; do
    if [[ $c != "$1" ]]; then kept+=("$c"); fi
  done
  containers=("${kept[@]}")
}

# root_fs NAME SUITE PACKAGES: a Debian root file system as a tarball.
root_fs() {
  local tar=$WORK_DIR/$1-root.tar
  # shellcheck disable=SC2016 # mmdebstrap expands the hook's $1 (the root).
  nice -n 10 mmdebstrap --mode=root --variant=minbase --format=tar \
    --include="$3" --aptopt='Acquire::Retries "3"' \
    --customize-hook='chroot "$1" apt-get clean' \
    "$2" "$tar" "${MIRRORS[@]}" >"$WORK_DIR/logs/mmdebstrap-$1.log" 2>&1 ||
    {
      tail -20 "$WORK_DIR/logs/mmdebstrap-$1.log" >&2
      return 1
    }
  printf '%s\n' "$tar"
}

# go_toolchain: the toolchain module's zip for GO_VERSION, downloaded from
# the Go module proxy by the go command, which checks it against the
# checksum database (sum.golang.org, reached through the proxy).
go_toolchain() {
  local module=golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-amd64 json
  json=$(cd "$WORK_DIR" && GOTOOLCHAIN=local GOFLAGS=-modcacherw GOMODCACHE=$WORK_DIR/gomodcache \
    GOPROXY=https://proxy.golang.org GOSUMDB=sum.golang.org GONOSUMDB='' GONOSUMCHECK='' GOPRIVATE='' \
    GOINSECURE='' GO111MODULE=on go mod download -json "$module")
  local zip sum
  zip=$(jq -r .Zip <<<"$json")
  sum=$(jq -r .Sum <<<"$json")
  echo "$module: $sum (go.sum hash, checked against sum.golang.org by go mod download)" >&2
  echo "sha256 $(sha256sum "$zip" | cut -d' ' -f1)  $(basename "$zip")" >&2
  printf '%s\n' "$zip"
}

make_build_base() {
  log "making $BUILD_BASE: bookworm ($GOLANG_PACKAGES) + Go $GO_VERSION"
  local tag=${BUILD_BASE#*:}
  if [[ $GO_VERSION != "${tag%%-*}".* ]]; then
    echo "go.mod's go $GO_VERSION is not a Go ${tag%%-*} ($BUILD_BASE): set GO_VERSION" >&2
    return 1
  fi
  local tar zip c root
  tar=$(root_fs golang bookworm "$GOLANG_PACKAGES")
  zip=$(go_toolchain)
  new_container scratch
  c=$container
  root=$(bah mount "$c")
  tar -C "$root" --numeric-owner -xpf "$tar"
  mkdir "$scratch/go"
  unzip -q "$zip" -d "$scratch/go"
  mv "$scratch/go/golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-amd64" "$root/usr/local/go"
  chmod 0755 "$root"/usr/local/go/bin/* "$root"/usr/local/go/pkg/tool/linux_amd64/*
  mkdir -p "$root/go/src" "$root/go/bin"
  chmod -R 1777 "$root/go"
  if [[ ${#extra_cas[@]} -gt 0 ]]; then
    echo "adding CA certificates to the stand-in (EXTRA_CA_CERTS): ${extra_cas[*]}"
    local f
    for f in "${extra_cas[@]}"; do
      cp "$f" "$root/usr/local/share/ca-certificates/$(basename "${f%.*}").crt"
    done
    chroot "$root" update-ca-certificates 2>&1 | grep -v '^rehash: warning' || true
  fi
  bah config --env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env GOLANG_VERSION="$GO_VERSION" --env GOTOOLCHAIN=local --env GOPATH=/go \
    --workingdir /go --cmd bash \
    --label org.opencontainers.image.description="stand-in for $BUILD_BASE made by scripts/test-image.sh (mmdebstrap bookworm + Go $GO_VERSION)" "$c"
  bah run --isolation chroot "$c" -- go version
  bah commit --quiet --rm "$c" "$BUILD_BASE" >/dev/null
  forget_container "$c"
}

make_runtime_base() {
  log "making $RUNTIME_BASE: bookworm (minbase, ca-certificates), with nvidia/cuda's environment"
  local tar c root
  tar=$(root_fs runtime bookworm ca-certificates)
  new_container scratch
  c=$container
  root=$(bah mount "$c")
  tar -C "$root" --numeric-owner -xpf "$tar"
  # nvidia/cuda:13.0.1-base-ubuntu24.04's environment.
  bah config --env PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64 \
    --env NVIDIA_VISIBLE_DEVICES=all --env NVIDIA_DRIVER_CAPABILITIES=compute,utility --cmd bash \
    --label org.opencontainers.image.description="stand-in for nvidia/cuda:13.0.1-base-ubuntu24.04 made by scripts/test-image.sh (mmdebstrap bookworm)" "$c"
  bah commit --quiet --rm "$c" "$RUNTIME_BASE" >/dev/null
  forget_container "$c"
}

bases() {
  local start=$SECONDS
  if [[ $REBUILD_BASES == 1 ]] || ! image_exists "$BUILD_BASE"; then
    make_build_base
  fi
  if [[ $REBUILD_BASES == 1 ]] || ! image_exists "$RUNTIME_BASE"; then
    make_runtime_base
  fi
  summary "bases: $BUILD_BASE and $RUNTIME_BASE ready ($((SECONDS - start)) s)"
}

build_image() {
  log "building $IMAGE from docker/Dockerfile (buildah bud, log in $WORK_DIR/logs/build.log)"
  local start=$SECONDS old=""
  if image_exists "$IMAGE"; then old=$(bah inspect --type image --format '{{.FromImageID}}' "$IMAGE"); fi
  # The installer's progress lines are kept to the log; the steps show.
  {
    nice -n 10 buildah --storage-driver vfs bud --isolation chroot --network host --pull=never "$layers" \
      -f docker/Dockerfile --build-arg CUDA_BASE="$RUNTIME_BASE" -t "$IMAGE" . 2>&1
    echo $? >"$scratch/build.rc"
  } | tee "$WORK_DIR/logs/build.log" |
    grep --line-buffered -aE '^\[[0-9]/[0-9]\] STEP|^--> |^Successfully tagged|^installed |Using cache|^Error|^error' || true
  if [[ $(cat "$scratch/build.rc") -ne 0 ]]; then
    tail -20 "$WORK_DIR/logs/build.log" | tr '\r' '\n' | tail -20 >&2
    return 1
  fi
  local reused new
  reused=$(grep -c 'Using cache' "$WORK_DIR/logs/build.log" || true)
  new=$(bah inspect --type image --format '{{.FromImageID}}' "$IMAGE")
  if [[ -n $old && $old != "$new" ]]; then
    echo "deleting the image it replaces, ${old:0:12}"
    bah rmi "$old" >/dev/null || true
  fi
  summary "build: $IMAGE ${new:0:12} in $((SECONDS - start)) s ($reused steps from the layer cache)"
}

# --- checks: run on the image's root file system, $root, of container $ctr.

check_commands() {
  local name missing=() n=0
  for dir in cmd/*/; do
    name=$(basename "$dir")
    if grep -qs '^package main$' "$dir"*.go; then
      n=$((n + 1))
      if [[ -x $root/usr/local/bin/$name ]]; then
        printf '  %-18s %s\n' "$name" "$(du -h "$root/usr/local/bin/$name" | cut -f1)"
      else
        missing+=("$name")
      fi
    fi
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "missing from /usr/local/bin: ${missing[*]}"
    return 1
  fi
  local entry
  entry=$(bah inspect --type image --format '{{range .OCIv1.Config.Entrypoint}}{{.}} {{end}}' "$IMAGE")
  echo "entry point: $entry"
  summary "commands: all $n commands of cmd/ in /usr/local/bin; entry point $entry"
}

check_plugin() {
  ls -l "$root$PLUGIN"
  local dir
  for dir in cu13/lib cudnn/lib nccl/lib nvshmem/lib cu13/bin cu13/nvvm/libdevice; do
    printf '  nvidia/%-20s %3d files\n' "$dir" "$(find "$root$GOXLA/nvidia/$dir" -maxdepth 1 -type f | wc -l)"
  done
  echo "links installed beside the libraries (resolved in the image):"
  local link bad=0
  for link in "$GOXLA/nvidia/bin/ptxas" /usr/local/lib/libcublas.so.13 /usr/local/lib/libcublasLt.so.13; do
    if [[ -L $root$link ]]; then
      echo "  $link -> $(readlink "$root$link") ($(chroot "$root" readlink -e "$link" || echo 'leads nowhere'))"
    else
      echo "  $link: missing"
      bad=1
    fi
  done
  local broken
  broken=$(chroot "$root" find /usr/local -xtype l)
  if [[ -n $broken ]]; then
    echo "links that lead nowhere in the image:"
    printf '%s\n' "$broken" | sed 's/^/  /'
    bad=1
  fi
  local flags data_dir
  flags=$(image_env "$IMAGE" XLA_FLAGS)
  data_dir=$(sed -n 's/.*--xla_gpu_cuda_data_dir=\([^ ]*\).*/\1/p' <<<"$flags")
  echo "XLA_FLAGS=$flags; GOPJRT_CUDA_CHECKS=$(image_env "$IMAGE" GOPJRT_CUDA_CHECKS); GOMLX_NO_AUTO_INSTALL=$(image_env "$IMAGE" GOMLX_NO_AUTO_INSTALL)"
  if [[ -z $data_dir ]]; then
    echo "XLA_FLAGS names no --xla_gpu_cuda_data_dir: go-xla v0.1.4 sets /home/janpf/.local/lib/go-xla/nvidia"
    bad=1
  fi
  [[ $bad == 0 ]]
  test -x "$root$data_dir/bin/ptxas"
  test -f "$root$data_dir/nvvm/libdevice/libdevice.10.bc"
  echo "ptxas: $(chroot "$root" "$data_dir/bin/ptxas" --version | tail -1)"
  summary "plugin: $PLUGIN ($(du -h "$root$PLUGIN" | cut -f1)) and the NVIDIA libraries in place; links hold; XLA's data dir $data_dir has ptxas and libdevice"
}

# ld_list FILE LIBRARY_PATH: the image's loader's list of what FILE needs,
# as ldd gets it (ld.so --list stops at the first library not found).
ld_list() {
  chroot "$root" env LD_TRACE_LOADED_OBJECTS=1 /lib64/ld-linux-x86-64.so.2 --library-path "$2" "$1" 2>&1
}

check_libraries() {
  # The library path the plugin's own dlopen calls search: its RPATH
  # ($ORIGIN made absolute), then the image's LD_LIBRARY_PATH. The backend
  # sets no LD_LIBRARY_PATH (backend/, go-xla load the plugin by path).
  local origin rpath entries dirs=() d path m
  origin=$(dirname "$PLUGIN")
  rpath=$(readelf -d "$root$PLUGIN" | sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p')
  IFS=: read -r -a entries <<<"${rpath//\$ORIGIN/$origin}"
  for d in "${entries[@]}"; do
    d=$(realpath -m "$d")
    if [[ -d $root$d && " ${dirs[*]} " != *" $d "* ]]; then dirs+=("$d"); fi
  done
  path=$(
    IFS=:
    echo "${dirs[*]}"
  ):$(image_env "$IMAGE" LD_LIBRARY_PATH)
  echo "library path: $path"
  echo "the plugin (its loader, as ldd runs it):"
  ld_list "$PLUGIN" "$path" | sed 's/^/  /'
  if ld_list "$PLUGIN" "$path" | grep -q 'not found'; then return 1; fi

  # Everything it loads at run time (dlopen), and what they need.
  local lib missing n=0 unexpected=() needs_cuda=()
  while IFS= read -r lib; do
    n=$((n + 1))
    missing=$(ld_list "$lib" "$path" | sed -n 's/^\t\(.*\) => not found$/\1/p')
    for m in $missing; do
      if [[ $m == libcuda.so.1 ]]; then
        needs_cuda+=("$(basename "$lib")")
      else
        unexpected+=("$(basename "$lib"): $m")
      fi
    done
  done < <(cd "$root" && find "${GOXLA#/}"/nvidia/{cu13,cudnn,nccl}/lib "${GOXLA#/}"/nvidia/nvshmem/lib/libnvshmem_host.so* \
    -name '*.so*' -type f | sort | sed 's|^|/|')
  echo "$n libraries of nvidia/cu13, cudnn, nccl and libnvshmem_host: all they need resolves but libcuda.so.1, needed by: ${needs_cuda[*]:-none}"
  # nvshmem's bootstrap and transport plugins (MPI, PMIx, InfiniBand,
  # libfabric, UCX) load only when a run asks for those transports.
  local optional=()
  while IFS= read -r lib; do
    missing=$(ld_list "$lib" "$path" | sed -n 's/^\t\(.*\) => not found$/\1/p' | tr '\n' ' ')
    if [[ -n $missing ]]; then optional+=("$(basename "$lib") (${missing% })"); fi
  done < <(cd "$root" && find "${GOXLA#/}"/nvidia/nvshmem/lib -name 'nvshmem_*.so*' -type f | sort | sed 's|^|/|')
  echo "not required: nvshmem's optional bootstrap and transport plugins, whose system libraries the image lacks: ${optional[*]:-none}"
  # The commands; those built without cgo are static (no interpreter).
  local bins=0 static=()
  for lib in "$root"/usr/local/bin/*; do
    if ! readelf -l "$lib" | grep -q 'program interpreter'; then
      static+=("$(basename "$lib")")
      continue
    fi
    bins=$((bins + 1))
    missing=$(ld_list "/usr/local/bin/$(basename "$lib")" "$path" | sed -n 's/^\t\(.*\) => not found$/\1/p')
    if [[ -n $missing ]]; then unexpected+=("$(basename "$lib"): $missing"); fi
  done
  echo "train-lebm needs: $(ld_list /usr/local/bin/train-lebm "$path" | awk '{print $1}' | tr '\n' ' ')"
  echo "$bins dynamically linked commands, all resolved; static: ${static[*]:-none}"
  if [[ ${#unexpected[@]} -gt 0 ]]; then
    echo "unresolved:"
    printf '  %s\n' "${unexpected[@]}"
    return 1
  fi
  summary "libraries: the plugin, the $n NVIDIA libraries it loads and $bins dynamically linked commands resolve by the image's loader, but for libcuda.so.1 (needed by ${needs_cuda[*]:-none})"
}

# max_version PREFIX FILE...: the highest PREFIX_x.y symbol version the
# files need.
max_version() {
  local prefix=$1
  shift
  { objdump -T "$@" 2>/dev/null || true; } | { grep -oE "\b${prefix}_[0-9.]+" || true; } | sed "s/^${prefix}_//" | sort -uV | tail -1
}

# version_le A B: A ≤ B as versions.
version_le() { [[ $(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1) == "$1" ]]; }

check_glibc() {
  local have have_cxx
  have=$(chroot "$root" /lib64/ld-linux-x86-64.so.2 --version | sed -n '1s/.* \([0-9.]*\)\.$/\1/p')
  have_cxx=$(strings "$root"/usr/lib/x86_64-linux-gnu/libstdc++.so.6 | sed -n 's/^GLIBCXX_\([0-9.]*\)$/\1/p' | sort -V | tail -1)
  echo "image: glibc $have, libstdc++ GLIBCXX_$have_cxx (Ubuntu 24.04: $UBUNTU_GLIBC, GLIBCXX_$UBUNTU_GLIBCXX)"
  local nvidia=() cmds=() f
  mapfile -t nvidia < <(find "$root$GOXLA" -type f \( -name '*.so*' -o -perm -u+x \) ! -name 'nvshmem_*')
  cmds=("$root"/usr/local/bin/*)
  local ok=1 what files need need_cxx
  for what in plugin nvidia commands; do
    case $what in
      plugin) files=("$root$PLUGIN") ;;
      nvidia) files=("${nvidia[@]}") ;;
      commands) files=("${cmds[@]}") ;;
    esac
    need=$(max_version GLIBC "${files[@]}")
    need_cxx=$(max_version GLIBCXX "${files[@]}")
    printf '  %-9s (%3d files) need GLIBC_%s, GLIBCXX_%s\n' "$what" "${#files[@]}" "$need" "${need_cxx:-none}"
    for f in "$have" "$UBUNTU_GLIBC"; do
      if ! version_le "$need" "$f"; then
        echo "  $what need glibc $need > $f"
        ok=0
      fi
    done
    for f in "$have_cxx" "$UBUNTU_GLIBCXX"; do
      if [[ -n $need_cxx ]] && ! version_le "$need_cxx" "$f"; then
        echo "  $what need GLIBCXX_$need_cxx > $f"
        ok=0
      fi
    done
  done
  [[ $ok == 1 ]]
  summary "glibc: everything needs at most what bookworm's $have and Ubuntu 24.04's $UBUNTU_GLIBC have (libstdc++ likewise)"
}

check_sizes() {
  bah images --format '{{.Name}}:{{.Tag}} {{.Size}}' | grep -E "($IMAGE|${RUNTIME_BASE#localhost/}|${BUILD_BASE%%:*})" | sed 's/^/  /'
  local size
  size=$(bah images --format '{{.Name}}:{{.Tag}} {{.Size}}' | awk -v n="localhost/$IMAGE:latest" '$1 == n {print $2, $3}')
  echo "biggest parts:"
  (cd "$root" && du -sh usr/local/lib/go-xla/nvidia/* usr/local/bin 2>/dev/null | sort -rh | head -8 | sed 's/^/  /')
  (cd "$root$GOXLA/nvidia" && find . -type f -size +100M -printf '%s %P\n' | sort -rn | head -8 |
    awk '{printf "  %6.0f MB  %s\n", $1 / 1e6, $2}')
  echo "  $(cd "$root" && du -sh --exclude=./usr/local . | cut -f1) the rest (the base system: all but /usr/local)"
  summary "sizes: $IMAGE $size; NVIDIA libraries and plugin $(du -sh "$root$GOXLA" | cut -f1), commands $(du -sh "$root/usr/local/bin" | cut -f1)"
}

# run_entrypoint RUNS ARGS...: the image's entry point with ARGS, as
# `docker run IMAGE ARGS` runs it, with DATA_DIR at /data/fashion-mnist
# and RUNS at /runs.
run_entrypoint() {
  local runs=$1
  shift
  local entry
  mapfile -t entry < <(bah inspect --type image --format '{{range .OCIv1.Config.Entrypoint}}{{println .}}{{end}}' "$IMAGE" | sed '/^$/d')
  timeout 600 buildah --storage-driver vfs run --isolation chroot \
    -v "$DATA_DIR:/data/fashion-mnist:ro" -v "$runs:/runs" "$ctr" -- "${entry[@]}" "$@"
}

# plain: the command's output without the progress bar and table.
plain() { sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' | tr '\r' '\n' | grep -avE '[│╭╰]|\[=|^\s*$|%.*steps/s'; }

check_smoke_go() {
  if [[ ! -f $DATA_DIR/train-images-idx3-ubyte.gz ]]; then
    echo "no Fashion-MNIST in $DATA_DIR (apt-get install dataset-fashion-mnist, or set DATA_DIR)"
    return 1
  fi
  local runs=$scratch/runs-go start
  mkdir -p "$runs"
  local args=(-backend go -data fashion-mnist -data-dir /data/fashion-mnist -train-size 64 -batch 16 -posterior-steps 5 -test-posterior-steps 5 -gen-steps 20 -grid 4 -recon 4)
  echo "\$ docker run ... $IMAGE ${args[*]} -epochs 1   (the entry point's -backend cuda overridden)"
  start=$SECONDS
  local rc=0
  run_entrypoint "$runs" "${args[@]}" -epochs 1 >"$scratch/go1.log" 2>&1 || rc=$?
  plain <"$scratch/go1.log" | sed 's/^/  /'
  local first=$((SECONDS - start))
  echo "exit status $rc after $first s"
  [[ $rc == 0 ]]
  test -f "$runs/lebm/checkpoint/LATEST"
  test -f "$runs/lebm/samples-epoch001.png"
  echo "\$ the same with -epochs 2 (resumes from /runs/lebm/checkpoint)"
  start=$SECONDS
  run_entrypoint "$runs" "${args[@]}" -epochs 2 >"$scratch/go2.log" 2>&1 || rc=$?
  plain <"$scratch/go2.log" | sed 's/^/  /'
  echo "exit status $rc after $((SECONDS - start)) s"
  [[ $rc == 0 ]]
  grep -q 'resuming from /runs/lebm/checkpoint at step 4' "$scratch/go2.log"
  test -f "$runs/lebm/samples-epoch002.png"
  echo "outputs: $(find "$runs/lebm" -mindepth 1 -maxdepth 1 -printf '%f ' | tr ' ' '\n' | sort | tr '\n' ' ')"
  echo "last metrics: $(tail -1 "$runs/lebm/metrics.jsonl" | cut -c1-300)"
  summary "smoke (go): 4 steps of train-lebm on SimpleGo in the image in ${first} s, then resumed to step 8 in $((SECONDS - start)) s; checkpoint, grids and metrics written"
}

# check_serve: the scoring service in the image, on smoke_go's run and
# SimpleGo: ready, a score for a Fashion-MNIST image, its metrics, and a
# drain on SIGTERM. Chroot isolation shares the host's network, so curl
# reaches it on 127.0.0.1.
check_serve() {
  local runs=$scratch/runs-go
  if [[ ! -f $runs/lebm/checkpoint/LATEST ]]; then
    echo "no run in $runs/lebm: check_serve serves smoke_go's run (-only smoke_go,serve)"
    return 1
  fi
  /usr/bin/python3 - "$DATA_DIR/t10k-images-idx3-ubyte.gz" "$scratch/image.png" <<'PY'
import gzip, struct, sys, zlib
img = gzip.open(sys.argv[1]).read()[16:16 + 784]
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
rows = b"".join(b"\0" + img[r * 28:(r + 1) * 28] for r in range(28))
open(sys.argv[2], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 28, 28, 8, 0, 0, 0, 0)) +
                              chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
PY
  local port=$((20000 + RANDOM % 20000)) start=$SECONDS rc=0 ready=""
  echo "\$ docker run --entrypoint serve ... $IMAGE -backend go -run /runs/lebm -listen 127.0.0.1:$port -batch-sizes 1,4"
  timeout 300 buildah --storage-driver vfs run --isolation chroot -v "$runs:/runs" "$ctr" -- \
    serve -backend go -run /runs/lebm -listen "127.0.0.1:$port" -batch-sizes 1,4 >"$scratch/serve.log" 2>&1 &
  local pid=$!
  for _ in $(seq 600); do
    if curl -sf "http://127.0.0.1:$port/readyz" >/dev/null; then
      ready=$((SECONDS - start))
      break
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if [[ -z $ready ]]; then
    sed 's/^/  /' "$scratch/serve.log"
    echo "not ready"
    return 1
  fi
  echo "ready after $ready s"
  local answer
  answer=$(curl -sf -F "image=@$scratch/image.png" "http://127.0.0.1:$port/v1/score")
  echo "  POST /v1/score: $answer"
  grep -q '"score":' <<<"$answer"
  local metrics
  metrics=$(curl -sf "http://127.0.0.1:$port/metrics")
  echo "  GET /metrics: $(grep -E '^edlebm_(images_total|http_requests_total)' <<<"$metrics" | tr '\n' ' ')"
  grep -q '^edlebm_images_total{op="score"} 1$' <<<"$metrics"
  # chroot isolation shares the host's process table: SIGTERM the service
  # itself, the process named serve listening on the port (buildah run's
  # command line names it too).
  local p
  for p in $(pgrep -x serve); do
    if tr '\0' ' ' <"/proc/$p/cmdline" | grep -q -- "-listen 127.0.0.1:$port"; then kill -TERM "$p"; fi
  done
  wait "$pid" || rc=$?
  sed 's/^/  /' "$scratch/serve.log" | grep -v '^  backend:' | cut -c1-200
  echo "exit status $rc after SIGTERM"
  [[ $rc == 0 ]]
  grep -q 'drained; stopped' "$scratch/serve.log"
  summary "serve: the scoring service in the image on SimpleGo ready in ${ready} s, a Fashion-MNIST image scored, its metrics counted it, SIGTERM drained and exited 0"
}

check_cuda_without_gpu() {
  if compgen -G '/dev/nvidia*' >/dev/null; then
    echo "this machine has /dev/nvidia*: not the no-GPU case"
    summary "cuda without GPU: skipped (a GPU is present)"
    return 0
  fi
  local runs=$scratch/runs-cuda rc=0 start=$SECONDS
  mkdir -p "$runs"
  echo "\$ docker run ... $IMAGE   (no GPU: the entry point's -backend cuda and the default arguments)"
  run_entrypoint "$runs" -data fashion-mnist -data-dir /data/fashion-mnist >"$scratch/cuda.log" 2>&1 || rc=$?
  plain <"$scratch/cuda.log" | grep -v 'subprocess exited' | sed 's/^/  /'
  echo "exit status $rc after $((SECONDS - start)) s"
  [[ $rc -ne 0 ]]
  grep -q 'flag -backend: opening backend "xla:/usr/local/lib/go-xla/nvidia/pjrt_c_api_cuda_plugin.so"' "$scratch/cuda.log"
  grep -q 'No visible GPU devices' "$scratch/cuda.log"
  if [[ -e $runs/lebm/checkpoint ]]; then
    echo "it left a checkpoint"
    return 1
  fi
  summary "cuda without GPU: exits $rc in $((SECONDS - start)) s with \"flag -backend: opening backend ...: PJRT error (code=9): No visible GPU devices.\""
}

# --- main

for tool in buildah mmdebstrap go jq unzip objdump readelf strings; do
  command -v "$tool" >/dev/null || {
    echo "test-image: needs $tool" >&2
    exit 1
  }
done
if [[ $(id -u) -ne 0 ]]; then
  echo "test-image: run as root (mmdebstrap --mode=root, chroot)" >&2
  exit 1
fi
mkdir -p "$WORK_DIR/logs"
scratch=$(mktemp -d "$WORK_DIR/run.XXXXXX")
summary_file=$scratch/summary
: >"$summary_file"

log "test-image: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)'), $(date -u +%FT%TZ)"
echo "$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(buildah --version)"
total=$SECONDS
if [[ $build == 1 ]]; then
  bases
  build_image
fi
image_exists "$IMAGE" || {
  echo "test-image: no image $IMAGE (run without -no-build)" >&2
  exit 1
}
new_container "$IMAGE"
ctr=$container
root=$(bah mount "$ctr")
# The checks' container drops the image's VOLUMEs (/data, /runs): buildah
# 1.28 mounted its own folder for the VOLUME /runs over `-v DIR:/runs` in
# about one run in three here (the run's outputs went there, and the next
# run resumed from them); docker run -v replaces the VOLUME.
# shellcheck disable=SC2016 # a Go template's $k, not the shell's
while IFS= read -r volume; do
  if [[ -n $volume ]]; then bah config --volume "$volume-" "$ctr"; fi
done < <(bah inspect --type image --format '{{range $k, $v := .OCIv1.Config.Volumes}}{{println $k}}{{end}}' "$IMAGE")

failed=()
for name in "${CHECKS[@]}"; do
  if ! declare -F "check_$name" >/dev/null; then
    echo "test-image: no check $name (have: ${CHECKS[*]})" >&2
    exit 2
  fi
  log "check $name"
  start=$SECONDS
  set +e
  (
    set -e
    "check_$name"
  )
  rc=$?
  set -e
  if [[ $rc -ne 0 ]]; then
    failed+=("$name")
    summary "$name: FAILED (exit $rc)"
  fi
  echo "-- $name: $([[ $rc -eq 0 ]] && echo ok || echo FAILED) in $((SECONDS - start)) s"
done

if [[ $prune == 1 ]]; then
  log "pruning untagged images"
  bah rmi --prune >/dev/null || true
fi

log "summary ($((SECONDS - total)) s in all)"
cat "$summary_file"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all ${#CHECKS[@]} checks passed"
