"""A parent pod's checkpoint: the pod as the kubelet can run it with no API (docs/checkpointer.md, "sanitized").

Pure: from the pod the API or the kubelet gave, the manifest to keep and where its secrets and config maps go. Only
the standard library (it runs inside the nodes)."""

from __future__ import annotations

import copy
import json
import re

CHECKPOINT = "checkpointer.alpha.coreos.com/checkpoint"
CHECKPOINT_OF = "checkpointer.alpha.coreos.com/checkpoint-of"
# Quorum's addition to the contract: the uid of the parent's controller (its DaemonSet), so a checkpoint whose
# parent is gone can be known superseded by a newer pod of the same controller (docs/checkpointer.md)
OWNER = "checkpointer.quorum.dev/owner-uid"
ROOT = "/etc/kubernetes"
INACTIVE = f"{ROOT}/inactive-manifests"
ACTIVE = f"{ROOT}/manifests"
SECRETS = f"{ROOT}/checkpoint-secrets"
CONFIG_MAPS = f"{ROOT}/checkpoint-configmaps"
# a name the API accepts for a namespace, pod, secret or config map (DNS subdomain): never a path of its own
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


class NotCheckpointable(ValueError):
    """A pod this checkpointer must not or cannot checkpoint, and why."""


def object_name(value: object, what: str) -> str:
    if not isinstance(value, str) or not _NAME.match(value) or ".." in value:
        raise NotCheckpointable(f"{what} {value!r} is not a Kubernetes object name")
    return value


def full_name(pod: dict) -> str:
    """namespace/name: how checkpoints are keyed (also across the agent's restarts, from their files)."""
    metadata = pod.get("metadata", {})
    return f"{object_name(metadata.get('namespace'), 'namespace')}/{object_name(metadata.get('name'), 'pod name')}"


def file_name(name: str) -> str:
    """The manifest's file name for namespace/name, in the inactive and in the kubelet's directory."""
    namespace, _, pod = name.partition("/")
    return f"{object_name(namespace, 'namespace')}-{object_name(pod, 'pod name')}.json"


def is_parent(pod: dict) -> bool:
    """Annotated for checkpointing, and neither a static pod (its mirror) nor a checkpoint itself."""
    annotations = pod.get("metadata", {}).get("annotations") or {}
    return (annotations.get(CHECKPOINT) == "true" and CHECKPOINT_OF not in annotations
            and "kubernetes.io/config.mirror" not in annotations)


def owner(pod: dict) -> str | None:
    """The uid of the pod's controller (a DaemonSet's pods share it across updates), from the pod or its checkpoint."""
    metadata = pod.get("metadata", {})
    for reference in metadata.get("ownerReferences") or []:
        if reference.get("controller") and reference.get("uid"):
            return str(reference["uid"])
    return (metadata.get("annotations") or {}).get(OWNER)


def ready(pod: dict) -> bool:
    """The API reports the pod Ready."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def terminating(pod: dict) -> bool:
    """The API was asked to delete the pod: it is going away, whatever still runs."""
    return bool(pod.get("metadata", {}).get("deletionTimestamp"))


def secret_dir(name: str, secret: str) -> str:
    namespace, _, pod = name.partition("/")
    return f"{SECRETS}/{object_name(namespace, 'namespace')}/{object_name(pod, 'pod name')}/{object_name(secret, 'secret')}"


def config_map_dir(name: str, config_map: str) -> str:
    namespace, _, pod = name.partition("/")
    return f"{CONFIG_MAPS}/{object_name(namespace, 'namespace')}/{object_name(pod, 'pod name')}/{object_name(config_map, 'config map')}"


def sanitized(pod: dict) -> tuple[dict, list[str], list[str]]:
    """The checkpoint of a parent pod, and the secrets and config maps it needs copied (by name). Labels and every
    other annotation go, with the service account and its token volume, the node name, the node selector and
    affinity, and the status; secret and
    config map volumes become host paths to their copies."""
    if not is_parent(pod):
        raise NotCheckpointable(f"{pod.get('metadata', {}).get('name')!r} is not a parent pod (annotation {CHECKPOINT})")
    name = full_name(pod)
    spec = copy.deepcopy(pod.get("spec") or {})
    # a static pod runs where its file is: placement rules only stop it, since while the API is away the kubelet
    # does not know its own node's labels (admission then fails the node selector: measured on kind, 2026-11-26)
    for key in ("serviceAccountName", "serviceAccount", "nodeName", "nodeSelector", "affinity"):
        spec.pop(key, None)
    spec["automountServiceAccountToken"] = False
    secrets, config_maps, dropped, volumes = [], [], set(), []
    for volume in spec.get("volumes") or []:
        if "secret" in volume:
            secret = object_name(volume["secret"].get("secretName"), "secret")
            secrets.append(secret)
            volumes.append({"name": volume["name"], "hostPath": {"path": secret_dir(name, secret)}})
        elif "configMap" in volume:
            config_map = object_name(volume["configMap"].get("name"), "config map")
            config_maps.append(config_map)
            volumes.append({"name": volume["name"], "hostPath": {"path": config_map_dir(name, config_map)}})
        elif "projected" in volume and any("serviceAccountToken" in s for s in volume["projected"].get("sources", [])):
            dropped.add(volume["name"])  # the API's token: nothing to serve it while the API is away
        else:
            volumes.append(volume)
    spec["volumes"] = volumes
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        container["volumeMounts"] = [m for m in container.get("volumeMounts") or [] if m.get("name") not in dropped]
    metadata = pod["metadata"]
    annotations = {CHECKPOINT_OF: metadata["name"]}
    if owner(pod) is not None:
        annotations[OWNER] = owner(pod)
    checkpoint = {"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": metadata["name"], "namespace": metadata["namespace"], "annotations": annotations},
                  "spec": spec}
    return checkpoint, sorted(set(secrets)), sorted(set(config_maps))


def serialized(checkpoint: dict) -> str:
    """Stable text, so an unchanged parent writes byte-identical files (and the kubelet sees no change)."""
    return json.dumps(checkpoint, sort_keys=True, indent=1) + "\n"
