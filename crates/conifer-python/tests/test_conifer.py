"""The `conifer` Python package on real traced runs, checked against the `conifer` command
(stats, matrix, decode) and against what the test apps are written to do.

Needs CONIFER (the built `conifer` binary) and Open MPI; run by `make test-python`."""

import json
import os
import re
import shutil
import subprocess
import tempfile

import pandas as pd
import pytest

import conifer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CLI = os.environ.get("CONIFER", os.path.join(ROOT, "target", "openmpi", "release", "conifer"))
RANKS = 4
RING_ROUNDS = 20  # ring.c's default: each rank Sendrecvs to rank+1 this many times


def run(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, timeout=300, **kw)


@pytest.fixture(scope="module")
def traces():
    """Traces of two test apps at 4 ranks: mg (lossless timing), ring (aggregate)."""
    tmp = tempfile.mkdtemp(prefix="conifer-py-")
    run("make", "-s", "-C", os.path.join(ROOT, "tests", "apps"), "MPI=openmpi", f"OUT={tmp}",
        "mg", "ring")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = {}
    for app, timing in (("mg", "lossless"), ("ring", "aggregate")):
        path = os.path.join(tmp, f"{app}.cft")
        run(CLI, "run", "-n", str(RANKS), "--launcher-arg=--oversubscribe", "--timing", timing,
            "-o", path, os.path.join(tmp, app), env=env)
        out[app] = path
    yield out
    shutil.rmtree(tmp, ignore_errors=True)


def cli_json(*args):
    return json.loads(run(CLI, *args).stdout)


def test_rows_are_the_calls_conifer_stats_counts(traces):
    stats = cli_json("stats", "--json", traces["mg"])
    trace = conifer.open(traces["mg"])
    calls = trace.calls()
    assert len(calls) == stats["calls"]
    by_function = calls.groupby("function").size().to_dict()
    assert by_function == stats["functions"]
    assert trace.meta["calls"] == stats["calls"]
    streamed = sum(len(frame) for frame in trace.iter_calls())
    assert streamed == stats["calls"]


def test_one_ranks_rows_are_what_decode_prints(traces):
    trace = conifer.open(traces["mg"])
    decoded = [json.loads(line) for line in
               run(CLI, "decode", "--json", "--rank", "2", traces["mg"]).stdout.splitlines()]
    calls = trace.calls(rank=2)
    assert list(calls["function"]) == [d["function"] for d in decoded]
    assert list(calls["index"]) == [d["index"] for d in decoded]
    sends = calls[calls["function"] == "MPI_Send"]
    expected = [(int(d["args"]["dest"]), int(d["args"]["count"])) for d in decoded
                if d["function"] == "MPI_Send"]
    assert list(zip(sends["dest"], sends["count"])) == expected
    # As run: a call's MPI part lies inside its wrapper, calls of a thread do not overlap.
    assert (calls["enter_ns"] <= calls["start_ns"]).all()
    assert (calls["start_ns"] <= calls["end_ns"]).all()
    assert (calls["end_ns"] <= calls["exit_ns"]).all()
    assert (calls["exit_ns"].iloc[:-1].to_numpy() <= calls["enter_ns"].iloc[1:].to_numpy()).all()


def test_matrix_is_conifer_matrix(traces):
    trace = conifer.open(traces["mg"])
    for kind, metric in (("p2p", "bytes"), ("all", "messages"), ("coll", "bytes")):
        cli = cli_json("matrix", "--json", "--kind", kind, "--metric", metric, traces["mg"])
        assert trace.matrix(kind=kind, metric=metric).values.tolist() == cli["rows"]


def test_ring_is_what_ring_c_does(traces):
    """ring.c: every rank calls MPI_Sendrecv RING_ROUNDS times, one long long to
    (rank + 1) % size and from (rank - 1) % size, tag 7. Derived from the program, not from
    Conifer."""
    trace = conifer.open(traces["ring"])
    assert trace.nranks == RANKS and len(trace.ranks) == RANKS
    calls = trace.calls(functions=["MPI_Sendrecv"])
    assert set(calls["function"]) == {"MPI_Sendrecv"}
    for rank in range(RANKS):
        mine = calls[calls["rank"] == rank]
        assert len(mine) == RING_ROUNDS
        assert set(mine["dest"]) == {(rank + 1) % RANKS}
        assert set(mine["source"]) == {(rank - 1) % RANKS}
        assert set(mine["sendtag"]) == {7} and set(mine["sendcount"]) == {1}
    messages = trace.matrix(kind="p2p", metric="messages")
    for i in range(RANKS):
        for j in range(RANKS):
            assert messages.loc[i, j] == (RING_ROUNDS if j == (i + 1) % RANKS else 0)
    assert "mean_ns" in calls.columns and "duration_ns" not in calls.columns


