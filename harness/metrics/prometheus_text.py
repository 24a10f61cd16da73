"""The histogram samples of one metric family from Prometheus' text exposition format (version 0.0.4).

Only what the server-side SLIs need: `NAME_bucket{labels} value` lines, their labels (quoted values with the
format's three escapes) and cumulative counts per upper bound; and a counter's or gauge's samples by their labels.
Why not a library: docs/libraries.md."""

from __future__ import annotations

import math
import re

from harness.errors import QuorumError

Labels = tuple[tuple[str, str], ...]  # sorted (name, value) pairs, without `le`
Histogram = dict[float, float]  # upper bound (le) -> cumulative count

_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


class MetricsFormatError(QuorumError):
    """A line of a /metrics answer that is not Prometheus' text format."""


def _labels(text: str, line: str) -> dict[str, str]:
    labels, position = {}, 0
    while position < len(text):
        match = _LABEL.match(text, position)
        if not match:
            raise MetricsFormatError(f"unreadable labels in a /metrics line: {line[:200]!r}")
        labels[match.group(1)] = re.sub(r"\\[\\\"n]", lambda m: _UNESCAPE[m.group(0)], match.group(2))
        position = match.end()
    return labels


def _bound(value: str, line: str) -> float:
    try:
        return math.inf if value == "+Inf" else float(value)
    except ValueError:
        raise MetricsFormatError(f"a bucket bound that is not a number: {line[:200]!r}") from None


def histograms(text: str, family: str) -> dict[Labels, Histogram]:
    """Every series of `family`'s buckets in a /metrics answer: its labels (without le) -> le -> count."""
    prefix = f"{family}_bucket{{"
    series: dict[Labels, Histogram] = {}
    for line in text.splitlines():
        if not line.startswith(prefix):
            continue
        labels_text, closing, rest = line[len(prefix):].rpartition("}")
        if not closing:
            raise MetricsFormatError(f"a bucket line without its closing brace: {line[:200]!r}")
        labels = _labels(labels_text, line)
        if "le" not in labels:
            raise MetricsFormatError(f"a bucket line without le: {line[:200]!r}")
        bound = _bound(labels.pop("le"), line)
        try:
            count = float(rest.split()[0])
        except (IndexError, ValueError):
            raise MetricsFormatError(f"a bucket line without a count: {line[:200]!r}") from None
        series.setdefault(tuple(sorted(labels.items())), {})[bound] = count
    return series


def histogram_quantile(q: float, buckets: Histogram) -> float | None:
    """PromQL's histogram_quantile over cumulative buckets: the bucket holding rank q x count, interpolated linearly
    from its lower bound (0 for the first); in the +Inf bucket, the highest finite bound. None without requests."""
    bounds = sorted(buckets)
    if not bounds or bounds[-1] != math.inf or buckets[math.inf] <= 0:
        return None
    rank = q * buckets[math.inf]
    lower, below = 0.0, 0.0
    for bound in bounds:
        count = buckets[bound]
        if count >= rank:
            if bound == math.inf:
                return lower
            if count == below:
                return bound
            return lower + (bound - lower) * (rank - below) / (count - below)
        lower, below = bound, count
    return lower


def samples(text: str, name: str) -> dict[Labels, float]:
    """Every sample of a counter or a gauge `name` in a /metrics answer: its labels -> its value."""
    found: dict[Labels, float] = {}
    for line in text.splitlines():
        if not (line.startswith(name) and line[len(name):len(name) + 1] in (" ", "{")):
            continue
        labels: dict[str, str] = {}
        rest = line[len(name):]
        if rest.startswith("{"):
            labels_text, closing, rest = rest[1:].rpartition("}")
            if not closing:
                raise MetricsFormatError(f"a sample line without its closing brace: {line[:200]!r}")
            labels = _labels(labels_text, line)
        try:
            found[tuple(sorted(labels.items()))] = float(rest.split()[0])
        except (IndexError, ValueError):
            raise MetricsFormatError(f"a sample line without a value: {line[:200]!r}") from None
    return found


def counter_total(text: str, name: str) -> float | None:
    """The sum of a counter's samples over its labels in a /metrics answer; None if it has none."""
    total, seen = 0.0, False
    for line in text.splitlines():
        if line.startswith(name) and line[len(name):len(name) + 1] in (" ", "{"):
            try:
                total += float(line.rpartition("}")[2].split()[0] if "{" in line else line.split()[1])
            except (IndexError, ValueError):
                raise MetricsFormatError(f"a counter line without a value: {line[:200]!r}") from None
            seen = True
    return total if seen else None


def increase(before: Histogram, after: Histogram) -> Histogram:
    """A histogram's increase between two scrapes; a bucket that went down means the process restarted: its counts
    since the start."""
    if any(after.get(bound, 0.0) < count for bound, count in before.items()):
        return dict(after)
    return {bound: count - before.get(bound, 0.0) for bound, count in after.items()}
