"""One etcd member run from another etcd release: one step of a member-by-member etcd upgrade. It refuses a step
etcd's upgrade policy does not support before anything acts, and one whose new binary does not take a flag the
member runs with. Heal runs the configured release again; once every member ran the new minor, the cluster's
version has moved up with it, and heal first goes back through etcd's downgrade procedure (enable the downgrade,
wait until every member keeps its data in the old schema), as etcd.io/docs/v3.6/downgrades/downgrade_3_6 says."""

from __future__ import annotations

from dataclasses import dataclass

import requests

from harness.components.flags import flags_in_help
from harness.errors import FaultError, UnsafeToRestore
from harness.faults.base import wait_for
from harness.faults.component import ComponentFault
from harness.lifecycle.etcd_policy import check_etcd_step
from harness.target.capabilities import Capability
from harness.target.protocol import HostRole, Target
from harness.toolchain.versions import Version, etcd_version

ETCD = "etcd"
DOWNGRADE_MIGRATION_S = 30.0  # "usually happens very fast" (the procedure's words); bounded so heal never hangs
MEMBER_READY_S = 60.0
DOWNGRADE_HEALTHY_S = 20.0  # a member restarting is healthy again in ~1-5 s (docs/lifecycle.md); a down one is not


def member_versions(target: Target) -> dict[str, Version]:
    """host -> the release its etcd member runs now, for every running member."""
    versions = {}
    for host in target.hosts(HostRole.ETCD):
        version = target.running_version(ETCD, host)
        if version is not None:
            versions[host] = version
    return versions


def cluster_version(target: Target) -> Version | None:
    """The version the members agreed on (GET /version's etcdcluster), from the first member that answers."""
    for host in target.hosts(HostRole.ETCD):
        answer = target.etcd.versions(target.etcd_url(host))
        if answer and answer[1] and answer[1] != "not_decided":
            return Version.parse(answer[1])
    return None


def downgrade(target: Target, to: Version) -> None:
    """etcd's downgrade procedure up to the binaries: every member healthy (one restarting gets its time), a
    downgrade to `to`'s minor validated and enabled (unless one already is), then every member's storage in that
    schema. FaultError when any of it does not happen: the old binaries must not go back then."""
    minor, hosts = f"{to.major}.{to.minor}", target.hosts(HostRole.ETCD)
    wait_for(lambda: all(target.health.component_healthy(ETCD, h) for h in hosts), DOWNGRADE_HEALTHY_S,
             what="every etcd member healthy before a downgrade")
    statuses = [s for h in hosts if (s := target.etcd.status(target.etcd_url(h)))]
    if not statuses:
        raise FaultError("no etcd member answers, so the downgrade cannot be enabled", "quorum status shows them")
    if not statuses[0].downgrade_target.startswith(f"{minor}."):
        for action in ("VALIDATE", "ENABLE"):
            try:
                target.etcd.post(statuses[0].url, "/v3/maintenance/downgrade", {"action": action, "version": minor},
                                 timeout=10.0)
            except requests.RequestException as error:
                raise FaultError(f"etcd refused to {action.lower()} a downgrade to {minor}: {error}") from None

    def migrated() -> bool:
        statuses = [target.etcd.status(target.etcd_url(h)) for h in hosts]
        return all(s is not None and s.storage_version.startswith(f"{minor}.") for s in statuses)
    wait_for(migrated, DOWNGRADE_MIGRATION_S, what=f"every etcd member's storage to migrate to {minor}")


@dataclass
class EtcdUpgrade(ComponentFault):
    """Run the etcd member `component` ('etcd@<host>') from etcd release `to`, with its configured flags."""

    name = "etcd-upgrade"
    requires = (Capability.OVERRIDE_ARGS, Capability.RELEASES)
    to: str = ""

    def plan(self, target: Target) -> None:
        component, host = self.where()
        if component != ETCD:
            raise FaultError(f"{component} is not an etcd member", "name one as etcd@<host>")
        to = etcd_version(self.to)
        versions = member_versions(target)
        if host not in versions:
            raise FaultError(f"{self.component} is not running, so its release cannot be told", "check `quorum status`")
        check_etcd_step(versions, host, to, cluster_version(target))
        binary = target.release_binary(ETCD, to)
        configured = target.command_line(ETCD, host)
        known = flags_in_help(target.exec(host, [binary, "--help"], check=False, timeout=60.0))
        unknown = sorted({arg.split("=")[0] for arg in configured[1:] if arg.startswith("--")} - known)
        if unknown:
            raise FaultError(f"etcd {to} takes no {', '.join(unknown)}, which {self.component} runs with",
                             "change those flags first, then upgrade")
        self.captured.update(argv=[binary, *configured[1:]], before=str(versions[host]))

    def act(self, target: Target) -> None:
        target.override_command_line(ETCD, self.where()[1], self.captured["argv"])

    def undo(self, target: Target) -> None:
        host = self.where()[1]
        before = self.captured.get("before")
        agreed = cluster_version(target)
        if before and agreed is not None and agreed.minor > Version.parse(before).minor:
            try:
                downgrade(target, Version.parse(before))
            except FaultError as error:
                # etcd <= 3.5 refuses to start on data whose cluster version is newer ("invalid downgrade"): forced
                # back, the member would crash-loop, and every member forced back would take the cluster down
                raise UnsafeToRestore(
                    self.component, f"{error.problem}; {self.component} is left as it is: its old release refuses a "
                    f"cluster at version {agreed.major}.{agreed.minor}", "make every etcd member healthy (quorum "
                    "status), then quorum heal again; a member that cannot be is removed and added back, or the "
                    "cluster restored from the snapshot taken before the upgrade (docs/lifecycle.md)") from None
        target.restore_command_line(ETCD, host)
        wait_for(lambda: target.health.component_healthy(ETCD, host), MEMBER_READY_S, what=f"{self.component} healthy "
                 "on its configured release")
