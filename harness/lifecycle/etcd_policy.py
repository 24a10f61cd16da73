"""etcd's upgrade and downgrade rules as a check over one planned member step: refused before anything acts, with
the rule named. The rules and their wording are etcd's own (docs/lifecycle.md quotes them with the sources)."""

from __future__ import annotations

from harness.lifecycle.skew import SkewRule
from harness.errors import FaultError
from harness.toolchain.versions import Version

ETCD_SAME_MAJOR = SkewRule("etcd-same-major", "etcd releases are 3.y.z: a change of major version is not a release "
                                              "step")
ETCD_ONE_MINOR = SkewRule("etcd-one-minor-at-a-time",
                          "upgrading one minor version at a time (e.g. 3.5 - 3.6); upgrades that skip a minor version "
                          "are not supported")
ETCD_NOT_OLDER_THAN_CLUSTER = SkewRule(
    "etcd-not-older-than-cluster-version",
    "a member older than the cluster version cannot join the cluster: going back a minor after every member runs the "
    "new one needs the downgrade to be enabled first (etcdctl downgrade enable)")


class EtcdReleaseViolation(FaultError):
    """A planned etcd member step that etcd's upgrade or downgrade policy does not support."""

    def __init__(self, rule: SkewRule, detail: str) -> None:
        self.rule = rule
        super().__init__(f"etcd's upgrade policy, rule {rule.name} ({rule.says}): {detail}",
                         "move the members one minor version at a time, one member at a time (docs/lifecycle.md)")


def check_etcd_step(versions: dict[str, Version], host: str, to: Version, cluster_version: Version | None) -> None:
    """Refuse (EtcdReleaseViolation) running the member on `host` from release `to`, given every member's release
    (`versions`: host -> release) and the cluster version the members agreed on (None when none answered)."""
    before = versions.get(host)
    if before is None:
        raise KeyError(f"etcd@{host} is not among the running members: {', '.join(sorted(versions))}")
    if to.major != before.major:
        raise EtcdReleaseViolation(ETCD_SAME_MAJOR, f"etcd@{host} from {before} to {to}")
    oldest = min(versions.values())
    if to.minor - oldest.minor > 1:
        raise EtcdReleaseViolation(ETCD_ONE_MINOR, f"etcd@{host} to {to} with a member still at {oldest}")
    if cluster_version is not None and to.minor < cluster_version.minor:
        raise EtcdReleaseViolation(ETCD_NOT_OLDER_THAN_CLUSTER,
                                   f"etcd@{host} to {to} in a cluster at version {cluster_version.major}."
                                   f"{cluster_version.minor}")
