"""Kubernetes' version skew policy as a check over one planned step: refused before anything acts, with the rule
named. The rules and their wording are the policy's (docs/lifecycle.md quotes them with the source); a step is
judged by the state it would leave the control plane in."""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import FaultError
from harness.toolchain.versions import Version
from harness.topology import Component

APISERVER = Component.APISERVER.value
FOLLOWERS = (Component.CONTROLLER_MANAGER.value, Component.SCHEDULER.value)  # each talks to an apiserver
# the order the policy's "supported component upgrade order" requires; a rollback runs it backwards
UPGRADE_ORDER = (APISERVER, *FOLLOWERS)


@dataclass(frozen=True)
class SkewRule:
    name: str
    says: str  # the policy's words (kubernetes.io/releases/version-skew-policy/)


APISERVER_SKEW = SkewRule("apiserver-ha-skew",
                          "the newest and oldest kube-apiserver instances must be within one minor version")
NOT_NEWER = SkewRule("controller-not-newer-than-apiserver",
                     "kube-controller-manager and kube-scheduler must not be newer than the kube-apiserver "
                     "instances they communicate with")
ONE_OLDER = SkewRule("controller-at-most-one-minor-older",
                     "kube-controller-manager and kube-scheduler may be up to one minor version older than "
                     "kube-apiserver")
NO_SKIPPED_MINOR = SkewRule("no-skipped-minor",
                            "kube-apiserver must not skip minor versions when upgrading, even in single-instance "
                            "clusters")
SAME_MAJOR = SkewRule("same-major", "Kubernetes versions are 1.y.z: a change of major version is not a release step")


class SkewViolation(FaultError):
    """A planned step the version skew policy does not support."""

    def __init__(self, rule: SkewRule, detail: str) -> None:
        self.rule = rule
        super().__init__(f"version skew policy, rule {rule.name} ({rule.says}): {detail}",
                         "change one minor version at a time, apiservers first on the way up and last on the way "
                         "down (docs/lifecycle.md)")


def _component(component_id: str) -> str:
    return component_id.partition("@")[0]


@dataclass(frozen=True)
class Violation:
    rule: SkewRule
    subject: str  # the component id, or "kube-apiserver" for the apiservers' skew among themselves
    detail: str


def violations(versions: dict[str, Version], talks_to: dict[str, list[str]] | None = None) -> list[Violation]:
    """What a control plane at `versions` ('<component>@<host>' -> version) breaks, if anything. `talks_to`: the
    hosts whose apiserver a controller-manager or scheduler uses ('<component>@<host>' -> hosts), for one that uses
    only some (kubeadm's: its own node's); one not named there uses every apiserver (a load balancer's endpoint).
    A controller whose apiservers are all down at that moment talks to none, and no rule of theirs applies."""
    found: list[Violation] = []
    apiservers = {cid: v for cid, v in versions.items() if _component(cid) == APISERVER}
    if not apiservers:
        return found
    oldest = min(apiservers.values())
    newest = max(apiservers.values())
    if newest.minor - oldest.minor > 1:
        found.append(Violation(APISERVER_SKEW, APISERVER, f"apiservers at {oldest} and {newest}"))
    for cid, version in sorted(versions.items()):
        if _component(cid) not in FOLLOWERS:
            continue
        hosts = (talks_to or {}).get(cid)
        used = list(apiservers.values()) if hosts is None else \
            [v for a, v in apiservers.items() if a.partition("@")[2] in hosts]
        if not used:
            continue
        if version.minor > min(used).minor:
            found.append(Violation(NOT_NEWER, cid, f"{cid} at {version} with an apiserver it uses at {min(used)}"))
        elif max(used).minor - version.minor > 1:
            found.append(Violation(ONE_OLDER, cid, f"{cid} at {version} with an apiserver it uses at {max(used)}"))
    return found


def check_step(versions: dict[str, Version], component_id: str, to: Version) -> None:
    """Refuse (SkewViolation) moving `component_id` from its version in `versions` to `to`: a step that skips a
    minor, or one that leaves the control plane outside the policy's skew. Skew the control plane had before the
    step is not the step's doing and is not held against it."""
    before = versions.get(component_id)
    if before is None:
        raise KeyError(f"{component_id} is not among the running components: {', '.join(sorted(versions))}")
    if to.major != before.major:
        raise SkewViolation(SAME_MAJOR, f"{component_id} from {before} to {to}")
    if abs(to.minor - before.minor) > 1:
        raise SkewViolation(NO_SKIPPED_MINOR, f"{component_id} from {before} to {to} crosses "
                                              f"{abs(to.minor - before.minor)} minor versions")
    already = {(v.rule, v.subject) for v in violations(versions)}
    for found in violations({**versions, component_id: to}):
        if (found.rule, found.subject) not in already:
            raise SkewViolation(found.rule, f"{component_id} to {to} would leave {found.detail}")


def upgrade_steps(component_ids: list[str]) -> list[str]:
    """The running components in the order an upgrade takes them: every apiserver, then every controller-manager,
    then every scheduler (hosts in the order given)."""
    return sorted(component_ids, key=lambda cid: UPGRADE_ORDER.index(_component(cid)))
