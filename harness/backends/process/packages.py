"""The package manager of a host Quorum built (process and docker backends): another Kubernetes release of a
control-plane component installed on one host, the way `apt install kube-apiserver=1.35.4` and a restart do it on a
host a team runs. Quorum's hosts have no package manager of their own, so this is theirs, and a team's procedure
(docs/lifecycle.md, "Your own procedure") upgrades them one host at a time with `quorum install`.

An install is configuration, not a fault: it is recorded in the run directory (installed.json), every later start
of the component runs it, nothing heals it and `quorum heal` leaves it; a later install changes it again. Nothing
here checks the version skew policy or the order of the steps, as no package manager does: the change's verdicts
judge what the procedure did (harness/checkers/change.py)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import FaultError
from harness.lifecycle.skew import APISERVER, FOLLOWERS
from harness.target.protocol import component_name
from harness.toolchain.versions import Version

if TYPE_CHECKING:
    from harness.backends.process.target import ProcessTarget

CHANGED = (APISERVER, *FOLLOWERS)  # what an install may change: etcd keeps its own release (its own upgrade)
INSTALLED = "installed.json"  # '<component>@<host>' -> the release installed there, over the topology's


def installed_releases(run_dir: Path) -> dict[str, Version]:
    """The releases installed over the topology's in this run, by component id."""
    try:
        recorded = json.loads((Path(run_dir) / INSTALLED).read_text())
    except FileNotFoundError:
        return {}
    return {cid: Version.parse(release) for cid, release in recorded.items()}


def install_release(target: "ProcessTarget", component: str, host: str, release: Version) -> str:
    """Configure `component` on `host` to run `release` from now on and restart it there (SIGTERM: its own graceful
    stop, as a package's restart does); the binary it runs. Refused before anything changes when the component is
    not a control-plane one, runs nowhere on `host`, or the release is not built."""
    name = component_name(component)
    if name not in CHANGED:
        raise FaultError(f"{name} is not a component `quorum install` changes", f"name one of {', '.join(CHANGED)}")
    hosts = target.component_hosts(name)
    if host not in hosts:
        raise FaultError(f"{name} does not run on {host!r}", f"{name} runs on {', '.join(hosts) or 'no host'}")
    binary = target.release_binary(name, release)  # a ToolchainError naming the install command when not built
    recorded = {cid: str(version) for cid, version in installed_releases(target.run_dir).items()}
    recorded[f"{name}@{host}"] = str(release)
    temporary = target.run_dir / f"{INSTALLED}.tmp"
    temporary.write_text(json.dumps(recorded, indent=1, sort_keys=True))
    os.replace(temporary, target.run_dir / INSTALLED)  # read by other sessions' targets: never half-written
    control = target.control(f"{name}@{host}")
    dataclasses.replace(control.spec(), argv=[binary, *control.spec().argv[1:]]).save(control.dir)
    target.terminate(name, host)  # its keeper starts it again, on the new binary
    if not control.held():
        control.kick()
    return binary
