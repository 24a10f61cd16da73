"""The result of a checker: pass/fail/unknown, the figures, and an explanation naming the evidence."""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ParamSpec

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


def checker(name: str) -> Callable[[Callable[P, Verdict]], Callable[P, Verdict]]:
    """An exception inside a checker gives unknown, never pass."""

    def wrap(function: Callable[P, Verdict]) -> Callable[P, Verdict]:
        @functools.wraps(function)
        def guarded(*args: P.args, **kwargs: P.kwargs) -> Verdict:
            try:
                return function(*args, **kwargs)
            except Exception as error:  # noqa: BLE001 - the point is to turn any failure into unknown
                where = traceback.extract_tb(error.__traceback__)[-1]
                return Verdict(name, Status.UNKNOWN,
                               f"the checker itself failed ({type(error).__name__}: {error} at "
                               f"{where.filename.rsplit('/', 1)[-1]}:{where.lineno}); the history cannot be judged")
        return guarded

    return wrap


def fmt(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds:.2f}s"
