"""`quorum heal`: undo what faults of a killed harness left behind.

First the journal: every fault begun and not healed is rebuilt from its record and healed. Then a sweep that needs
no journal (a harness can die between acting and journaling only if the journal write itself failed): every
Quorum-tagged firewall rule and every shaped link on every host, then what only the target knows (held or
overridden components, stopped processes, held manifests). Last, through the API, the work monitors' namespaces a
dead harness left (harness/monitors/work_leftovers.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.errors import QuorumError, UnsafeToRestore
from harness.faults.base import Fault
from harness.faults.journal import Journal
from harness.target.capabilities import Capability
from harness.target.protocol import Target


@dataclass
class HealReport:
    healed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    left_alone: list[str] = field(default_factory=list)  # faults a live harness owns, and why they were not touched
    kept: set[str] = field(default_factory=set)  # components a heal found unsafe to force back (UnsafeToRestore)


def heal_leftovers(target: "Target") -> HealReport:
    """Heal faults journaled by a harness that died (what `quorum heal` does for each run): every entry is tried,
    whatever happens to the others, and every one that could not be healed is reported with why."""
    journal = Journal(target.run_dir)
    active, unreadable = journal.read()
    report = HealReport(failed=list(unreadable))
    for record in reversed(active):  # newest first, as the Nemesis heals
        try:
            fault = Fault.from_record(record)
        except QuorumError as error:
            report.failed.append(error.problem)
            continue
        try:
            fault.undo(target)
        except UnsafeToRestore as error:
            report.failed.append(f"{fault.describe()}: {error}")
            report.kept.add(error.component)
            continue
        except Exception as error:  # noqa: BLE001 - the other faults must still be healed
            report.failed.append(f"{fault.describe()}: {error}")
            continue
        journal.healed(fault)
        report.healed.append(fault.describe())
        try:
            target.forget_fault(fault)
        except QuorumError as error:
            report.failed.append(f"{fault.describe()} is healed, but its record stays where the target keeps one: "
                                 f"{error.problem}")
    return report


def sweep(target: Target, keep: set[str] | None = None) -> list[str]:
    """Network rules and shaping on every host, then the target's own sweep, which leaves the components in `keep`
    as they are."""
    done = []
    for host in target.hosts():
        try:
            if Capability.NETWORK in target.capabilities() and (removed := target.network.heal(host)):
                done.append(f"{removed} fault rules on {host}")
            if Capability.SHAPE in target.capabilities() and target.network.restore_link(host):
                done.append(f"shaping on {host}")
        except QuorumError as error:  # a host that is down: the others are still swept
            done.append(f"could not sweep {host}: {error}")
    return done + target.sweep(keep=frozenset(keep or ()))


def heal_cluster(target: Target) -> HealReport:
    """The journal's faults, then the sweep (which runs whatever the journal's heals did); what was healed and
    what could not be."""
    report = heal_leftovers(target)
    report.healed = [f"healed {d}" for d in report.healed]
    try:
        report.healed += sweep(target, report.kept)
    except QuorumError as error:
        report.failed.append(f"the sweep stopped: {error}")
    return report


def heal_work_leftovers(target: Target, report: HealReport, force: bool = False) -> None:
    """The work monitors' namespaces whose harness is gone, deleted; into the report. An API that cannot list them
    (a cluster that is down) leaves them for the next heal, said as left alone."""
    from harness.monitors.work_leftovers import sweep_work_namespaces

    leftovers = sweep_work_namespaces(target, force)
    report.healed += leftovers.deleted
    report.left_alone += leftovers.left_alone
    report.failed += leftovers.failed
    if leftovers.problem:
        report.left_alone.append(f"{leftovers.problem} (the next heal tries again)")
