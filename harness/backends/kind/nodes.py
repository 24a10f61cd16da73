"""The run's kind nodes as Docker sees them: which containers are nodes, and their addresses."""

from __future__ import annotations

import json
import subprocess

from harness.backends.docker.engine import DOCKER_CLIENT, client
from harness.backends.kind.cluster import KIND_LABEL

ROLE_LABEL = "io.x-k8s.kind.role"


def roles(kind_name: str) -> dict[str, str]:
    """Short name -> kind role ("control-plane", "worker", "external-load-balancer") of each of the cluster's
    containers, stopped ones too."""
    return {container.name.removeprefix(f"{kind_name}-"): container.config.labels.get(ROLE_LABEL, "")
            for container in client().container.list(all=True, filters=[("label", f"{KIND_LABEL}={kind_name}")])}


def addresses(containers: list[str], network: str) -> list[str | None] | None:
    """Each container's address on `network` (None while it is stopped), read with one `docker container inspect`
    (python-on-whales inspects one container per call, and again once its cached result has aged); None when the
    inspect fails, e.g. for a missing container."""
    try:
        result = subprocess.run([DOCKER_CLIENT, "container", "inspect", "--format", "{{json .NetworkSettings.Networks}}",
                                 *containers], capture_output=True, text=True, timeout=30)
        lines = result.stdout.splitlines()
        if result.returncode != 0 or len(lines) != len(containers):
            return None
        return [((json.loads(line) or {}).get(network) or {}).get("IPAddress") or None for line in lines]
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
