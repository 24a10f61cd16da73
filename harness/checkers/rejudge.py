"""Judging a saved History again (Jepsen's analyze): every checker run the History records (CHECKED) is run once
more, on the History as it was when the checker first ran and with the arguments the scenario gave it, and what it
finds now is set beside what it found then. Pure: nothing here touches a cluster.

A run that differs means a checker changed (or the History was edited) since it was judged; a run whose arguments
the History could not hold, or whose checker no longer exists, cannot be re-judged and is kept apart from both.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import harness.checkers
from harness.checkers.verdict import CHECKED, CHECKERS, Verdict, comparable
from harness.history import Event, History


class Again(str, Enum):
    SAME = "same"
    DIFFERENT = "different"
    CANNOT = "cannot re-judge"


@dataclass(frozen=True)
class Rejudged:
    """One checker run: what it found when the scenario ran it, and what it finds now."""

    checker: str
    then_status: str
    then_figures: dict
    now: Verdict | None
    again: Again
    why: str = ""

    @property
    def now_status(self) -> str:
        return self.now.status.value if self.now is not None else "-"


def load_checkers() -> None:
    """Every checker module imported, so each registers itself in CHECKERS."""
    for module in pkgutil.iter_modules(harness.checkers.__path__):
        importlib.import_module(f"harness.checkers.{module.name}")


def rejudge_run(run: Event, history: History) -> Rejudged:
    then = (str(run.get("status", "?")), run.get("figures") or {})
    name, call = str(run.get("checker", "?")), run.get("call")
    if call is not None and not isinstance(call, dict):
        call = {}
    if name not in CHECKERS:
        return Rejudged(name, *then, None, Again.CANNOT, "no checker of that name in this version of Quorum")
    if call is None:
        return Rejudged(name, *then, None, Again.CANNOT, "its arguments were not values a History can hold")
    ops, events, positional, arguments = run.get("ops"), run.get("events"), call.get("positional"), call.get("arguments")
    if not (isinstance(ops, int) and isinstance(events, int) and isinstance(positional, list)
            and isinstance(arguments, dict)):  # an edited or foreign record: say so, never a traceback
        return Rejudged(name, *then, None, Again.CANNOT, "its record of the run is not one Quorum writes")
    now = CHECKERS[name](history.prefix(ops, events), *positional, **arguments)
    same = now.status.value == then[0] and comparable(now.figures) == then[1]
    return Rejudged(name, *then, now, Again.SAME if same else Again.DIFFERENT)


def rejudge(history: History) -> list[Rejudged]:
    """Each checker run the History records, judged again, in the order they ran."""
    load_checkers()
    return [rejudge_run(run, history) for run in history.events_of(CHECKED)]


def rejudge_directory(results: Path) -> dict[str, list[Rejudged]]:
    """Each History of a run's results directory (one JSONL file per test) -> its checker runs judged again."""
    return {path.stem: rejudge(History.load(path)) for path in sorted(results.glob("*.jsonl"))}
