"""Every fault in harness/faults is used by at least one scenario (issue #59): a fault no scenario injects is a
capability nothing judges. The faults that no scenario uses yet are listed here with the issue that gives them one;
the register only shrinks (a listed fault that a scenario now uses fails the test too)."""

import re
from pathlib import Path

import harness.faults as faults
from harness.faults.base import Fault

ROOT = Path(__file__).resolve().parents[2]
# where a scenario's faults are written: the scenarios, and the procedures they call (rolling changes, power loss,
# upgrades, rotations, scaling)
USERS = ("scenarios", "harness/scenario", "harness/lifecycle")
ONE_WAY = "Partition(symmetric=False)"

UNUSED = {
    "PacketLoss": "#59: packet loss on one controller's link",
    "Latency": "#59: added latency on one controller's link",
    "NodeKill": "#59: a docker host killed and restarted",
    "NodePause": "#59: a docker host paused",
    "NodeDisconnect": "#59: a docker host's interface removed",
    "IsolateLeaseHolder": "#59: leader-election tuning, the lease holder cut off",
    ONE_WAY: "#59: a one-way partition of the etcd leader, and of an apiserver from etcd",
}


def _sources() -> str:
    return "\n".join(path.read_text() for folder in USERS for path in sorted((ROOT / folder).rglob("*.py")))


def used_faults() -> dict[str, bool]:
    """Each fault class harness.faults exports (and the one-way partition, a mode of Partition): whether a scenario,
    or a procedure a scenario runs, constructs it."""
    sources = _sources()
    names = [name for name in faults.__all__
             if isinstance(getattr(faults, name), type) and issubclass(getattr(faults, name), Fault)
             and getattr(faults, name) is not Fault]
    used = {name: re.search(rf"\b{name}\(", sources) is not None for name in names}
    used[ONE_WAY] = re.search(r"\bPartition\([^)]*symmetric\s*=\s*False", sources) is not None
    return used


def test_every_fault_is_used_by_a_scenario_or_listed_with_the_issue_that_gives_it_one():
    used = used_faults()
    assert len(used) > 15, sorted(used)  # the exports were read, not an empty list
    unlisted = sorted(name for name, is_used in used.items() if not is_used and name not in UNUSED)
    assert not unlisted, f"faults no scenario uses (write a scenario, or list them in UNUSED with an issue): {unlisted}"
    stale = sorted(name for name in UNUSED if used.get(name, True))
    assert not stale, f"listed as unused, but a scenario uses them now (or they are gone): remove {stale} from UNUSED"
