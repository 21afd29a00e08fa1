#!/usr/bin/env python3
"""Finds import circles between the files (modules) of each crate.

For every crate under crates/*/ (the trees rooted at src/lib.rs, src/main.rs, src/bin/*.rs and
build/main.rs), builds the graph of its files where an edge A -> B means file A names an item of
file B: a path starting with `crate::`, `super::` or `self::`, or a plain path whose first
segment is a child module of A's module (`comms::Comms` in record/mod.rs), in `use` lines
(groups included) and in code alike. Comments and string literals are ignored; `mod x;` alone
is not an edge. A path resolves to the deepest module file its leading segments name (an item
defined in record/mod.rs, named `crate::record::Call`, is an edge to record/mod.rs).

Every strongly connected component of more than one file is a circle: reported with its edges.
Exits 1 when a circle is not in the allow list (`--allow FILE`: one circle a line, its files,
relative to the repository, sorted and space-separated; `#` starts a comment).
Usage: import-cycles.py [--crate NAME] [--allow FILE] [--root DIR]
"""

import argparse
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KEYWORDS = {"crate", "super", "self"}


def strip(text):
    """The text with comments, string and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c in "rb" and re.match(r"(br|r|b)?#*\"", text[i:i + 4]) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            m = re.match(r"(br|r|b)?(#*)\"", text[i:])
            raw = "r" in (m.group(1) or "")
            hashes = m.group(2)
            j = i + m.end()
            if raw:
                end = text.find('"' + hashes, j)
                j = n if end < 0 else end + 1 + len(hashes)
            else:
                j = _string_end(text, j)
            out.append(" " + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = _string_end(text, i + 1)
            out.append(" " + "\n" * text.count("\n", i, j))
            i = j
        elif c == "'":
            if text.startswith("\\", i + 1):
                j = text.find("'", i + 3)
                i = n if j < 0 else j + 1
                out.append(" ")
            elif i + 2 < n and text[i + 2] == "'":
                i += 3
                out.append(" ")
            else:
                out.append(" ")
                i += 1
        else:
            m = IDENT.match(text, i)
            if m:
                out.append(m.group(0))
                i = m.end()
            else:
                out.append(c)
                i += 1
    return "".join(out)


def _string_end(text, j):
    n = len(text)
    while j < n:
        if text[j] == "\\":
            j += 2
        elif text[j] == '"':
            return j + 1
        else:
            j += 1
    return n


TOKEN = re.compile(r"::|[A-Za-z_][A-Za-z0-9_]*|\S")


QUOTING = {"quote", "quote_spanned"}


def tokens(code):
    """(token, offset) pairs of stripped code, less the bodies of `quote!` invocations (code a
    build script generates names the items of the crate it is generated for, not its own)."""
    toks = [(m.group(0), m.start()) for m in TOKEN.finditer(code)]
    out, k = [], 0
    while k < len(toks):
        if (toks[k][0] in QUOTING and k + 2 < len(toks) and toks[k + 1][0] == "!"
                and toks[k + 2][0] in "{(["):
            opening = toks[k + 2][0]
            closing = {"{": "}", "(": ")", "[": "]"}[opening]
            depth, k = 0, k + 2
            while k < len(toks):
                if toks[k][0] == opening:
                    depth += 1
                elif toks[k][0] == closing:
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
            k += 1
        else:
            out.append(toks[k])
            k += 1
    return out


def inline_mods(toks):
    """(start, end, name) offset spans of inline `mod name { ... }` blocks."""
    spans = []
    for k in range(len(toks) - 2):
        if toks[k][0] == "mod" and IDENT.fullmatch(toks[k + 1][0]) and toks[k + 2][0] == "{":
            depth, j = 0, k + 2
            while j < len(toks):
                if toks[j][0] == "{":
                    depth += 1
                elif toks[j][0] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            end = toks[j][1] if j < len(toks) else 1 << 60
            spans.append((toks[k + 2][1], end, toks[k + 1][0]))
    return spans


def inner_path(spans, offset):
    """The inline module names enclosing `offset`, outermost first."""
    return [name for (s, e, name) in sorted(spans) if s <= offset < e]


def declared_mods(toks):
    """(name, offset) of every `mod name;` declaration."""
    return [
        (toks[k + 1][0], toks[k][1])
        for k in range(len(toks) - 2)
        if toks[k][0] == "mod" and IDENT.fullmatch(toks[k + 1][0]) and toks[k + 2][0] == ";"
    ]


def paths(toks):
    """(segments, offset) of every path in the tokens, `use` groups expanded."""
    found = []
    k, n = 0, len(toks)
    while k < n:
        t, off = toks[k]
        if IDENT.fullmatch(t) and not (k > 0 and toks[k - 1][0] in ("::", ".")):
            k = _path(toks, k, [], off, found)
        else:
            k += 1
    return found


def _path(toks, k, prefix, off, found):
    """Parses a path (or use tree) from token k; returns the index after it."""
    segs = list(prefix)
    n = len(toks)
    while k < n and IDENT.fullmatch(toks[k][0]):
        segs.append(toks[k][0])
        if k + 1 < n and toks[k + 1][0] == "::":
            k += 2
            if k < n and toks[k][0] == "{":
                k += 1
                while k < n and toks[k][0] != "}":
                    if IDENT.fullmatch(toks[k][0]):
                        k = _path(toks, k, segs, off, found)
                    else:
                        k += 1
                return k + 1
            if k < n and toks[k][0] == "*":
                found.append((segs + ["*"], off))
                return k + 1
        else:
            k += 1
            break
    if len(segs) > len(prefix):
        found.append((segs, off))
    return k


class Tree:
    """The module tree of one crate root: module path (tuple) -> file."""

    def __init__(self, root_file):
        self.files = {}  # module path -> file
        self.module_of = {}  # file -> module path
        self._add((), root_file, is_dir_owner=True)

    def _add(self, mod_path, file, is_dir_owner):
        if file in self.module_of:
            return
        self.files[mod_path] = file
        self.module_of[file] = mod_path
        with open(file, encoding="utf-8") as f:
            toks = tokens(strip(f.read()))
        spans = inline_mods(toks)
        base = os.path.dirname(file)
        if not is_dir_owner:
            base = os.path.join(base, os.path.splitext(os.path.basename(file))[0])
        for name, off in declared_mods(toks):
            inner = inner_path(spans, off)
            d = os.path.join(base, *inner)
            for cand, owner in ((os.path.join(d, name + ".rs"), False),
                                (os.path.join(d, name, "mod.rs"), True)):
                if os.path.isfile(cand):
                    self._add(mod_path + tuple(inner) + (name,), cand, owner)
                    break

    def resolve(self, mod_path):
        """The file owning module path `mod_path` (deepest file prefix)."""
        for cut in range(len(mod_path), -1, -1):
            f = self.files.get(tuple(mod_path[:cut]))
            if f is not None:
                return f
        return None

    def edges(self):
        """{file: {target file: [example path, ...]}}."""
        out = {}
        for file, mod_path in self.module_of.items():
            with open(file, encoding="utf-8") as f:
                toks = tokens(strip(f.read()))
            spans = inline_mods(toks)
            targets = out.setdefault(file, {})
            for segs, off in paths(toks):
                here = list(mod_path) + inner_path(spans, off)
                target = self._target(here, segs)
                if target is not None and target != file:
                    targets.setdefault(target, []).append("::".join(segs))
        return out

    def _target(self, here, segs):
        first = segs[0]
        if first == "crate" and len(segs) > 1:
            cur, rest = [], segs[1:]
        elif len(segs) == 1:
            return None  # `pub(crate)`, `pub(super)`, a bare `self`
        elif first in ("super", "self"):
            cur, rest = list(here), list(segs)
            while rest and rest[0] in ("super", "self"):
                if rest[0] == "super":
                    if not cur:
                        return None
                    cur.pop()
                rest = rest[1:]
        elif tuple(here) + (first,) in self.files and len(segs) > 1:
            cur, rest = list(here), list(segs)
        else:
            return None
        full = cur + rest
        # Walk down while the segments name module files.
        best = None
        for cut in range(len(cur), len(full) + 1):
            f = self.files.get(tuple(full[:cut]))
            if f is not None:
                best = f
        if best is None:
            best = self.resolve(cur)
        return best


def sccs(graph):
    """Tarjan's strongly connected components of {node: iterable of nodes}."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]
    nodes = sorted(set(graph) | {t for ts in graph.values() for t in ts})

    def visit(v):
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                comps.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return comps


