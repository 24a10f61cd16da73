"""The result of a checker: pass/fail/unknown, the figures, and an explanation naming the evidence."""

from __future__ import annotations

import dataclasses
import functools
import json
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ParamSpec

from harness.history import History

P = ParamSpec("P")


class Status(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Verdict:
    checker: str
    status: Status
    explanation: str
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status is Status.PASS

    def explain(self) -> str:
        figures = ", ".join(f"{k}={v}" for k, v in self.figures.items())
        return f"[{self.checker}: {self.status.value}] {self.explanation}" + (f" ({figures})" if figures else "")

    def __bool__(self) -> bool:  # `assert verdict, verdict.explain()` reads naturally
        return self.passed


CHECKED = "checker.run"  # the History's record of one checker's run: its name, arguments, what it saw and found
CHECKERS: dict[str, Callable[..., Verdict]] = {}  # function name -> the checker, as `quorum analyze` calls it again


def checker(name: str) -> Callable[[Callable[P, Verdict]], Callable[P, Verdict]]:
    """An exception inside a checker gives unknown, never pass. A checker that judges a History (its first
    argument) records its run there (CHECKED), so a saved History can be judged again the same way
    (harness/checkers/rejudge.py)."""

    def wrap(function: Callable[P, Verdict]) -> Callable[P, Verdict]:
        @functools.wraps(function)
        def guarded(*args: P.args, **kwargs: P.kwargs) -> Verdict:
            history = args[0] if args and isinstance(args[0], History) else None
            seen = history.extent() if history is not None else (0, 0)
            try:
                verdict = function(*args, **kwargs)
            except Exception as error:  # noqa: BLE001 - the point is to turn any failure into unknown
                where = traceback.extract_tb(error.__traceback__)[-1]
                verdict = Verdict(name, Status.UNKNOWN,
                                  f"the checker itself failed ({type(error).__name__}: {error} at "
                                  f"{where.filename.rsplit('/', 1)[-1]}:{where.lineno}); the history cannot be judged")
            if history is not None:
                record_run(history, function.__name__, list(args[1:]), dict(kwargs), seen, verdict)
            return verdict

        known = CHECKERS.get(function.__name__)
        if known is not None and known.__module__ != function.__module__:  # `quorum analyze` calls checkers by name
            raise ValueError(f"two checkers named {function.__name__}: {known.__module__} and {function.__module__}")
        CHECKERS[function.__name__] = guarded
        return guarded

    return wrap


def _fields(value: Any) -> dict:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"{type(value).__name__} is not a value a History holds")


def comparable(value: Any) -> Any:
    """A value as the History keeps it (JSON: tuples become lists, other objects their text)."""
    return json.loads(json.dumps(value, default=str))


def record_run(history: History, function: str, positional: list, arguments: dict[str, Any], seen: tuple[int, int],
               verdict: Verdict) -> None:
    """One CHECKED event; arguments JSON cannot hold exactly are kept as None, and the run cannot be re-judged."""
    try:  # a dataclass argument (an observation such as a MarkerWrite) as its fields
        recorded = json.loads(json.dumps({"positional": positional, "arguments": arguments}, default=_fields))
    except (TypeError, ValueError):
        recorded = None
    history.event(CHECKED, checker=function, call=recorded, ops=seen[0], events=seen[1],
                  status=verdict.status.value, figures=comparable(verdict.figures))


def fmt(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds:.2f}s"
