"""What a target with a self-hosted control plane (Capability.SELF_HOSTED) offers beyond the API: the way back when
a change to the self-hosted apiserver took the API away. Part of the Target (harness/target/protocol.py)."""

from __future__ import annotations

from contextlib import AbstractContextManager

from harness.errors import Unsupported


class SelfHostedRecovery:
    def bootstrap_apiserver(self) -> AbstractContextManager[None]:
        """While the block runs, the bootstrap apiserver (a static pod, as at the cluster's first start) serves
        beside the self-hosted one on every control-plane node: the API is back whatever the self-hosted workload's
        spec says, so it can be repaired through the API. Ends with the bootstrap apiserver gone again."""
        raise Unsupported(f"the {type(self).backend_name()} backend has no bootstrap apiserver to bring back",
                          "repair the apiserver's workload by hand (bootkube's recovery: its static manifest back in "
                          "the kubelet's directory)")