def crate_roots(crate_dir):
    roots = [os.path.join(crate_dir, "src", n) for n in ("lib.rs", "main.rs")]
    bin_dir = os.path.join(crate_dir, "src", "bin")
    if os.path.isdir(bin_dir):
        for n in sorted(os.listdir(bin_dir)):
            p = os.path.join(bin_dir, n)
            roots.append(p if n.endswith(".rs") else os.path.join(p, "main.rs"))
    roots.append(os.path.join(crate_dir, "build", "main.rs"))
    return [r for r in roots if os.path.isfile(r)]


def check(root, crate=None, allowed=frozenset(), out=sys.stdout):
    """Prints every circle (with its edges unless allowed) and the allowed circles not found;
    returns the number of circles not in `allowed`."""
    failing = 0
    seen = set()
    crates_dir = os.path.join(root, "crates")
    for name in sorted(os.listdir(crates_dir)):
        if crate and name != crate:
            continue
        for root_file in crate_roots(os.path.join(crates_dir, name)):
            graph = Tree(root_file).edges()
            for comp in sccs({f: set(ts) for f, ts in graph.items()}):
                if len(comp) < 2:
                    continue
                rel = sorted(os.path.relpath(f, root) for f in comp)
                key = " ".join(rel)
                known = key in allowed
                failing += not known
                seen.add(key)
                if known:
                    print(f"{name}: known circle (allowed) of {len(comp)} files", file=out)
                    continue
                print(f"{name}: circle of {len(comp)} files:", file=out)
                members = set(comp)
                for f in comp:
                    for t, examples in sorted(graph.get(f, {}).items()):
                        if t in members:
                            ex = ", ".join(sorted(set(examples))[:3])
                            print(f"  {os.path.relpath(f, root)} -> "
                                  f"{os.path.relpath(t, root)}  ({ex})", file=out)
    for key in sorted(allowed - seen):
        if crate is None or f"crates/{crate}/" in key:
            print(f"note: allowed circle no longer found (drop it from the list): {key}", file=out)
    return failing


def read_allow(path):
    allowed = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                allowed.add(" ".join(sorted(line.split())))
    return allowed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--crate", help="check only this crate (its directory name)")
    ap.add_argument("--allow", help="file of known circles that do not fail the check")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                    help="the repository (default: the one holding this script)")
    args = ap.parse_args(argv)
    root = os.path.normpath(args.root)
    allowed = read_allow(args.allow) if args.allow else frozenset()
    failing = check(root, args.crate, allowed)
    if failing:
        print(f"{failing} import circle(s) not in the allow list", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
