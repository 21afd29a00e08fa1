#!/usr/bin/env bash
# Idempotent machine set-up for Conifer: installs every Debian and PyPI package the build,
# the tests and the demo need, and nothing that is already there.
# Usage: scripts/setup.sh [--real-apps]   (--real-apps adds the packaged MPI programs used by
# the real-program tests: LAMMPS, mpi4py, NetPIPE, and HPCC's sources, whose HPL the slicing
# test builds)
set -euo pipefail

apt_packages=(
  build-essential pkg-config libclang-dev
  libopenmpi-dev openmpi-bin
  libmpich-dev mpich
  gfortran
  time valgrind
  chromium fonts-dejavu-core
  libotf2-trace-dev otf2-tools python3-otf2 libsimgrid-dev
  python3-pandas python3-pytest
  clang-19 llvm-19-dev flang-19 libpolly-19-dev libomp-19-dev libzstd-dev zlib1g-dev
)
if [[ "${1:-}" == "--real-apps" ]]; then
  apt_packages+=(lammps lammps-examples python3-mpi4py netpipe-openmpi netpipe-mpich2 libblas-dev
    hpcc scalapack-mpi-test)
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

# `make wheel` builds the Python package's wheel with maturin.
if ! python3 -m maturin --version >/dev/null 2>&1; then
  echo "setup: installing maturin" >&2
  python3 -m pip install --quiet --root-user-action=ignore 'maturin>=1.5,<2'
fi

# HPCC 1.5's sources from Debian (a deb-src entry for bookworm), unpacked where the slicing test
# builds its HPL from.
hpcc_cache=/var/cache/conifer/src
if [[ "${1:-}" == "--real-apps" && ! -d $hpcc_cache/hpcc-1.5.0/hpl ]]; then
  echo "setup: fetching HPCC's sources" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  deb_src=/etc/apt/sources.list.d/conifer-sources.sources
  if [[ ! -f $deb_src ]]; then
    printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm' \
      'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
      "${sudo_cmd[@]}" tee "$deb_src" >/dev/null
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" mkdir -p "$hpcc_cache"
  # Only the original tarball: the registry here serves it but not Debian's packaging tarball,
  # so `apt-get source` itself fails. apt-helper checks the SHA256 the source index gives.
  if ! read -r uri file _ hash < <(apt-get source --print-uris -qq hpcc=1.5.0-3 | grep '\.orig\.tar'); then
    echo "setup: Debian's source index has no hpcc 1.5.0-3 (check $deb_src and the network)" >&2
    exit 1
  fi
  uri=${uri//\'/}
  "${sudo_cmd[@]}" /usr/lib/apt/apt-helper -qq download-file "$uri" "$hpcc_cache/$file" "$hash"
  "${sudo_cmd[@]}" tar -xzf "$hpcc_cache/$file" -C "$hpcc_cache"
fi
