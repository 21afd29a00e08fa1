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


#: Procedures removed from the standard in MPI-3.0 that Open MPI 4.1 and MPICH 4.0 still export
#: (old codes call them), in MPI-2.2's definition: (name, [(param, kind, direction, length)]).
REMOVED_IN_MPI3 = [
    ("MPI_Address", [("location", "BUFFER", "in", None), ("address", "DISPLACEMENT", "out", None)]),
    ("MPI_Errhandler_create", [("function", "FUNCTION", "in", None), ("errhandler", "ERRHANDLER", "out", None)]),
    ("MPI_Errhandler_get", [("comm", "COMMUNICATOR", "in", None), ("errhandler", "ERRHANDLER", "out", None)]),
    ("MPI_Errhandler_set", [("comm", "COMMUNICATOR", "in", None), ("errhandler", "ERRHANDLER", "in", None)]),
    ("MPI_Type_extent", [("datatype", "DATATYPE", "in", None), ("extent", "DISPLACEMENT", "out", None)]),
    ("MPI_Type_lb", [("datatype", "DATATYPE", "in", None), ("displacement", "DISPLACEMENT", "out", None)]),
    ("MPI_Type_ub", [("datatype", "DATATYPE", "in", None), ("displacement", "DISPLACEMENT", "out", None)]),
    ("MPI_Type_hvector", [
        ("count", "XFER_NUM_ELEM_NNI", "in", None), ("blocklength", "XFER_NUM_ELEM_NNI", "in", None),
        ("stride", "DISPLACEMENT", "in", None), ("oldtype", "DATATYPE", "in", None),
        ("newtype", "DATATYPE", "out", None)]),
    ("MPI_Type_hindexed", [
        ("count", "ARRAY_LENGTH_NNI", "in", None), ("array_of_blocklengths", "XFER_NUM_ELEM_NNI", "in", "count"),
        ("array_of_displacements", "DISPLACEMENT", "in", "count"), ("oldtype", "DATATYPE", "in", None),
        ("newtype", "DATATYPE", "out", None)]),
    ("MPI_Type_struct", [
        ("count", "ARRAY_LENGTH_NNI", "in", None), ("array_of_blocklengths", "XFER_NUM_ELEM_NNI", "in", "count"),
        ("array_of_displacements", "DISPLACEMENT", "in", "count"), ("array_of_types", "DATATYPE", "in", "count"),
        ("newtype", "DATATYPE", "out", None)]),
]


def removed_procedures():
    """Table entries for REMOVED_IN_MPI3 (C and Fortran bindings, deprecated)."""
    out = []
    for name, params in REMOVED_IN_MPI3:
        c_params = [
            {
                "name": pname, "kind": kind, "dir": direction, "const": False,
                "length": normalize_length(length), "optional": False, "root_only": False,
                "c_base_type": std.KINDS[kind.lower()]._iso_c_small,
            }
            for pname, kind, direction, length in params
        ]
        fortran = [{"name": p[0], "string": False} for p in params] + [{"name": "ierror", "string": False}]
        out.append(dict(name=name, large_count=False, c=True, fortran=True, deprecated=True,
                        return_kind="ERROR_CODE", params=c_params, fortran_params=fortran))
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
    functions += removed_procedures()
    functions.sort(key=lambda fn: fn["name"])
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
