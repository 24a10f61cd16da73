"""Quorum's pod checkpointer (harness/checkpointer/) on a self-hosted kind cluster: a DaemonSet on the control-plane
nodes, itself checkpointed, that reads the API as its node's kubelet and the runtime through crictl.
What it does and why: docs/checkpointer.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.backends.kind import self_hosted
from harness.checkpointer.manifest import ACTIVE, CHECKPOINT, CHECKPOINT_OF, INACTIVE
from harness.checkpointer.manifest import CONFIG_MAPS as CHECKPOINT_CONFIG_MAPS
from harness.checkpointer.manifest import SECRETS as CHECKPOINT_SECRETS
from harness.clients.checkpoints import pod_ready
from harness.errors import ClusterError

if TYPE_CHECKING:
    from harness.backends.kind.target import KindTarget
    from harness.backends.kind.topology import KindDefects

NAME = "quorum-checkpointer"
# host paths the checkpointer needs: the kubelet's directories, its credentials and the runtime's socket
HOST_PATHS = {"kubernetes": ("/etc/kubernetes", "Directory", False),
              "kubelet-pki": ("/var/lib/kubelet/pki", "Directory", True),
              "containerd": ("/run/containerd", "Directory", False),
              "lock": ("/var/run/lock", "DirectoryOrCreate", False)}


def _env() -> list[dict]:
    fields = {"NODE_NAME": "spec.nodeName", "POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace",
              # set only in its checkpoint, which then knows which parent it stands for
              "CHECKPOINT_OF": f"metadata.annotations['{CHECKPOINT_OF}']"}
    return [{"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}} for name, path in fields.items()]


def defect_args(defects: "KindDefects") -> list[str]:
    """The checkpointer's arguments for a broken twin's defects (none for a sound cluster)."""
    flags = {"--never-collect": defects.checkpointer_never_collects,
             "--never-refresh": defects.checkpointer_never_refreshes,
             "--presence-lock": defects.checkpointer_presence_lock}
    return [flag for flag, defect in flags.items() if defect]


def daemonset(image: str, args: list[str] | None = None) -> dict:
    """`args`: a broken twin's (defect_args)."""
    labels = {self_hosted.LABEL: NAME, "tier": "control-plane"}
    container = {"name": "checkpointer", "image": image, "imagePullPolicy": "Never",  # no registry: kind load
                 "args": list(args or []), "env": _env(), "securityContext": {"privileged": True},
                 "volumeMounts": [{"name": name, "mountPath": path, "readOnly": read_only}
                                  for name, (path, _, read_only) in HOST_PATHS.items()]}
    template = {"metadata": {"labels": labels, "annotations": {CHECKPOINT: "true"}},
                "spec": {"hostNetwork": True, "priorityClassName": "system-node-critical",
                         "nodeSelector": {"node-role.kubernetes.io/control-plane": ""},
                         "tolerations": [{"operator": "Exists"}], "automountServiceAccountToken": False,
                         "terminationGracePeriodSeconds": 5, "containers": [container],
                         "volumes": [{"name": name, "hostPath": {"path": path, "type": kind}}
                                     for name, (path, kind, _) in HOST_PATHS.items()]}}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": NAME, "namespace": "kube-system", "labels": {self_hosted.LABEL: NAME}},
            "spec": {"selector": {"matchLabels": {self_hosted.LABEL: NAME}}, "template": template,
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}}}


def checkpoints(cluster: "KindTarget", node: str) -> dict[str, set[str]]:
    """The checkpoint files on a node: {"active": file names in the kubelet's directory, "inactive": ...}; a
    checkpoint's file is NAMESPACE-POD.json (harness/checkpointer/manifest.py)."""
    listing = cluster.exec(node, ["sh", "-c", f"cd {INACTIVE} 2>/dev/null && ls; echo --; cd {ACTIVE} && "
                                              f"grep -l '{CHECKPOINT_OF}' -- *.json 2>/dev/null; true"])
    inactive, _, active = listing.partition("--")
    return {"inactive": set(inactive.split()), "active": set(active.split())}


def _in_place(cluster: "KindTarget", node: str) -> bool:
    files = checkpoints(cluster, node)
    return (any(name.startswith(f"kube-system-{NAME}-") for name in files["active"])
            and any(name.startswith("kube-system-kube-apiserver-") for name in files["inactive"]))


