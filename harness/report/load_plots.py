"""The load run's picture: latency over time per SLO class with fault windows shaded, and the
request rate (ok and failed) per second underneath."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from harness.checkers.slo import LOAD_PREFIX, MUTATING, load_ops
from harness.history import History
from harness.report.plotting import plt
from harness.report.timeline import save, shade_faults


def slo_class(verb: str, scope: str) -> str:
    if verb in MUTATING:
        return "mutating (SLO 1 s)"
    if verb == "get":
        return "get (SLO 1 s)"
    if verb == "list":
        return f"list {scope} (SLO {'5' if scope == 'namespace' else '30'} s)"
    return f"{verb} (streaming, no SLO)"


def plot_load(history: History, path: Path, title: str = "") -> Path | None:
    ops = load_ops(history)
    if not ops:
        return None
    t0 = min(o.invoke for o in ops)
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(11, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1.4]})
    classes: dict[str, list] = {}
    for op in ops:
        classes.setdefault(slo_class(op.f.removeprefix(LOAD_PREFIX), str(op.extra.get("scope"))), []).append(op)
    for index, (name, members) in enumerate(sorted(classes.items())):
        ok = [o for o in members if o.ok]
        top.scatter([o.invoke - t0 for o in ok], [o.latency * 1000 for o in ok], s=3, alpha=0.5, color=f"C{index}",
                    label=name)
    failed = [o for o in ops if not o.ok]
    if failed:
        top.scatter([o.invoke - t0 for o in failed], [max(o.latency * 1000, 1) for o in failed], s=16, marker="x",
                    color="red", label=f"failed ({len(failed)})")
    top.set_yscale("log")
    top.set_ylabel("latency (ms)")
    top.legend(loc="upper right", fontsize=7, ncol=2)
    ok_rate = Counter(int(o.invoke - t0) for o in ops if o.ok)
    bad_rate = Counter(int(o.invoke - t0) for o in failed)
    seconds = range(0, int(max(o.invoke for o in ops) - t0) + 1)
    bottom.plot(list(seconds), [ok_rate.get(s, 0) for s in seconds], color="C2", linewidth=0.9, label="ok req/s")
    bottom.plot(list(seconds), [bad_rate.get(s, 0) for s in seconds], color="red", linewidth=0.9, label="failed req/s")
    bottom.set_ylabel("requests/s")
    bottom.set_xlabel("seconds since the load started")
    bottom.legend(loc="upper right", fontsize=7)
    shade_faults(history, (top, bottom), t0, max(o.complete for o in ops))
    return save(figure, path, title or "API load")
