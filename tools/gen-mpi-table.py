#!/usr/bin/env python3
"""Derive Conifer's normalized MPI function table from the MPI Forum's machine-readable API.

Reads `apis.json` shipped by the PyPI package `pympistandard` (MPI 5.0 content) and writes
`crates/conifer-spec/mpi-functions.json`: one entry per C-callable or Fortran-callable
procedure, with each parameter's semantic kind, direction, constness, array-length expression
and whether it appears in the C and mpif.h Fortran bindings. Large-count (`_c`) variants are
emitted as entries of their own. No prose (descriptions) is kept.

The output is committed; `make spec-check` regenerates it and fails if it differs, so the
committed table always equals what this script derives from the pinned pympistandard.
"""
import json
import sys

import pympistandard as std

std.use_api_version(1)

#: Kinds whose Fortran (mpif.h) argument is a CHARACTER and so carries a hidden length argument.
FORTRAN_STRING_PREFIX = "CHARACTER"


def is_poly(kind_name):
    """True when the kind has a distinct large-count C type (the source of `_c` variants)."""
    kind = std.KINDS[kind_name.lower()]
    return isinstance(kind, std.PolyKind) and kind._iso_c_large != kind._iso_c_small


def normalize_length(length):
    """Array extents as a list of expressions (a 2-D array such as `ranges[n][3]` has two)."""
    if length is None:
        return None
    return length if isinstance(length, list) else [length]


def c_param(p, large):
    """One C parameter of the normalized table."""
    kind = p["kind"]
    if large and kind.startswith("POLY"):
        c_type = std.KINDS[kind.lower()]._iso_c_large
    else:
        c_type = std.KINDS[kind.lower()]._iso_c_small
    return {
        "name": p["name"],
        "kind": kind,
        "dir": p["param_direction"],
        "const": p["constant"] in (True, "true"),  # two entries spell it as a string
        "length": normalize_length(p["length"]),
        "optional": p["optional"],
        "root_only": p["root_only"],
        "c_base_type": c_type,
    }


def fortran_params(params):
    """The mpif.h Fortran parameter list: name and whether it is a CHARACTER argument."""
    out = []
    for p in params:
        if "f90_parameter" in p["suppress"] or p["kind"] == "VARARGS":
            continue
        f90 = std.KINDS[p["kind"].lower()]._f90_small or ""
        out.append({"name": p["name"], "string": f90.startswith(FORTRAN_STRING_PREFIX)})
    return out


def main(apis_path, out_path):
    with open(apis_path) as f:
        apis = json.load(f)
    functions = []
    for key in sorted(apis):
        proc = apis[key]
        attrs = proc["attributes"]
        if attrs["callback"] or attrs["predefined_function"]:
            continue  # user-supplied callbacks and predefined callbacks are not library entry points
        name = proc["name"]
        params = proc["parameters"]
        c_params = [p for p in params if "c_parameter" not in p["suppress"]]
        base = {
            "c": attrs["c_expressible"],
            "fortran": attrs["f90_expressible"] and not attrs["not_with_mpif"],
            "deprecated": attrs["deprecated"],
            "return_kind": proc["return_kind"],
        }
        small = [p for p in c_params if not p["large_only"]]
        functions.append(
            dict(
                name=name,
                large_count=False,
                **base,
                params=[c_param(p, False) for p in small],
                fortran_params=fortran_params([p for p in params if not p["large_only"]]),
            )
        )
        if attrs["c_expressible"] and any(is_poly(p["kind"]) for p in c_params):
            functions.append(
                dict(
                    name=name + "_c",
                    large_count=True,
                    **dict(base, fortran=False),
                    params=[c_param(p, True) for p in c_params],
                    fortran_params=[],
                )
            )
    with open(out_path, "w") as f:
        # One function per line: small diffs when the standard changes, easy to grep.
        f.write('{"source": %s,\n "functions": [\n' % json.dumps("pympistandard " + std_version()))
        f.write(",\n".join(json.dumps(fn, separators=(",", ":")) for fn in functions))
        f.write("\n]}\n")
    print(f"gen-mpi-table: {len(functions)} functions written to {out_path}", file=sys.stderr)


def std_version():
    from importlib.metadata import version

    return version("pympistandard")


if __name__ == "__main__":
    apis = std.__file__.replace("__init__.py", "data/apis.json")
    main(apis, sys.argv[1])