def install(cluster: "KindTarget", image: str, say=lambda _: None, args: list[str] | None = None) -> None:
    """The DaemonSet, then wait until on every control-plane node its own checkpoint is active and the apiserver's
    is saved: from then on a power loss of every node is survivable."""
    say(f"self-hosted: the pod checkpointer ({image}) as a DaemonSet" + (f", {' '.join(args)}" if args else ""))
    self_hosted.create(cluster, daemonset(image, args))
    nodes = cluster.hosts("controller")
    self_hosted.wait_pivot(lambda: all(_in_place(cluster, node) for node in nodes),
                           "the checkpointer's own checkpoint active and the apiserver's saved on every control-plane "
                           "node", doing="installing the pod checkpointer")


def roll_out_args(cluster: "KindTarget", args: list[str]) -> None:
    """Turn a running cluster's checkpointer into a broken twin's (defect_args), rolled out by its DaemonSet; for the
    twin proofs on a cluster that had a sound one (tests/integration/test_kind_self_hosted.py)."""
    path = f"/apis/apps/v1/namespaces/kube-system/daemonsets/{NAME}"
    patch = [{"op": "add", "path": "/spec/template/spec/containers/0/args", "value": list(args)}]
    response = cluster.api.request("PATCH", path, patch, timeout=30.0, content_type="application/json-patch+json")
    if response.status_code != 200:
        raise ClusterError(f"patching the checkpointer's DaemonSet: HTTP {response.status_code} {response.text[:300]}",
                           "kubectl -n kube-system get daemonset quorum-checkpointer says why")
    nodes = cluster.hosts("controller")

    def rolled_out() -> bool:
        pods = cluster.api.request("GET", f"/api/v1/namespaces/kube-system/pods?labelSelector={self_hosted.LABEL}%3D{NAME}",
                                   timeout=5.0).json().get("items", [])
        names = {f"kube-system-{p['metadata']['name']}.json" for p in pods
                 if (p["spec"]["containers"][0].get("args") or []) == list(args) and pod_ready(p)}  # [] is stored as none
        # each node's new pod Ready and its own checkpoint the active one
        return len(names) == len(nodes) and all(checkpoints(cluster, node)["active"] & names for node in nodes)

    self_hosted.wait_pivot(rolled_out, f"the checkpointer running with {args}, its own checkpoint active, on every "
                           "control-plane node", doing="turning the checkpointer into the twin's")


def remove(cluster: "KindTarget") -> None:
    """Take the checkpointer and every checkpoint off the cluster, as if it had never been installed: the DaemonSet,
    then on each control-plane node the checkpoint manifests and their copies (the kubelet stops what was running
    from them). For the twin proof on a cluster that had one (tests/integration/test_kind_self_hosted.py)."""
    path = f"/apis/apps/v1/namespaces/kube-system/daemonsets/{NAME}"
    response = cluster.api.request("DELETE", path, {"propagationPolicy": "Foreground"}, timeout=30.0)
    if response.status_code not in (200, 202, 404):
        raise ClusterError(f"deleting the checkpointer's DaemonSet: HTTP {response.status_code} {response.text[:300]}",
                           "kubectl -n kube-system get daemonset quorum-checkpointer says why")
    self_hosted.wait_pivot(lambda: cluster.api.request("GET", path, timeout=5.0).status_code == 404,
                           "the checkpointer's DaemonSet gone", doing="removing the checkpointer")
    for node in cluster.hosts("controller"):
        # the checkpointer's own checkpoint may still be acting: stop it first, then remove what is left
        cluster.exec(node, ["sh", "-c", f"cd {ACTIVE} && rm -f -- $(grep -l '{CHECKPOINT_OF}' -- *.json) && "
                                        f"sleep 3 && rm -rf {INACTIVE} {CHECKPOINT_SECRETS} {CHECKPOINT_CONFIG_MAPS} && "
                                        f"rm -f -- $(grep -l '{CHECKPOINT_OF}' -- *.json 2>/dev/null) ; true"])
    self_hosted.wait_pivot(lambda: not any(checkpoints(cluster, node)["active"] or checkpoints(cluster, node)["inactive"]
                                           for node in cluster.hosts("controller")),
                           "no checkpoint left on any control-plane node", doing="removing the checkpointer")
