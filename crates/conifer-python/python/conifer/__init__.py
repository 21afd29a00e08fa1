"""Conifer MPI traces (``.cft``) as pandas tables.

>>> import conifer
>>> trace = conifer.open("run.cft")
>>> trace.meta["ranks"], len(trace.ranks)
>>> sends = trace.calls(functions=["MPI_Send", "MPI_Isend"])
>>> trace.profile().sort_values("time_ns", ascending=False).head()
>>> trace.matrix(kind="p2p", metric="bytes")
>>> trace.sites().head()              # per call site, longest time first
>>> trace.waits().groupby("pattern")["time_ns"].sum()   # needs --timing lossless/lossy
>>> trace.critical_path().head()      # time on the critical path per rank and activity

Everything is read by Conifer's own Rust reader (the ``_conifer`` extension): no second
parser of the format. ``profile``, ``ranks`` and ``matrix`` are computed on the compressed
trace exactly as ``conifer profile``/``matrix`` compute them. Times say how they were taken:
columns ``start_ns``, ``end_ns``, ``enter_ns``, ``exit_ns`` and ``span_ns`` are *as run*, on
rank 0's clock; ``duration_ns``, ``interval_ns``, ``mean_ns``, ``time_ns``, ``mpi_ns`` and
``compute_ns`` are *without the recorder* (Conifer's own time taken out).
"""

from typing import Iterable, Iterator, Optional

try:
    import numpy as np
    import pandas as pd
except ImportError as _missing:  # pragma: no cover - depends on the interpreter
    raise ImportError(
        f"conifer needs numpy and pandas, which this Python ({__import__('sys').executable}) "
        f"lacks ({_missing.name} is missing): pip install numpy pandas") from None

from . import _conifer

__all__ = ["open", "Trace"]
__version__ = _conifer.__version__

_AS_RUN = ("start_ns, end_ns, enter_ns, exit_ns: as run, ns on rank 0's clock; "
           "duration_ns, interval_ns, mean_ns: without the recorder")


