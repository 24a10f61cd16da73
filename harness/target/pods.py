"""What a target whose nodes run real kubelets (Capability.PODS) offers below the API: the containers the node's
runtime runs for pods, the API's or not (a static pod, a checkpoint started while the API is away). Part of the
Target (harness/target/protocol.py)."""

from __future__ import annotations

import re

from harness.errors import Unsupported

# a container's or a namespace's name (a DNS label): what pod_containers accepts, so none reaches a command line
# unchecked
KUBERNETES_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class PodContainers:
    def pod_containers(self, host: str, namespace: str, container: str) -> list[str]:
        """The ids of the running containers named `container` in pods of `namespace` on `host`, as its runtime
        reports them (so also while the API is down)."""
        raise Unsupported(f"the {type(self).backend_name()} backend does not reach a node's container runtime "
                          "(capability pods)", "use a kind topology")

    def kill_pod_container(self, host: str, container_id: str) -> None:
        """SIGKILL a container's processes on `host`; what follows is the kubelet's restart policy."""
        raise Unsupported(f"the {type(self).backend_name()} backend does not reach a node's container runtime "
                          "(capability pods)", "use a kind topology")
