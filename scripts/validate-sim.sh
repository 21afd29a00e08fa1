#!/bin/sh
# Prediction against measurement: `conifer sim` with calibrated parameters on 2-rank runs
# of the test apps (and LAMMPS when installed), and SimGrid's replay of the same traces on
# a platform built from the same parameters. Prints a Markdown table.
#
#   scripts/validate-sim.sh [NET.toml]      (calibrates into $OUT/net.toml when not given)
#
# Environment: CONIFER (default target/openmpi/release/conifer), MPI (openmpi), OUT (scratch
# directory, default /tmp/conifer-validate), APPS (built test apps; built into $OUT/apps).
# Each app runs twice, traced with `--timing lossless` and with the default timing.
# measured = rank 0's end of MPI_Init to start of MPI_Finalize in the lossless run (for the
# default-timing run: its own rank 0 span from the profile, the two calls' durations
# subtracted).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONIFER=${CONIFER:-$ROOT/target/openmpi/release/conifer}
MPI=${MPI:-openmpi}
OUT=${OUT:-/tmp/conifer-validate}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ -z "${APPS:-}" ]; then
    APPS=$OUT/apps
    make -s -C "$ROOT/tests/apps" MPI="$MPI" OUT="$APPS" >&2
fi
NET=${1:-}
if [ -z "$NET" ]; then
    NET=$OUT/net.toml
    timeout 900 "$CONIFER" calibrate -n 2 --mpi "$MPI" -o "$NET" >&2
fi
L=$(sed -n 's/^L = //p' "$NET")
G=$(sed -n 's/^G = "\(.*\)ns\/B"/\1/p' "$NET")
EAGER=$(sed -n 's/^eager = //p' "$NET")

# rank 0's span, ns: lossless from the calls' start times, else from the profile.
span() {
    "$CONIFER" decode --json --rank 0 "$1" | python3 -c '
import json, sys
calls = [json.loads(l) for l in sys.stdin]
init = next(c for c in calls if c["function"] == "MPI_Init" or c["function"] == "MPI_Init_thread")
fin = next(c for c in calls if c["function"] == "MPI_Finalize")
if fin["start_ns"] is not None:
    print(fin["start_ns"] - init["start_ns"] - init["duration_ns"])
else:
    prof = json.load(open(sys.argv[1]))
    print(prof["per_rank"][0]["app_ns"] - init["mean_ns"] - fin["mean_ns"] - init["mean_interval_ns"])
' "$2"
}

predict() {
    "$CONIFER" sim --json --net "$NET" "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total_ns"])'
}

# SimGrid: one host per rank at 1 Gflop/s (the export's --flops-per-second), one link of
# latency L and bandwidth 1/G between them, no SMPI correction factors.
smpi() {
    command -v smpirun >/dev/null || { echo "-"; return; }
    dir=$OUT/sg-$2
    rm -rf "$dir"
    "$CONIFER" export simgrid "$1" -o "$dir" --flops-per-second 1e9 2>/dev/null
    bw=$(python3 -c "print(1e9 / $G)")
    cat > "$dir/platform.xml" <<EOF
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="node-0" speed="1Gf"/>
    <host id="node-1" speed="1Gf"/>
    <link id="wire" bandwidth="${bw}Bps" latency="${L}ns"/>
    <route src="node-0" dst="node-1"><link_ctn id="wire"/></route>
  </zone>
</platform>
EOF
    printf 'node-0\nnode-1\n' > "$dir/hostfile"
    timeout 600 smpirun -np 2 -platform "$dir/platform.xml" -hostfile "$dir/hostfile" \
        --cfg=network/model:CM02 --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1 \
        --cfg=smpi/send-is-detached-thresh:"$EAGER" \
        -replay "$dir/traces.txt" 2>&1 |
        sed -n 's/.*Simulation time \([0-9.e+-]*\).*/\1/p' | tail -1 |
        python3 -c 'import sys; t = sys.stdin.read().strip(); print(float(t) * 1e9 if t else "-")'
}

ms() { python3 -c "print(f'{$1 / 1e6:.1f}')"; }
err() { python3 -c "print(f'{100 * ($1 - $2) / $2:+.1f}%')"; }

echo "| run | measured (lossless run) | predicted, lossless | error | SimGrid | error | measured (default run) | predicted, default timing | error |"
echo "|---|---|---|---|---|---|---|---|---|"
run() {
    name=$1
    shift
    f=$OUT/$(echo "$name" | tr ' ' '-')
    for timing in lossless aggregate; do
        ( cd "$OUT" && timeout 600 "$CONIFER" run -n 2 --timing "$timing" -o "$f-$timing.cft" "$@" >/dev/null 2>&1 )
        "$CONIFER" profile --json "$f-$timing.cft" > "$f-$timing.json"
    done
    m1=$(span "$f-lossless.cft" "$f-lossless.json")
    p1=$(predict "$f-lossless.cft")
    sg=$(smpi "$f-lossless.cft" "$(basename "$f")")
    m2=$(span "$f-aggregate.cft" "$f-aggregate.json")
    p2=$(predict "$f-aggregate.cft")
    if [ "$sg" = "-" ]; then sgc="-"; sge="-"; else sgc="$(ms "$sg") ms"; sge=$(err "$sg" "$m1"); fi
    echo "| $name | $(ms "$m1") ms | $(ms "$p1") ms | $(err "$p1" "$m1") | $sgc | $sge | $(ms "$m2") ms | $(ms "$p2") ms | $(err "$p2" "$m2") |"
}

# Iterations chosen so that each run lasts at least 50 ms here.
run "ring 50000" "$APPS/ring" 50000
run "stencil2d 8000" "$APPS/stencil2d" 8000
run "stencil3d 2000" "$APPS/stencil3d" 2000
run "mg 2000" "$APPS/mg" 2000
# cg needs a square number of ranks (1, 4, 16, ...): not at 2.
run "waitany 20000" "$APPS/waitany" 20000
run "reduce0 20000" "$APPS/reduce0" 20000
run "butterfly 20000" "$APPS/butterfly" 20000
if command -v lmp >/dev/null && [ -f /usr/share/lammps/examples/melt/in.melt ]; then
    cp /usr/share/lammps/examples/melt/in.melt "$OUT/"
    run "LAMMPS melt" lmp -in "$OUT/in.melt"
fi
