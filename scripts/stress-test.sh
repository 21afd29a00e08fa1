#!/usr/bin/env bash
# Runs Conifer's tests on a busy machine: CPU hogs keep the load at twice the number of cores
# while the tests run, and the elapsed time and load averages are reported at the end. The
# hogs are killed on every exit (normal, error, Ctrl-C, TERM).
#
# Usage:
#   scripts/stress-test.sh                     # `make test` under load
#   scripts/stress-test.sh ARGS...             # `cargo nextest run --release ARGS...` under
#                                              # load, once per MPI in STRESS_MPIS
#   make stress-test [TESTS="ARGS..."]         # the same through make
# e.g. scripts/stress-test.sh -p conifer-cli --test waits --test calibrate
#
# Environment:
#   STRESS_HOGS     hogs to start (default: 2 x the cores `nproc` reports)
#   STRESS_MPIS     MPIs a subset runs under (default: "openmpi mpich"; `make test` does both)
#   STRESS_TIMEOUT  give up after this long (a `timeout` duration, e.g. 30m; default: none)
#   STRESS_WARMUP   seconds the hogs run before the tests start, so that the load average has
#                   risen when they do (default: 0)
#   STRESS_TESTS    the subset's arguments, when none are given on the command line
set -euo pipefail
cd "$(dirname "$0")/.."

hogs=${STRESS_HOGS:-$(($(nproc) * 2))}
mpis=${STRESS_MPIS:-openmpi mpich}
limit=${STRESS_TIMEOUT:-0}
warmup=${STRESS_WARMUP:-0}
if (($# == 0)) && [[ -n ${STRESS_TESTS:-} ]]; then
  read -r -a args <<<"$STRESS_TESTS"
  set -- "${args[@]}"
fi

hog_pids=()
sampler_pid=
samples=$(mktemp)

# Kills what this script started, by process id.
cleanup() {
  local pid
  for pid in "${hog_pids[@]}" $sampler_pid; do
    kill "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rm -f "$samples"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

echo "stress-test: $hogs CPU hogs on $(nproc) cores; load before: $(loadavg)"
for ((i = 0; i < hogs; i++)); do
  sh -c 'while :; do :; done' &
  hog_pids+=($!)
done
if ((warmup > 0)); then
  sleep "$warmup"
  echo "stress-test: load after ${warmup} s of hogs: $(loadavg)"
fi
# The 1-minute load average every 10 s while the tests run.
(while :; do
  sleep 10
  cut -d' ' -f1 /proc/loadavg >>"$samples"
done) &
sampler_pid=$!

with_limit=()
[[ $limit != 0 ]] && with_limit=(timeout --foreground "$limit")

start=$(date +%s)
status=0
if (($# == 0)); then
  echo "stress-test: make test"
  "${with_limit[@]}" make test || status=$?
else
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  for mpi in $mpis; do
    echo "stress-test: $mpi: cargo nextest run --release $*"
    CONIFER_MPI=$mpi CARGO_TARGET_DIR=target/$mpi \
      "${with_limit[@]}" cargo nextest run --release --no-fail-fast "$@" || status=$?
    ((status == 0)) || break
  done
fi
elapsed=$(($(date +%s) - start))

summary=$(sort -n "$samples" | awk '{ v[NR] = $1; s += $1 }
  END { if (NR) printf "%d samples, min %.2f, mean %.2f, max %.2f", NR, v[1], s / NR, v[NR];
        else printf "no samples (under 10 s)" }')
echo "stress-test: elapsed $((elapsed / 60))m$((elapsed % 60))s, exit status $status"
echo "stress-test: 1-minute load average during the run: $summary; at the end: $(loadavg)"
exit "$status"
