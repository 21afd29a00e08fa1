#!/usr/bin/env bash
# Installs Conifer under PREFIX from the build trees target/<mpi>/release: one `conifer`
# command (bin/conifer) for every MPI, and per MPI built its preload library and static pass
# (lib/conifer/<mpi>/libconifer.so, conifer-static). `conifer exec/run` pick the library
# matching the MPI each program uses.
# Usage: scripts/install.sh PREFIX            (make install PREFIX=...)
#        scripts/install.sh PREFIX --uninstall  (make uninstall PREFIX=...)
set -euo pipefail
prefix=${1:?usage: scripts/install.sh PREFIX [--uninstall]}
cd "$(dirname "$0")/.."
if [[ "${2:-}" == "--uninstall" ]]; then
  rm -f "$prefix/bin/conifer"
  rm -rf "$prefix/lib/conifer"
  echo "conifer: removed from $prefix"
  exit 0
fi
cli=""
for mpi in openmpi mpich; do
  dir=target/$mpi/release
  [[ -f $dir/libconifer.so ]] || continue
  install -D -m 0755 "$dir/libconifer.so" "$prefix/lib/conifer/$mpi/libconifer.so"
  if [[ -f $dir/conifer-static ]]; then
    install -D -m 0755 "$dir/conifer-static" "$prefix/lib/conifer/$mpi/conifer-static"
  fi
  if [[ -z $cli && -f $dir/conifer ]]; then cli=$dir/conifer; fi
  echo "conifer: $mpi preload library installed in $prefix/lib/conifer/$mpi"
done
if [[ -z $cli ]]; then
  echo "conifer: nothing is built to install; run 'make build' (MPI=openmpi or mpich) first" >&2
  exit 1
fi
install -D -m 0755 "$cli" "$prefix/bin/conifer"
echo "conifer: $prefix/bin/conifer installed; 'conifer info' lists what it can trace"