class Trace:
    """An opened trace. Use :func:`conifer.open` to make one."""

    def __init__(self, native: "_conifer.NativeTrace", path: str):
        self._native = native
        self.path = path

    def __repr__(self) -> str:
        meta = self.meta
        return (f"<conifer.Trace {self.path!r}: {' '.join(meta['command_line'])!r} on "
                f"{meta['ranks']} ranks, {meta['calls']} calls, timing {meta['timing']}>")

    @property
    def meta(self) -> dict:
        """The run: command line, MPI, ranks, hosts per rank, options, timing, calls."""
        return self._native.meta()

    @property
    def nranks(self) -> int:
        """Number of ranks (the size of ``MPI_COMM_WORLD``)."""
        return self._native.ranks

    @property
    def ranks(self) -> pd.DataFrame:
        """One row per rank: host, ``span_ns`` (as run), ``mpi_ns``, ``compute_ns`` (without
        the recorder), ``recorder_ns`` (Conifer's own time), ``init_ns`` (in ``MPI_Init``),
        ``mpi_percent`` and ``mpi_percent_after_init`` (MPI_Init left out, as mpiP);
        ``exact`` (exact sums) or, when False, the ``relative_error`` the figures carry (or
        ``relative_error`` × ``error_floor_ns`` below ``error_floor_ns``): aggregate and
        histogram timing keep them within 0.1% (1 µs below 1 ms), lossless timing exactly."""
        frame = pd.DataFrame(self._native.rank_columns())
        frame.insert(1, "host", self.meta["hosts"][: len(frame)])
        frame.attrs["times"] = "span_ns: as run; mpi_ns, compute_ns: without the recorder"
        return frame.set_index("rank")

    def iter_calls(self, ranks: Optional[Iterable[int]] = None,
                   functions: Optional[Iterable[str]] = None) -> Iterator[pd.DataFrame]:
        """The calls one rank at a time (a DataFrame per rank), so memory holds one rank's
        calls, not the run's. ``ranks``: which (default all); ``functions``: only these MPI
        functions (C names, e.g. ``"MPI_Send"``)."""
        keep = list(functions) if functions is not None else None
        for rank in (range(self.nranks) if ranks is None else ranks):
            frame = _frame(self._native.call_columns(int(rank), keep))
            frame.attrs["times"] = _AS_RUN
            yield frame

    def calls(self, rank: Optional[int] = None,
              functions: Optional[Iterable[str]] = None) -> pd.DataFrame:
        """Every call as a row: ``rank``, ``thread``, ``index`` (position in its thread),
        ``function``, ``site``, ``ret``, its times, and one column per argument (integers as
        integers, MPI objects by their symbolic ids such as ``comm1``, ``req3``; ``None``
        where a call has no such argument). ``rank``: one rank (default all)."""
        ranks = None if rank is None else [rank]
        frames = [f for f in self.iter_calls(ranks, functions) if len(f)]
        if not frames:
            return pd.DataFrame(next(self.iter_calls([0 if rank is None else rank], functions)))
        frame = pd.concat(frames, ignore_index=True)
        frame.attrs["times"] = _AS_RUN
        return frame

    def profile(self) -> pd.DataFrame:
        """Per MPI function, as ``conifer profile`` lists them: ``calls``, ``bytes_sent``,
        ``bytes_received`` (what arrived), ``bytes_posted`` (the receive buffers' capacity)
        and ``time_ns`` (inside MPI, summed over ranks), ``mean_ns``, ``min_ns``, ``max_ns``,
        all without the recorder."""
        frame = pd.DataFrame(self._native.profile_columns()).set_index("function")
        frame.attrs["times"] = "time_ns: without the recorder"
        return frame

    def sites(self) -> pd.DataFrame:
        """Per call site, longest time first, as ``conifer profile`` lists them: ``site``
        (its name; the full C++ name), ``function``, ``source`` (``file:line (function)``
        where known), ``calls``, the byte columns and ``time_ns``, ``mean_ns``, ``min_ns``,
        ``max_ns`` (without the recorder). A trace that recorded no call sites has one row
        per signature group (timing family) instead."""
        frame = pd.DataFrame(self._native.site_columns())
        frame.attrs["times"] = "time_ns, mean_ns, min_ns, max_ns: without the recorder"
        return frame

    def waits(self) -> pd.DataFrame:
        """Wait states, as ``conifer waits`` computes them: one row per (``pattern``,
        ``rank``, call ``site``) with ``function``, ``source``, ``time_ns`` (waiting time)
        and ``instances`` (calls that waited), largest first. Needs per-call timing
        (``--timing lossless`` or ``lossy:REL``): other traces raise ``ValueError``."""
        frame = pd.DataFrame(self._native.wait_columns())
        frame.attrs["times"] = "time_ns: as run, on rank 0's clock, the recorder's own time included"
        return frame

    def critical_path(self, segments: bool = False) -> pd.DataFrame:
        """The critical path of the run, as ``conifer waits`` walks it: per ``rank`` and
        ``activity`` (an MPI function or ``computation``) the ``time_ns`` on the path,
        largest first; with ``segments=True`` the path itself, one row per stretch
        (``rank``, ``activity``, ``start_ns``, ``end_ns`` on the synchronised clock).
        ``attrs`` holds ``length_ns``, ``end_rank``, ``ends_at_finalize``, ``jumps``. Needs
        per-call timing, as :meth:`waits`."""
        path = self._native.critical_path()
        if path is None:
            return pd.DataFrame({"rank": [], "activity": [], "time_ns": []})
        frame = pd.DataFrame(path["segments" if segments else "shares"])
        for key in ("length_ns", "end_rank", "ends_at_finalize", "jumps", "segments_truncated"):
            frame.attrs[key] = path[key]
        frame.attrs["times"] = "as run, on the synchronised clock"
        return frame

    def matrix(self, kind: str = "p2p", metric: str = "bytes") -> pd.DataFrame:
        """The rank x rank communication matrix: rows senders, columns receivers (world
        ranks). ``kind``: ``p2p``, ``coll`` or ``all``; ``metric``: ``bytes`` or
        ``messages`` (as ``conifer matrix --kind --metric``)."""
        rows = self._native.matrix_rows(kind, metric)
        frame = pd.DataFrame(rows)
        frame.index.name = "sender"
        frame.columns.name = "receiver"
        return frame


def _column(spec):
    """A column as the extension sends it: ``("int"|"float", values, mask)`` (little-endian
    buffers; mask: 1 where the cell is missing, or None) or ``("cat", codes, names)``."""
    kind, data, extra = spec
    if kind == "cat":
        codes = np.frombuffer(data, dtype="<i4")
        return pd.Categorical.from_codes(codes, categories=pd.Index(extra, dtype=object))
    values = np.frombuffer(data, dtype="<i8" if kind == "int" else "<f8")
    if extra is None:
        return values
    mask = np.frombuffer(extra, dtype=bool)
    if kind == "int":
        return pd.arrays.IntegerArray(values.copy(), mask.copy())
    return np.where(mask, np.nan, values)


def _frame(columns: dict) -> pd.DataFrame:
    return pd.DataFrame({name: _column(spec) for name, spec in columns.items()})


def open(path) -> Trace:  # noqa: A001 - the package's verb, like io.open
    """Opens the Conifer trace at ``path``; raises ``ValueError`` (one line: which file, what
    is wrong) for a file that is not a readable trace."""
    return Trace(_conifer.open(str(path)), str(path))
