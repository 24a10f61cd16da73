"""A pod for the checkpointer to keep, with a secret volume, on a control-plane node: the secret-refresh scenario
changes the secret through the API and reads the node's copy of it, where a bootkube-style checkpointer keeps it
(checkpoint-secrets/<namespace>/<pod>/<secret>/<key>: harness/checkpointer/manifest.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from harness.checkpointer.manifest import CHECKPOINT, secret_dir
from harness.clients.kubeapi import ApiClient
from harness.errors import ClusterError
from harness.target.protocol import HostRole, Target
from harness.wait import until

NAMESPACE, NAME, KEY = "default", "quorum-checkpointed", "value"
PAUSE = "registry.k8s.io/pause:3.10"  # in every kind node image (no registry here); any image whose process waits


def _pod() -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": NAME, "namespace": NAMESPACE, "annotations": {CHECKPOINT: "true"}},
            "spec": {"nodeSelector": {"node-role.kubernetes.io/control-plane": ""},
                     "tolerations": [{"operator": "Exists"}], "automountServiceAccountToken": False,
                     "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "pause", "image": PAUSE, "imagePullPolicy": "IfNotPresent",
                                     "volumeMounts": [{"name": "secret", "mountPath": "/secret", "readOnly": True}]}],
                     "volumes": [{"name": "secret", "secret": {"secretName": NAME}}]}}


def _secret(value: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": NAME, "namespace": NAMESPACE},
            "stringData": {KEY: value}}


def _expect(response, codes: tuple[int, ...], doing: str) -> None:
    if response.status_code not in codes:
        raise ClusterError(f"{doing}: HTTP {response.status_code} {response.text[:300]}",
                           f"kubectl -n {NAMESPACE} get pod,secret {NAME} says what is there")


def _delete(api: ApiClient) -> None:
    for kind in ("pods", "secrets"):
        _expect(api.request("DELETE", f"/api/v1/namespaces/{NAMESPACE}/{kind}/{NAME}", {"gracePeriodSeconds": 0}),
                (200, 202, 404), f"deleting {kind[:-1]} {NAME}")
    if not until(lambda: api.request("GET", f"/api/v1/namespaces/{NAMESPACE}/pods/{NAME}").status_code == 404,
                 60.0, 0.5).held:
        raise ClusterError(f"pod {NAMESPACE}/{NAME} still there 60 s after its deletion",
                           f"kubectl -n {NAMESPACE} describe pod {NAME}")


@contextlib.contextmanager
def checkpointed_pod(api: ApiClient, value: str) -> Iterator[None]:
    """The secret (holding `value`) and the annotated pod that mounts it, removed again on exit (a leftover of a
    killed run first)."""
    _delete(api)
    try:
        _expect(api.request("POST", f"/api/v1/namespaces/{NAMESPACE}/secrets", _secret(value)), (201,),
                f"creating secret {NAME}")
        _expect(api.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", _pod()), (201,), f"creating pod {NAME}")
        yield
    finally:
        _delete(api)


def change(api: ApiClient, value: str) -> None:
    _expect(api.request("PUT", f"/api/v1/namespaces/{NAMESPACE}/secrets/{NAME}", _secret(value)), (200,),
            f"changing secret {NAME}")


def node_copies(cluster: Target) -> dict[str, str]:
    """Each control-plane host's copy of the secret's value ("" where it has none)."""
    path = f"{secret_dir(f'{NAMESPACE}/{NAME}', NAME)}/{KEY}"
    return {host: cluster.exec(host, ["cat", path], check=False) for host in cluster.hosts(HostRole.CONTROLLER)}
