"""A node's containerd, read and signalled with its own `ctr` in the CRI namespace (k8s.io), through the target's
exec: the containers of pods, whether or not the API is there to list them. The kubelet labels every container it
creates with its name and its pod's namespace (io.kubernetes.container.name, io.kubernetes.pod.namespace)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from harness.target.pods import KUBERNETES_NAME

if TYPE_CHECKING:
    from harness.target.protocol import Target

CTR = ["ctr", "--namespace", "k8s.io"]
SEPARATOR = "--quorum-tasks--"
CONTAINER_ID = re.compile(r"^[0-9a-f]{64}$")


def _label(value: str, what: str) -> str:
    if not KUBERNETES_NAME.match(value):
        raise ValueError(f"{what} {value!r} is not a Kubernetes name (lower-case letters, digits and '-')")
    return value


def running(target: "Target", host: str, namespace: str, container: str) -> list[str]:
    """Ids of the running containers named `container` in `namespace`'s pods on `host`."""
    selector = (f'labels."io.kubernetes.container.name"=={_label(container, "container")},'
                f'labels."io.kubernetes.pod.namespace"=={_label(namespace, "namespace")}')
    ctr = " ".join(CTR)
    # one exec for both listings (a fault polls this while the node boots; each exec costs ~0.1-0.5 s there); the
    # names in the selector are checked labels, so single quotes hold it together
    listed = target.exec(host, ["sh", "-c", f"{ctr} containers list --quiet '{selector}' && echo {SEPARATOR} && "
                                            f"{ctr} tasks list"])
    containers, _, tasks = listed.partition(f"{SEPARATOR}\n")
    ids = set(containers.split())
    # `tasks list`: ID, PID, STATUS; a container whose process exited stays listed until the kubelet removes it
    rows = (line.split() for line in tasks.splitlines()[1:])
    return sorted(t[0] for t in rows if len(t) == 3 and t[0] in ids and t[2] == "RUNNING")


def kill(target: "Target", host: str, container_id: str) -> None:
    """SIGKILL every process of the container (--all: not only its first, so none is left behind)."""
    if not CONTAINER_ID.match(container_id):
        raise ValueError(f"{container_id!r} is not a container id (64 hex digits)")
    target.exec(host, [*CTR, "tasks", "kill", "--all", "--signal", "SIGKILL", container_id], check=False)
