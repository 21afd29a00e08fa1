#!/usr/bin/env python3
"""Checks the crate graph is the architecture (docs/architecture.md): the format depends on
neither side, the write side (conifer-write) and the read side (conifer-trace) never on each
other, the readers (analyze, sim, export, proxy) on the read side only, and the CLI names the
write side in `conifer merge` (src/merge.rs) alone. Dev-dependencies (tests that build traces)
are not checked."""

import argparse
import json
import os
import re
import subprocess
import sys

# crate -> the workspace crates it must not depend on (normal or build dependencies).
FORBIDDEN = {
    "conifer-format": {"conifer-write", "conifer-trace", "conifer-preload"},
    "conifer-write": {"conifer-trace", "conifer-preload"},
    "conifer-trace": {"conifer-write", "conifer-preload"},
    "conifer-analyze": {"conifer-write", "conifer-preload"},
    "conifer-sim": {"conifer-write", "conifer-preload"},
    "conifer-export": {"conifer-write", "conifer-preload"},
    "conifer-proxy": {"conifer-write", "conifer-preload"},
    "conifer-python": {"conifer-write", "conifer-preload"},
    "conifer-preload": {"conifer-trace"},
    # Reads traces and writes one (as the tracer merges), never links MPI.
    "conifer-extrapolate": {"conifer-preload"},
}
# Files of the CLI allowed to name the write side.
CLI_WRITERS = {"merge.rs"}


def dependency_violations(deps):
    """`deps`: crate -> set of crates it depends on (not dev). Returns one line per edge the
    layers forbid."""
    return [f"{krate} depends on {dep}, which its layer must not use"
            for krate, forbidden in sorted(FORBIDDEN.items())
            for dep in sorted(deps.get(krate, set()) & forbidden)]


def cli_violations(sources):
    """`sources`: path -> text of the CLI's files. Returns the files outside CLI_WRITERS that
    name the write side."""
    return [f"{path} uses conifer_write; only {', '.join(sorted(CLI_WRITERS))} may (the CLI reads)"
            for path, text in sorted(sources.items())
            if os.path.basename(path) not in CLI_WRITERS and re.search(r"\bconifer_write\b", text)]


def workspace_dependencies(root):
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
        cwd=root, check=True, capture_output=True, text=True).stdout)
    return {p["name"]: {d["name"] for d in p["dependencies"] if d.get("kind") != "dev"}
            for p in meta["packages"]}


def cli_sources(root):
    base = os.path.join(root, "crates", "conifer-cli", "src")
    out = {}
    for dirpath, _, files in os.walk(base):
        for f in files:
            if f.endswith(".rs"):
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    out[os.path.relpath(path, root)] = fh.read()
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    args = parser.parse_args()
    problems = (dependency_violations(workspace_dependencies(args.root))
                + cli_violations(cli_sources(args.root)))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layering violation(s); see docs/architecture.md")
        return 1
    print("crate layers: format <- write | read <- readers, as docs/architecture.md draws them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