def test_profile_counts_and_times(traces):
    trace = conifer.open(traces["mg"])
    stats = cli_json("stats", "--json", traces["mg"])
    profile = trace.profile()
    assert profile["calls"].to_dict() == stats["functions"]
    calls = trace.calls()
    # Lossless timing: per-function MPI time is the sum of the calls' durations (ns rounding).
    durations = calls.groupby("function")["duration_ns"].sum()
    for function, row in profile.iterrows():
        assert abs(row["time_ns"] - durations[function]) <= len(calls), function


def test_sites_add_up_to_the_calls_and_their_durations(traces):
    trace = conifer.open(traces["mg"])
    stats = cli_json("stats", "--json", traces["mg"])
    sites = trace.sites()
    assert sites["calls"].sum() == stats["calls"]
    # Lossless timing: a function's sites hold its calls' durations, summed and at their least.
    calls = trace.calls()
    by_function = sites.groupby("function")
    durations = calls.groupby("function")["duration_ns"]
    for function, total in by_function["time_ns"].sum().items():
        assert abs(total - durations.sum()[function]) <= len(calls), function
        assert by_function["min_ns"].min()[function] == durations.min()[function], function
    profile = cli_json("profile", "--json", traces["mg"])
    assert list(sites["site"]) == [s["label"] for s in profile["call_sites"]]


def test_waits_and_critical_path_are_what_conifer_waits_computes(traces):
    trace = conifer.open(traces["mg"])
    waits = cli_json("waits", "--json", traces["mg"])
    frame = trace.waits()
    assert len(frame) == len(waits["waits"])
    totals = frame.groupby("pattern")["time_ns"].sum().to_dict()
    assert totals == {p: t for p, t in waits["totals"].items() if t}
    path = trace.critical_path()
    cli_path = waits["critical_path"]
    assert path["time_ns"].sum() == cli_path["length_ns"] == path.attrs["length_ns"]
    assert sorted(zip(path["rank"], path["activity"], path["time_ns"])) == sorted(
        (s["rank"], s["activity"], s["time_ns"]) for s in cli_path["shares"])
    segments = trace.critical_path(segments=True)
    assert (segments["end_ns"] - segments["start_ns"]).sum() == cli_path["length_ns"]
    # Aggregate timing keeps no per-call times: one clear error.
    with pytest.raises(ValueError, match="per-call"):
        conifer.open(traces["ring"]).waits()


def test_bad_input_is_one_clear_error(tmp_path):
    bogus = tmp_path / "not-a-trace.cft"
    bogus.write_bytes(b"hello")
    with pytest.raises(ValueError, match="not-a-trace.cft"):
        conifer.open(bogus)
    with pytest.raises(ValueError, match="cannot read"):
        conifer.open(tmp_path / "missing.cft")


def test_unknown_rank_and_kind_are_refused(traces):
    trace = conifer.open(traces["ring"])
    with pytest.raises(ValueError, match="does not exist"):
        trace.calls(rank=RANKS)
    with pytest.raises(ValueError, match="unknown kind"):
        trace.matrix(kind="bogus")


def test_the_readme_example_runs(traces, tmp_path, capsys):
    """The README's Python example, run as written on a trace named run.cft (ring.c's)."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    start = readme.index("```python\n") + len("```python\n")
    example = readme[start:readme.index("```", start)]
    shutil.copy(traces["ring"], tmp_path / "run.cft")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(example, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    printed = capsys.readouterr().out
    # ring.c's Sendrecvs: RING_ROUNDS per (rank, rank + 1) pair.
    for rank in range(RANKS):
        row = rf"^\s*{rank}\s+{(rank + 1) % RANKS}\s+{RING_ROUNDS}\s*$"
        assert re.search(row, printed, re.MULTILINE), printed
