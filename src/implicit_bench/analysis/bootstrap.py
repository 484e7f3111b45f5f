"""Vectorised cluster bootstrap over units: resample units, keep all their images.

Every statistic is written as a function of per-unit sums (numerators, denominators, moments),
so one resample is a vector of unit multiplicities ``w`` (how often each unit was drawn) and a
replicate of ``sum_u x_u`` is ``w @ x``. All resamples of one unit set come from one matrix
``W`` (``n_boot x n_units``), so statistics of the same units (e.g. two success rates and
their gap) share their resamples. The draws of a unit set come from
``numpy.random.default_rng(derive_seed(seed, stream))``, where ``stream`` names the unit set;
an interval is an ``Estimate`` (``n`` = units resampled) and the file's ``bootstrap`` block
records ``n_boot``, ``seed`` and ``level``, so with the stream it can be redrawn.
Intervals are percentile intervals (numpy's linear interpolation) over the replicates where the
statistic is defined (a resample with no images is left out), or, for an estimand that
``method`` maps to ``"bca"`` and whose caller hands ``interval`` the leave-one-unit-out
(jackknife) values, bias-corrected and accelerated (BCa, Efron 1987) intervals: the same
replicates, read at percentiles moved by the bias correction z0 (share of replicates below the
estimate) and the acceleration a (skewness of the jackknife values); ``"studentized"``
(bootstrap-t, ``of_sums``) divides each replicate's deviation by its own jackknife SE. The
coverage benchmark chooses the method per estimand (benchmarks/README.md, docs/correction.md).

Speed (docs/analysis.md, "Speed"): the multiplicities are counted in blocks of resamples that
fit in the CPU cache, and ``sums`` turns all per-unit columns of one unit set into replicates
with one matrix product when the columns hold integers (counts, 0-5 scores): such sums are
exact in float64 whatever the order of summation, so the replicates are bit-for-bit those of
one matrix-vector product per column, which ``sums`` still uses for other columns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from implicit_bench._util.closed_form import safe_div
from implicit_bench._util.hashing import derive_seed
from implicit_bench._util.numbers import finite
from implicit_bench.protocol.estimate import estimate_json

CACHE_STREAMS = 4
CACHE_BYTES = 384 * 2**20  # resample matrices kept at most (older unit sets are drawn again)
BLOCK_ELEMENTS = 1 << 17  # resample indices counted per ``bincount`` call (about 1 MB of counts)
PIPELINE_ELEMENTS = 1 << 22  # a draw this large is drawn a block ahead on a second thread
EXACT32 = 2**24  # integers below this are exact in float32
EXACT64 = 2**53  # ... in float64


@dataclass
class Bootstrap:
    n: int = 1000
    seed: int = 42
    level: float = 0.95
    method: dict[str, str] = field(
        default_factory=dict
    )  # estimand -> "percentile" | "bca" | "studentized" | "basic"
    _cache: dict[tuple[str, int], dict[str, np.ndarray]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_params(cls, params: Any) -> Bootstrap:
        """The bootstrap of a ``bootstrap`` params block (``params.BootstrapParams``: n, seed,
        level, method): the one way every stage builds it."""
        return cls(
            n=params.n,
            seed=params.seed,
            level=params.level,
            method=dict(getattr(params, "method", None) or {}),
        )

    def stream_seed(self, stream: str) -> int:
        return derive_seed(self.seed, stream)

    def _draw(self, n_units: int, stream: str) -> dict[str, np.ndarray]:
        """The cache entry of one unit set, filled on first use: ``idx`` (the resampled unit
        positions, drawn whole only when a caller asks for them) and the multiplicities as
        float32 (``w32``, for integer columns; exact below 2^24) or float64 (``w64``),
        whichever is asked for first, the other converted from it (exact). Without ``idx`` the
        multiplicities are drawn and counted block by block (``drawn_multiplicities``: the
        same numbers)."""
        key = (stream, n_units)
        if key not in self._cache:
            if (
                len(self._cache) >= CACHE_STREAMS
            ):  # the metrics of one unit set are computed together
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = {}
        else:  # most recently used last
            self._cache[key] = self._cache.pop(key)
        return self._cache[key]

    def _rng(self, stream: str) -> np.random.Generator:
        return np.random.default_rng(self.stream_seed(stream))

    def _counted(
        self, entry: dict[str, np.ndarray], n_units: int, stream: str, dtype: Any
    ) -> np.ndarray:
        """The multiplicities of a unit set in ``dtype``, from its cached ``idx`` if drawn."""
        if "idx" in entry:
            return multiplicities(entry["idx"], n_units, dtype)
        return drawn_multiplicities(self._rng(stream), self.n, n_units, dtype)

    def _trim(self, keep: tuple[str, int]) -> None:
        """Drop the least recently used unit sets' resamples (never ``keep``'s) while the cache
        holds more than ``CACHE_BYTES``; a dropped set is drawn again from its seed if asked for
        (the same numbers: each set's stream has its own seed)."""
        held = sum(a.nbytes for entry in self._cache.values() for a in entry.values())
        for key in [k for k in self._cache if k != keep]:
            if held <= CACHE_BYTES:
                return
            held -= sum(a.nbytes for a in self._cache.pop(key).values())

    def indices(self, n_units: int, stream: str) -> np.ndarray:
        """Resampled unit positions, ``n_boot x n_units``."""
        entry = self._draw(n_units, stream)
        if "idx" not in entry:
            entry["idx"] = self._rng(stream).integers(
                0, max(n_units, 1), size=(self.n, n_units), dtype=np.int32
            )
            self._trim((stream, n_units))
        return entry["idx"]

    def weights(self, n_units: int, stream: str) -> np.ndarray:
        """Unit multiplicities of each resample, ``n_boot x n_units`` (rows sum to n_units)."""
        entry = self._draw(n_units, stream)
        if "w64" not in entry:
            entry["w64"] = (
                entry["w32"].astype(np.float64)
                if "w32" in entry
                else self._counted(entry, n_units, stream, np.float64)
            )
            self._trim((stream, n_units))
        return entry["w64"]

    def _weights32(self, n_units: int, stream: str) -> np.ndarray | None:
        """The float32 multiplicities (None when float32 would not be exact)."""
        if n_units >= EXACT32:
            return None
        entry = self._draw(n_units, stream)
        if "w32" not in entry:
            entry["w32"] = (
                entry["w64"].astype(np.float32)
                if "w64" in entry
                else self._counted(entry, n_units, stream, np.float32)
            )
            self._trim((stream, n_units))
        return entry["w32"]

    def sums(self, columns: np.ndarray, stream: str) -> np.ndarray:
        """Replicates of the column sums of ``columns`` (``n_units x k`` per-unit values):
        ``weights @ columns``, ``n_boot x k``.

        Integer-valued columns go through one matrix product, in float32 while every sum stays
        below 2^24, else in float64 (exact either way, so equal to one product per column);
        other columns get one float64 matrix-vector product each, as ``w @ x`` always did.
        """
        columns = np.asarray(columns, dtype=float)
        n_units = len(columns)
        bound = integer_bound(columns)
        w32 = self._weights32(n_units, stream) if bound < EXACT32 else None
        if w32 is not None:
            return (w32 @ columns.astype(np.float32)).astype(np.float64)
        weights = self.weights(n_units, stream)
        if bound < EXACT64:
            return weights @ columns
        out = np.empty((self.n, columns.shape[1]))
        for j in range(columns.shape[1]):
            out[:, j] = weights @ np.ascontiguousarray(columns[:, j])
        return out

    def interval(
        self,
        value: float,
        reps: np.ndarray | None,
        stream: str,
        n_units: int,
        estimand: str | None = None,
        jackknife: np.ndarray | None = None,
        method: str | None = None,
    ) -> dict[str, Any]:
        """The point estimate with its percentile interval (BCa where ``method`` (default
        ``self.method[estimand]``) is ``"bca"`` and ``jackknife`` is given; the basic interval
        ``(2 value - q_hi, 2 value - q_lo)`` where it is ``"basic"``), as an ``Estimate`` JSON
        dict (``n`` = the units resampled; the draw is recorded in the file's ``bootstrap``
        block)."""
        ci = None
        if reps is not None and n_units > 0:
            reps = np.asarray(reps, dtype=float)
            finite = reps[np.isfinite(reps)]
            if finite.size:
                tail = (1 - self.level) / 2
                probs = np.array([tail, 1 - tail])
                method = method or self.method.get(estimand or "", "percentile")
                if method == "bca" and jackknife is not None:
                    probs = bca_levels(value, finite, np.asarray(jackknife, dtype=float), probs)
                if probs is not None:
                    lo, hi = np.percentile(finite, 100 * probs)
                    ci = (float(lo), float(hi))
                    if method == "basic" and value is not None and np.isfinite(value):
                        # basic (reverse percentile): the replicates' deviations from the
                        # estimate, reflected (Davison and Hinkley 1997, eq. 5.6)
                        ci = (float(2 * value - hi), float(2 * value - lo))
        return estimate_json(value, ci, int(n_units), self.level)

    def of_sums(
        self,
        columns: np.ndarray,
        stat: Any,
        stream: str,
        estimand: str | None = None,
        method: str | None = None,
        sums: np.ndarray | None = None,
    ) -> dict[str, Any]:
        """A statistic of per-unit column sums (``stat``: ``(..., k)`` sums -> ``(...)`` values)
        with its interval by ``method`` (default ``method[estimand]``): percentile (default),
        ``bca`` (jackknife acceleration from the leave-one-unit-out sums) or ``studentized``
        (bootstrap-t: each replicate's t = (replicate - estimate) / its jackknife SE within the
        resample; the interval is estimate - t quantiles x the sample's jackknife SE).
        ``sums``: the replicates of the column sums when the caller has them
        (``self.sums(columns, stream)``), so they are not computed twice."""
        columns = np.asarray(columns, dtype=float)
        n = len(columns)
        total = columns.sum(axis=0)
        value = float(stat(total))
        if sums is None:
            sums = self.sums(columns, stream)
        reps = np.asarray(stat(sums), dtype=float)
        method = method or self.method.get(estimand or "", "percentile")
        if method == "bca":
            jack = stat(total - columns)
            return self.interval(value, reps, stream, n, estimand, jackknife=jack, method="bca")
        if method == "studentized" and n > 2 and np.isfinite(value):
            return self._studentized(value, reps, columns, stat, stream, sums)
        return self.interval(value, reps, stream, n, method=method)

    def _studentized(
        self,
        value: float,
        reps: np.ndarray,
        columns: np.ndarray,
        stat: Any,
        stream: str,
        sums: np.ndarray,
    ) -> dict[str, Any]:
        n = len(columns)
        total = columns.sum(axis=0)
        se = jackknife_se(np.asarray(stat(total - columns), dtype=float), np.ones(n))
        weights = self.weights(n, stream)
        se_b = np.empty(self.n)
        step = max(1, BLOCK_ELEMENTS // max(n * columns.shape[1], 1))
        for start in range(
            0, self.n, step
        ):  # leave-one-draw-out values of each replicate, in blocks
            w = weights[start : start + step]
            with np.errstate(divide="ignore", invalid="ignore"):
                loo = np.asarray(
                    stat(sums[start : start + step, None, :] - columns[None, :, :]), dtype=float
                )
            se_b[start : start + step] = jackknife_se(np.where(w > 0, loo, 0.0), w)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (reps - value) / se_b
        t = t[np.isfinite(t)]
        ci = None
        if t.size and np.isfinite(se) and se > 0:
            tail = (1 - self.level) / 2
            t_lo, t_hi = np.percentile(t, [100 * tail, 100 * (1 - tail)])
            ci = (float(value - t_hi * se), float(value - t_lo * se))
        return estimate_json(value, ci, n, self.level)

    def block(
        self, resampled: str = "units with replacement, keep all their images"
    ) -> dict[str, Any]:
        """How a file's intervals were drawn: the ``bootstrap`` block of every metrics JSON
        holding bootstrap ``Estimate``s (docs/metrics.md)."""
        return {
            "n_boot": self.n,
            "seed": self.seed,
            "level": self.level,
            "method": f"{self._method_text()}; resample {resampled}",
            "method_by_estimand": dict(self.method),
            "stream_seed": "numpy default_rng(derive_seed(seed, stream)), one stream per unit set",
        }

    def _method_text(self) -> str:
        other = sorted(f"{v} for {k}" for k, v in self.method.items() if v != "percentile")
        return "percentile" + (f" ({'; '.join(other)})" if other else "")

    # ---- statistics of per-unit sums --------------------------------------------------
    def ratio(
        self, num: np.ndarray, den: np.ndarray, stream: str
    ) -> tuple[dict[str, Any], np.ndarray]:
        """sum(num) / sum(den) over units (e.g. the share of images labelled s).

        Integer-valued ``num`` and ``den`` (counts) go through ``sums`` (one product, exact, so
        the replicates equal ``weights @ num`` and ``weights @ den`` bit for bit, without the
        float64 multiplicities); others get the two float64 products."""
        value = safe_div(num.sum(), den.sum())
        columns = np.column_stack([num, den]).astype(float)
        if integer_bound(columns) < EXACT64:
            sums = self.sums(columns, stream)
            reps = safe_div(sums[:, 0], sums[:, 1])
        else:
            weights = self.weights(len(num), stream)
            reps = safe_div(weights @ num, weights @ den)
        return self.interval(value, reps, stream, len(num)), reps

    def difference(
        self, a: tuple[float, np.ndarray], b: tuple[float, np.ndarray], stream: str, n_units: int
    ) -> dict[str, Any]:
        """a - b from two statistics drawn on the same stream (paired replicates)."""
        return self.interval(a[0] - b[0], a[1] - b[1], stream, n_units)

    def paired(
        self, a: np.ndarray, b: np.ndarray, statistic: Callable[[np.ndarray], Any], stream: str
    ) -> tuple[dict[str, Any], np.ndarray]:
        """Paired cluster bootstrap of ``statistic(A) - statistic(B)``.

        ``a`` and ``b`` are per-unit columns (``n_units x k``) of two generators (or runs) on
        the **same** units, row for row (the units and seeds they share); ``statistic`` maps
        column sums (shape ``(..., k)``) to the value (e.g. a ratio of two sums). Each resample
        draws one set of units and sums both generators' columns over it, so the difference's
        interval removes the between-unit variance the two share. Returns the difference as an
        ``Estimate`` JSON dict and its replicates (for ``bootstrap_p``).
        """
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        k = a.shape[1]
        reps = self.sums(np.hstack([a, b]), stream)
        value = statistic(a.sum(axis=0)) - statistic(b.sum(axis=0))
        diff = np.asarray(statistic(reps[:, :k]), dtype=float) - np.asarray(
            statistic(reps[:, k:]), dtype=float
        )
        return self.interval(value, diff, stream, len(a)), diff


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the bootstrap's matrix products on one BLAS thread.

    The products are small (at most ``n_boot x n_units`` times a few columns): threads cost
    more to start and synchronise than they save, several times over on a shared 2-core
    machine. Results do not change (each replicate is one dot product on one thread either way).
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def jackknife_se(values: np.ndarray, weights: np.ndarray) -> Any:
    """Jackknife standard error from leave-one-out ``values`` (last axis), each counted
    ``weights`` times (a resample's multiplicities; ones for the sample):
    sqrt((m - 1) / m * sum w (v - mean)^2), m = sum w."""
    values = np.asarray(values, dtype=float)
    weights = np.asarray(weights, dtype=float)
    m = weights.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = (weights * values).sum(axis=-1) / m
        dev = np.where(weights > 0, values - mean[..., None], 0.0)
        return np.sqrt((m - 1) / m * (weights * dev**2).sum(axis=-1))


def bca_levels(
    value: float, reps: np.ndarray, jackknife: np.ndarray, probs: np.ndarray
) -> np.ndarray | None:
    """BCa's percentile levels for nominal levels ``probs``: z0 = Phi^-1(share of ``reps`` below
    ``value``, ties counted half), a = sum(d^3) / (6 sum(d^2)^1.5) with d = mean(jackknife) -
    jackknife; level = Phi(z0 + (z0 + z) / (1 - a (z0 + z))). None when undefined."""
    from scipy.special import ndtr, ndtri

    if value is None or not np.isfinite(value):
        return None
    share = (np.sum(reps < value) + 0.5 * np.sum(reps == value)) / len(reps)
    if not 0 < share < 1:
        return None
    z0 = ndtri(share)
    jack = jackknife[np.isfinite(jackknife)]
    d = jack.mean() - jack if jack.size > 2 else np.zeros(1)
    den = 6 * np.sum(d**2) ** 1.5
    a = np.sum(d**3) / den if den > 0 else 0.0
    z = ndtri(probs)
    return ndtr(z0 + (z0 + z) / (1 - a * (z0 + z)))


def multiplicities(idx: np.ndarray, n_units: int, dtype: Any = np.float64) -> np.ndarray:
    """How often each unit occurs in each row of ``idx`` (``n_boot x n_units``, ``dtype``).

    One ``bincount`` per block of rows (offset so that each row has its own bins) keeps the
    counts in the CPU cache; the result equals one ``bincount`` over all rows.
    """
    n_boot = idx.shape[0]
    out = np.empty((n_boot, n_units), dtype=dtype)
    rows = max(1, BLOCK_ELEMENTS // max(n_units, 1))
    offsets = (np.arange(min(rows, n_boot), dtype=np.int64) * n_units)[:, None]
    for start in range(0, n_boot, rows):
        block = idx[start : start + rows]
        flat = (block + offsets[: len(block)]).ravel()
        out[start : start + len(block)] = np.bincount(flat, minlength=len(block) * n_units).reshape(
            len(block), n_units
        )
    return out


def drawn_multiplicities(
    rng: np.random.Generator, n_boot: int, n_units: int, dtype: Any = np.float64
) -> np.ndarray:
    """``multiplicities(rng.integers(0, n_units, (n_boot, n_units), int32), ...)`` without the
    whole index matrix: the rows are drawn and counted a block at a time (a block of indices
    stays in the CPU cache and is reused, no ``n_boot x n_units`` index matrix is paged in).

    The same numbers: numpy draws bounded int32 values one 32-bit output of the bit generator
    at a time, so consecutive blocks of rows continue the one stream exactly
    (tests/unit/analysis/byo/test_analysis_speed.py checks it against the whole draw). A draw of
    ``PIPELINE_ELEMENTS`` or more is drawn a block ahead on a second thread while this one
    counts (``_blocks``)."""
    out = np.empty((n_boot, n_units), dtype=dtype)
    if n_units == 0:
        return out
    rows = max(1, BLOCK_ELEMENTS // n_units)  # rows x n_units < 2^31: int32 bins suffice
    offsets = (np.arange(min(rows, n_boot), dtype=np.int32) * np.int32(n_units))[:, None]
    starts = list(range(0, n_boot, rows))

    def draw(start: int) -> np.ndarray:
        return rng.integers(0, n_units, size=(min(rows, n_boot - start), n_units), dtype=np.int32)

    ahead = n_boot * n_units >= PIPELINE_ELEMENTS and _cpus() > 1
    for start, block in zip(starts, _blocks(draw, starts, ahead), strict=True):
        m = len(block)
        block += offsets[:m]  # each row its own bins
        out[start : start + m] = np.bincount(block.ravel(), minlength=m * n_units).reshape(
            m, n_units
        )
    return out


def _blocks(
    draw: Callable[[int], np.ndarray], starts: list[int], ahead: bool
) -> Iterator[np.ndarray]:
    """``draw(start)`` for each start, in order. With ``ahead`` every draw runs on one worker
    thread, the next one while the caller counts the current block: numpy fills the block
    without holding the GIL, and the draws stay one after another on one thread, so the stream
    (and every number) is the one of drawing in turn."""
    if not ahead or len(starts) < 2:
        yield from map(draw, starts)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bootstrap-draw") as pool:
        pending = pool.submit(draw, starts[0])
        for start in starts[1:]:
            block = pending.result()
            pending = pool.submit(draw, start)
            yield block
        yield pending.result()


def _cpus() -> int:
    """CPUs this process may run on."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def integer_bound(columns: np.ndarray) -> float:
    """An upper bound on ``|sum|`` of any resample of integer-valued ``columns``, and on every
    product and partial sum on the way: a resample's multiplicities add up to ``n_units``, so
    it is ``n_units x max |x|``; infinite when an entry is not an integer."""
    if columns.size == 0:
        return 0.0
    if not np.isfinite(columns).all() or not (columns == np.round(columns)).all():
        return float("inf")
    return float(np.abs(columns).max()) * len(columns)


def moments(count: np.ndarray, total: np.ndarray, sumsq: np.ndarray) -> tuple[Any, Any, Any]:
    """(mean, sample sd with ddof=1, Cohen's d = mean / sd) from pooled sums (arrays or scalars)."""
    count = np.asarray(count, dtype=float)
    total = np.asarray(total, dtype=float)
    sumsq = np.asarray(sumsq, dtype=float)
    mean = safe_div(total, count)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.where(
            count > 1,
            (sumsq - total * total / np.where(count > 0, count, 1))
            / np.where(count > 1, count - 1, 1),
            np.nan,
        )
        var = np.where(var < 0, 0.0, var)  # rounding
        sd = np.sqrt(var)
        d = np.where(sd > 0, mean / np.where(sd > 0, sd, 1), np.nan)
    return mean, sd, d


def pearson(n: Any, sx: Any, sy: Any, sxx: Any, syy: Any, sxy: Any) -> Any:
    """Pearson r from pooled sums (arrays or scalars); NaN when a variance is 0."""
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = sxy - sx * sy / np.where(n > 0, n, 1)
        vx = sxx - sx * sx / np.where(n > 0, n, 1)
        vy = syy - sy * sy / np.where(n > 0, n, 1)
        den = np.sqrt(np.clip(vx, 0, None) * np.clip(vy, 0, None))
        r = np.where((den > 0) & (n > 1), cov / np.where(den > 0, den, 1), np.nan)
    return r if np.ndim(r) else float(r)


def hedges_g(n1: Any, s1: Any, q1: Any, n2: Any, s2: Any, q2: Any) -> Any:
    """Hedges' g of group 1 vs group 2 from sums: pooled SD (ddof=1), J = 1 - 3 / (4 df - 1)."""
    n1, n2 = np.asarray(n1, dtype=float), np.asarray(n2, dtype=float)
    m1, sd1, _ = moments(n1, s1, q1)
    m2, sd2, _ = moments(n2, s2, q2)
    df = n1 + n2 - 2
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = np.sqrt(
            ((n1 - 1) * np.asarray(sd1) ** 2 + (n2 - 1) * np.asarray(sd2) ** 2)
            / np.where(df > 0, df, 1)
        )
        j = 1 - 3 / (4 * df - 1)
        g = np.where(
            (df > 0) & (pooled > 0) & (n1 > 1) & (n2 > 1),
            j * (m1 - m2) / np.where(pooled > 0, pooled, 1),
            np.nan,
        )
    return g if np.ndim(g) else float(g)


def rank_rows(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Average ranks (ties share their mean rank, as scipy's rankdata) of ``values[idx]`` row by
    row, by counting: rank = (# smaller) + (# equal + 1) / 2. ``idx`` is ``n_rows x n``."""
    levels, codes = np.unique(values, return_inverse=True)
    n_rows, _ = idx.shape
    n_levels = len(levels)
    # each drawn value's (row, level) cell, flattened: counted once, then looked up in place
    cell = codes.reshape(-1)[idx] + (np.arange(n_rows) * n_levels)[:, None]
    counts = np.bincount(cell.ravel(), minlength=n_rows * n_levels)
    counts = counts.reshape(n_rows, n_levels).astype(float)
    average = np.cumsum(counts, axis=1) - counts + (counts + 1) / 2
    return average.ravel()[cell]


SPEARMAN_LEVELS = 64  # the joint-count path of ``spearman_reps`` up to this many (x, y) levels
SPEARMAN_EXACT_N = 1 << 17  # ... and this many values a row (its sums stay exact integers / 4)


def spearman_reps(x: np.ndarray, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Spearman rho of each resample (rows of ``idx``) of paired values x, y.

    Values with few distinct (x, y) pairs (per-unit rates of a few seeds) take the joint-count
    path (``_spearman_by_counts``): the same numbers bit for bit, without a rank per draw."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if idx.shape[1] <= SPEARMAN_EXACT_N and np.isfinite(x).all() and np.isfinite(y).all():
        fast = _spearman_by_counts(x, y, idx)
        if fast is not None:
            return fast
    return _spearman_by_ranks(x, y, idx)


def _spearman_by_counts(x: np.ndarray, y: np.ndarray, idx: np.ndarray) -> np.ndarray | None:
    """``_spearman_by_ranks`` from each row's counts of the joint (x level, y level) cells.

    A row's average ranks are half-integers summing to n (n + 1) / 2, so their mean is exactly
    (n + 1) / 2 and every centred rank, product and sum of ``_spearman_by_ranks`` is a multiple
    of 1/4 below 2^53 (n <= 2^17): exact in any order of summation. Here each sum is a few
    count x product terms per cell: the same values, so the same rho. None (use the ranks)
    with more than ``SPEARMAN_LEVELS`` cells."""
    lx, cx = np.unique(x, return_inverse=True)
    ly, cy = np.unique(y, return_inverse=True)
    n_cells = len(lx) * len(ly)
    if n_cells > SPEARMAN_LEVELS:
        return None
    n_rows, n = idx.shape
    joint = (cx.reshape(-1) * len(ly) + cy.reshape(-1)).astype(np.int32)
    counts = multiplicities(joint[idx], n_cells).reshape(n_rows, len(lx), len(ly))
    centre = (n + 1) / 2

    def centred(c: np.ndarray) -> np.ndarray:  # average rank of each level, minus the mean rank
        return np.cumsum(c, axis=1) - c + (c + 1) / 2 - centre

    nx, ny = counts.sum(axis=2), counts.sum(axis=1)
    ax, ay = centred(nx), centred(ny)
    sxy = (counts * ax[:, :, None] * ay[:, None, :]).sum(axis=(1, 2))
    sxx = (nx * ax * ax).sum(axis=1)
    syy = (ny * ay * ay).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        den = np.sqrt(sxx * syy)
        return np.where(den > 0, sxy / np.where(den > 0, den, 1), np.nan)


def _spearman_by_ranks(x: np.ndarray, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Spearman rho of each row of ``idx`` from the average ranks of its draws (general)."""
    rx = rank_rows(x, idx)
    ry = rank_rows(y, idx)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        den = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
        return np.where(den > 0, (rx * ry).sum(axis=1) / np.where(den > 0, den, 1), np.nan)


def spearman(x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 2:
        return None
    r = spearman_reps(np.asarray(x, float), np.asarray(y, float), np.arange(len(x))[None, :])[0]
    return finite(r)


def bootstrap_p(reps: np.ndarray, null: float = 0.0) -> float | None:
    """Two-sided bootstrap p-value of "the statistic equals ``null``" from its replicates:
    ``2 x min(share <= null, share >= null)``, each share as ``(count + 1) / (n + 1)`` so that it
    is never 0 (Davison & Hinkley 1997, eq. 4.11), capped at 1. None without finite replicates."""
    reps = np.asarray(reps, dtype=float)
    reps = reps[np.isfinite(reps)]
    if not reps.size:
        return None
    n = reps.size
    low = (np.count_nonzero(reps <= null) + 1) / (n + 1)
    high = (np.count_nonzero(reps >= null) + 1) / (n + 1)
    return float(min(1.0, 2 * min(low, high)))


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of a family of p-values (None stays None and is not counted):
    the i-th smallest of m is multiplied by m - i + 1 (i from 1), made monotone, capped at 1."""
    idx = [i for i, p in enumerate(pvalues) if p is not None]
    order = sorted(idx, key=lambda i: pvalues[i])  # type: ignore[arg-type, return-value]
    m = len(order)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(pvalues[i])))  # type: ignore[arg-type]
        out[i] = running
    return out


def resolve_differences(
    entries: list[dict[str, Any]], reps: Sequence[np.ndarray], level: float
) -> None:
    """The **resolved** verdict of a family of paired differences (leaderboard, beside the
    paper; docs/compare.md): per entry (``{"difference": Estimate JSON, ...}``, with its
    replicates in ``reps``) the two-sided ``bootstrap_p`` of "the difference is 0", Holm-adjusted
    over the whole family, written as ``p`` and ``p_holm``; ``resolved`` when the adjusted p is
    below ``1 - level`` and the interval is not degenerate (every resample gave one value, e.g.
    one shared unit: no verdict). An entry without an interval gets no p and is not counted."""
    pvalues = [
        bootstrap_p(r) if e["difference"]["ci"] is not None else None
        for e, r in zip(entries, reps, strict=True)
    ]
    adjusted = holm(pvalues)
    alpha = 1 - level
    for e, p, q in zip(entries, pvalues, adjusted, strict=True):
        ci = e["difference"]["ci"]
        degenerate = ci is not None and ci[0] == ci[1]  # every resample: one value (one unit)
        e["p"], e["p_holm"] = p, q
        e["resolved"] = bool(q is not None and q < alpha and not degenerate)
