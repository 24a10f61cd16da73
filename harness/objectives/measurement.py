"""A measured figure, as a scenario records it in its History (a `measure` event) beside its verdicts: its stable
name (harness/objectives/catalog.py), the value, what it is of, and the bound the cluster's own configuration
promises for it (the scenario's second check)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from harness.checkers.verdict import Verdict
from harness.objectives.catalog import out_of_range, spec


@dataclass(frozen=True)
class Measurement:
    name: str
    value: float | None  # None: what was measured did not happen within the observation
    subject: str | None = None  # a component, an SLO class: for measures kept per subject
    bound: float | None = None  # what the cluster's configuration promises
    bound_source: str = ""

    def __post_init__(self) -> None:
        measure = spec(self.name)
        if measure.subjects and self.subject not in measure.subjects:
            raise ValueError(f"{self.name} is kept per {', '.join(measure.subjects)}, not {self.subject!r}")
        if self.bound is not None and not self.bound_source and measure.bound is not None:
            object.__setattr__(self, "bound_source", measure.bound.source)  # how the measure's own bound derives

    @property
    def label(self) -> str:
        return f"{self.name}[{self.subject}]" if self.subject else self.name

    def record(self) -> dict:
        return {key: value for key, value in asdict(self).items() if value not in (None, "") or key == "value"}

    @classmethod
    def from_record(cls, record: dict) -> "Measurement":
        """A measurement read back from a History: ValueError unless its name is a measure's, its subject text, and
        its value and bound finite numbers (not text, not yes or no) that the measure can take."""
        name, subject = record.get("name"), record.get("subject")
        if not isinstance(name, str) or (subject is not None and not isinstance(subject, str)):
            raise ValueError("a measure's name and subject must be text")
        spec(name)
        value, bound = _number(record.get("value"), name), _number(record.get("bound"), f"{name}'s bound")
        problem = out_of_range(name, value) if value is not None else None
        if problem:
            raise ValueError(problem)
        return cls(name, value, subject, bound, str(record.get("bound_source", "")))


def _number(value: object, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} is {value!r}, not a number")
    if not math.isfinite(value):
        raise ValueError(f"{what} is {value}, not a finite number")
    return float(value)


def from_verdict(name: str, verdict: Verdict, figure: str, *, subject: str | None = None,
                 bound: float | None = None, bound_source: str = "") -> Measurement:
    """The figure a checker's verdict carries, under the measure's stable name."""
    value = verdict.figures.get(figure)
    return Measurement(name, None if value is None else float(value), subject, bound, bound_source)
