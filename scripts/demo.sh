#!/usr/bin/env bash
# `make demo`: trace the bundled 2D stencil (C) and ring (Fortran) on several ranks and show
# what the traces say. Usage: scripts/demo.sh MPI RANKS
set -euo pipefail
mpi=${1:-openmpi}
ranks=${2:-4}
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/target/$mpi/release"
apps="$root/target/$mpi/apps"
out="$root/target/$mpi/demo"
mkdir -p "$out"
make --no-print-directory -s -C "$root/tests/apps" MPI="$mpi" OUT="$apps"

iterations=100
[[ $mpi == mpich ]] && iterations=20   # MPICH busy-polls: keep oversubscribed runs short

echo "== conifer run -n $ranks $apps/stencil2d $iterations   ($mpi)"
timeout 300 "$bin/conifer" run -n "$ranks" -o "$out/stencil2d.cft" "$apps/stencil2d" "$iterations" | grep '^RESULT rank=0'
echo
"$bin/conifer" stats "$out/stencil2d.cft"
echo
echo "== conifer decode --rank 1 (first iteration: halo exchange with MPI_PROC_NULL edges)"
"$bin/conifer" decode "$out/stencil2d.cft" --rank 1 | head -n 14
echo
echo "== conifer run -n $ranks $apps/ring_f $iterations   (Fortran, $mpi)"
timeout 300 "$bin/conifer" run -n "$ranks" -o "$out/ring_f.cft" "$apps/ring_f" "$iterations" | grep '^RESULT rank=0'
echo
"$bin/conifer" stats "$out/ring_f.cft"
