"""`quorum heal --target FILE`: undo what a harness left on a cluster Quorum did not build, from any machine with the
inventory, its key and this checkout. First the records on the hosts (harness/backends/remote/host_journal.py), each
fault rebuilt and undone unless its owner still runs (on another machine, unless --force says that harness is gone);
then, when no live owner remains, the sweep of Quorum's tags and files on every host, the work monitors'
namespaces (each left alone while its own harness may still run), and the hollow nodes whose kwok controller is gone
(harness/remote/hollow_fleet.py)."""

from __future__ import annotations

from harness.backends.remote import host_journal
from harness.backends.remote.target import RemoteTarget
from harness.errors import QuorumError
from harness.faults.base import Fault
from harness.faults.sweep import HealReport, heal_work_leftovers, sweep
from harness.remote import hollow_fleet


def heal_hosts(target: RemoteTarget, force: bool = False) -> HealReport:
    entries, problems = host_journal.read(target)
    report = HealReport(failed=problems)
    for entry in sorted(entries, key=lambda e: e.wall, reverse=True):  # newest first, as the Nemesis heals
        alive = entry.owner.alive()
        owner = f"pid {entry.owner.pid} ({entry.owner.command[:80]})"
        if alive or (alive is None and not force):
            where = "on this machine, still running" if alive else f"on machine {entry.owner.machine[:12]}"
            report.left_alone.append(f"{entry.fault.get('name')} (fault {entry.id}, run {entry.run_id}) belongs to "
                                     f"{owner} {where}" + ("" if alive else
                                                           ": --force heals it once that harness is gone"))
            continue
        try:
            fault = Fault.from_record(entry.fault)
            fault.undo(target)
            host_journal.forget(target, entry.id, entry.hosts)
        except Exception as error:  # noqa: BLE001 - the other faults must still be healed
            report.failed.append(f"fault {entry.id} of run {entry.run_id}: {error}")
            continue
        report.healed.append(f"healed {fault.describe()} (run {entry.run_id}, {owner})")
    if report.left_alone:
        report.left_alone.append("the sweep of Quorum's rules and files did not run: it would undo the live faults too")
        return report
    try:
        report.healed += sweep(target)
    except QuorumError as error:
        report.failed.append(f"the sweep stopped: {error}")
    heal_work_leftovers(target, report, force)
    hollow = hollow_fleet.sweep(target.api, force)
    report.healed += hollow.deleted
    report.left_alone += hollow.left_alone
    report.failed += hollow.failed
    return report
