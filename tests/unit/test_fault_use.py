"""Every fault of harness/faults is injected by some scenario, or is named in tests/known_gaps.py's register of the
faults no scenario uses yet (issue #59): a fault nothing judges is a capability without a verdict."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import harness.faults
from harness.faults.base import Fault
from tests.known_gaps import FAULTS_NO_SCENARIO_USES

ROOT = Path(__file__).resolve().parents[2]
# where a scenario's faults are written: the suites, and the helpers they call to inject one (a rolling change, a
# power loss, an upgrade's or a rotation's steps)
SCENARIO_CODE = ("scenarios", "harness/scenario", "harness/lifecycle")


def faults() -> dict[str, type[Fault]]:
    """Each fault of harness/faults by its `name`: the classes that name themselves (not the bases they share)."""
    found: dict[str, type[Fault]] = {}
    for module in pkgutil.iter_modules(harness.faults.__path__):
        loaded = importlib.import_module(f"harness.faults.{module.name}")
        for cls in vars(loaded).values():
            if (inspect.isclass(cls) and issubclass(cls, Fault) and cls is not Fault
                    and cls.__module__ == loaded.__name__ and "name" in vars(cls)):
                found[cls.name] = cls
    return found


def used_by_scenarios(fault: type[Fault]) -> list[str]:
    """The files of scenario code that name the fault's class."""
    pattern = re.compile(rf"\b{fault.__name__}\b")
    return sorted(str(path.relative_to(ROOT)) for where in SCENARIO_CODE for path in (ROOT / where).rglob("*.py")
                  if pattern.search(path.read_text()))


def test_every_fault_is_injected_by_a_scenario_or_registered_as_unused():
    unused = {name for name, cls in faults().items() if not used_by_scenarios(cls)}
    unregistered = sorted(unused - set(FAULTS_NO_SCENARIO_USES))
    assert not unregistered, (f"no scenario injects {unregistered}: write the scenario that judges the cluster under "
                              "it, or register why not in tests/known_gaps.py (FAULTS_NO_SCENARIO_USES)")
    now_used = sorted(set(FAULTS_NO_SCENARIO_USES) - unused)
    assert not now_used, f"{now_used} registered as unused, but a scenario injects it now (or it is gone): remove it"


def test_the_scan_finds_a_fault_where_a_scenario_injects_it():
    """The scan itself: the leader-election suite's kill is found, and the register's faults are real ones."""
    everything = faults()
    assert "scenarios/leader_election/test_leader_election.py" in used_by_scenarios(everything["kill"])
    assert set(FAULTS_NO_SCENARIO_USES) <= set(everything)
