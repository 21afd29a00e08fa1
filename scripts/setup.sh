#!/usr/bin/env bash
# Idempotent machine set-up for Conifer: installs every Debian and PyPI package the build,
# the tests and the demo need, and nothing that is already there.
# Usage: scripts/setup.sh [--real-apps]   (--real-apps adds the packaged MPI programs used by
# the real-program tests: LAMMPS, mpi4py, NetPIPE)
set -euo pipefail

apt_packages=(
  build-essential pkg-config libclang-dev
  libopenmpi-dev openmpi-bin
  libmpich-dev mpich
  gfortran
  time
  chromium fonts-dejavu-core
  libotf2-trace-dev otf2-tools python3-otf2 libsimgrid-dev
  clang-19 llvm-19-dev flang-19 libpolly-19-dev libzstd-dev zlib1g-dev
)
if [[ "${1:-}" == "--real-apps" ]]; then
  apt_packages+=(lammps lammps-examples python3-mpi4py netpipe-openmpi netpipe-mpich2)
fi

missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The generator reads the MPI Forum's machine-readable API from pympistandard.
if ! python3 -c 'import pympistandard' 2>/dev/null; then
  echo "setup: installing pympistandard" >&2
  python3 -m pip install --quiet --root-user-action=ignore 'pympistandard==0.2.0'
fi
