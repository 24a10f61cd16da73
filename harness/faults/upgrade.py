"""A control-plane component run from another Kubernetes release: one step of a rolling upgrade (or of its
rollback). It refuses a step the version skew policy does not support before anything acts, and one whose new
binary does not take a flag the component runs with. Heal runs the configured release again."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.components.flags import flags_in_help
from harness.errors import FaultError
from harness.faults.component import ComponentFault, ModifyFlags
from harness.lifecycle.skew import FOLLOWERS, APISERVER, check_step
from harness.target.capabilities import Capability
from harness.target.protocol import Target
from harness.toolchain.versions import Version, kubernetes_version

CONTROL_PLANE = (APISERVER, *FOLLOWERS)


def control_plane_versions(target: Target) -> dict[str, Version]:
    """'<component>@<host>' -> the release it runs now, for every running apiserver, controller-manager and
    scheduler (one that is down is left out: it runs nothing)."""
    versions = {}
    for component in CONTROL_PLANE:
        for host in target.component_hosts(component):
            version = target.running_version(component, host)
            if version is not None:
                versions[f"{component}@{host}"] = version
    return versions


@dataclass
class Upgrade(ComponentFault):
    """Run `component` ('<component>@<host>') from release `to` with its configured flags, those of `replace`
    replaced or added (a release that renames a flag is upgraded with the new name)."""

    name = "upgrade"
    requires = (Capability.OVERRIDE_ARGS, Capability.RELEASES)
    to: str = ""
    replace: dict[str, str] = field(default_factory=dict)

    def plan(self, target: Target) -> None:
        component, host = self.where()
        if component not in CONTROL_PLANE:
            raise FaultError(f"{component} is not a component an upgrade changes",
                             f"name one of {', '.join(CONTROL_PLANE)} as <component>@<host>")
        to = kubernetes_version(self.to)
        versions = control_plane_versions(target)
        if self.component not in versions:
            raise FaultError(f"{self.component} is not running, so its release cannot be told",
                             "check `quorum status`")
        check_step(versions, self.component, to)
        binary = target.release_binary(component, to)
        configured = target.command_line(component, host)
        argv = ModifyFlags(component=self.component, replace=self.replace).modified(configured)
        known = flags_in_help(target.exec(host, [binary, "--help"], check=False, timeout=60.0))
        unknown = sorted({arg.split("=")[0] for arg in argv[1:] if arg.startswith("--")} - known)
        if unknown:
            raise FaultError(f"{component} {to} takes no {', '.join(unknown)}, which {self.component} runs with",
                             "change those flags first (a flag change is a step of its own), then upgrade")
        self.captured.update(argv=[binary, *argv[1:]], before=str(versions[self.component]))

    def act(self, target: Target) -> None:
        target.override_command_line(*self.where(), self.captured["argv"])

    def undo(self, target: Target) -> None:
        target.restore_command_line(*self.where())
