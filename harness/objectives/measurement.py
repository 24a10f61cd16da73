"""A measured figure, as a scenario records it in its History (a `measure` event) beside its verdicts: its stable
name (harness/objectives/catalog.py), the value, what it is of, and the bound the cluster's own configuration
promises for it (the scenario's second check)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from harness.checkers.verdict import Verdict
from harness.objectives.catalog import spec


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

    @property
    def label(self) -> str:
        return f"{self.name}[{self.subject}]" if self.subject else self.name

    def record(self) -> dict:
        return {key: value for key, value in asdict(self).items() if value not in (None, "") or key == "value"}

    @classmethod
    def from_record(cls, record: dict) -> "Measurement":
        value = record.get("value")
        bound = record.get("bound")
        return cls(str(record["name"]), None if value is None else float(value), record.get("subject"),
                   None if bound is None else float(bound), str(record.get("bound_source", "")))


def from_verdict(name: str, verdict: Verdict, figure: str, *, subject: str | None = None,
                 bound: float | None = None, bound_source: str = "") -> Measurement:
    """The figure a checker's verdict carries, under the measure's stable name."""
    value = verdict.figures.get(figure)
    return Measurement(name, None if value is None else float(value), subject, bound, bound_source)
