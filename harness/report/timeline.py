"""The timeline picture of a test: request outcomes and latency over time, fault windows shaded,
component exits/starts and leader changes marked."""

from __future__ import annotations

from pathlib import Path

from harness.history import History
from harness.report.plotting import plt


def plot_timeline(history: History, path: Path, title: str = "") -> Path | None:
    span = history.span()
    if span is None:
        return None
    t0 = span[0]
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(11, 5.5), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    functions = sorted({o.f for o in history.ops if not o.f.endswith("read_all")})
    for index, f in enumerate(functions):
        ops = history.ops_of(f)
        ok = [o for o in ops if o.ok]
        bad = [o for o in ops if not o.ok]
        top.scatter([o.invoke - t0 for o in ok], [o.latency * 1000 for o in ok], s=4, label=f"{f} ok", alpha=0.6,
                    color=f"C{index}")
        top.scatter([o.invoke - t0 for o in bad], [max(o.latency * 1000, 1) for o in bad], s=18, marker="x",
                    color="red" if index == 0 else f"C{index + 3}", label=f"{f} failed ({len(bad)})")
    top.set_yscale("log")
    top.set_ylabel("latency (ms)")
    if functions:
        top.legend(loc="upper right", fontsize=7, ncol=2)
    shade_faults(history, (top, bottom), t0, span[1])
    lanes: dict[str, int] = {}
    for event in history.events_of():
        if event.type in ("component.exit", "component.start"):
            lane = lanes.setdefault(str(event.get("component")), len(lanes))
            bottom.scatter([event.t - t0], [lane], marker="v" if event.type.endswith("exit") else "^",
                           color="red" if event.type.endswith("exit") else "green", s=30)
        elif event.type == "leader":
            lane = lanes.setdefault(f"leader {event.get('subject')}", len(lanes))
            bottom.scatter([event.t - t0], [lane], marker="o", color="purple", s=20)
            bottom.annotate(str(event.get("holder")), (event.t - t0, lane), fontsize=6, xytext=(2, 2),
                            textcoords="offset points")
    bottom.set_yticks(list(lanes.values()), list(lanes.keys()), fontsize=6)
    bottom.set_xlabel("seconds since the first record")
    return save(figure, path, title or "timeline")


def shade_faults(history: History, axes, t0: float, last: float) -> None:
    """Fault windows as orange bands on every axis (a fault never healed runs to `last`), named on the first."""
    for axis in axes:
        for start, end, event in history.fault_windows():
            axis.axvspan(start - t0, (end if end is not None else last) - t0, color="orange", alpha=0.18)
            if axis is axes[0]:
                axis.text(start - t0, axis.get_ylim()[1], f" {event.get('name')}", fontsize=7, va="top")


def save(figure, path: Path, title: str) -> Path:
    figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path
