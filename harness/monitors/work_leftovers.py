"""What work monitors left in a cluster: their namespaces (harness/monitors/work.py) outlive a harness killed outright
(SIGKILL, a lost machine), with the Deployments and Pending pods inside. `quorum heal` deletes those whose harness no
longer runs, the way it heals a remote host's faults (harness/backends/remote/heal.py): on this machine it can tell
whether that harness still runs; one from another machine, or with no readable owner, is deleted only with --force
(the user says that harness is gone)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import urllib3
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException
from kubernetes.config.config_exception import ConfigException

from harness.monitors.kube_writer import api_client
from harness.monitors.work_probes import LABEL, OWNER, REQUEST_TIMEOUT_S
from harness.run.harness_process import Harness
from harness.target.protocol import Target


@dataclass
class WorkLeftovers:
    deleted: list[str] = field(default_factory=list)
    left_alone: list[str] = field(default_factory=list)  # namespaces a live (or unknown) harness may still use, and why
    failed: list[str] = field(default_factory=list)  # deletes the API refused
    problem: str | None = None  # why the namespaces could not be listed (the API down): nothing was judged


def owner_of(namespace: k8s.V1Namespace) -> Harness | None:
    """The harness named by the namespace's annotation; None when there is none or it is not Quorum's."""
    text = (namespace.metadata.annotations or {}).get(OWNER)
    try:
        return Harness(**json.loads(text)) if text else None
    except (ValueError, TypeError):
        return None


def why_left_alone(owner: Harness | None, force: bool) -> str | None:
    """Why a work namespace must stay (its harness may still use it), or None when it is a leftover to delete."""
    alive = owner.alive() if owner is not None else None
    if alive is False or (alive is None and force):
        return None
    if owner is None:
        return "names no harness Quorum can read: --force deletes it"
    who = f"pid {owner.pid} ({owner.command[:80]})"
    if alive:
        return f"belongs to {who} on this machine, still running"
    return f"belongs to {who} on another machine: --force deletes it once that harness is gone"


def sweep_work_namespaces(target: Target, force: bool = False) -> WorkLeftovers:
    """Delete the work monitors' namespaces whose harness is gone (module docstring); the namespace controller
    finishes the deletion, nothing waits for it."""
    try:
        core = k8s.CoreV1Api(api_client(target))
        found = core.list_namespace(label_selector=LABEL, _request_timeout=REQUEST_TIMEOUT_S).items
    except (ApiException, ConfigException, urllib3.exceptions.HTTPError, OSError) as error:
        said = f"HTTP {error.status} {error.reason}" if isinstance(error, ApiException) else str(error)
        return WorkLeftovers(problem=f"the work monitors' namespaces could not be listed: {said}")
    leftovers = WorkLeftovers()
    for namespace in found:
        name = namespace.metadata.name
        if namespace.metadata.deletion_timestamp is not None:
            continue  # already being deleted
        reason = why_left_alone(owner_of(namespace), force)
        if reason:
            leftovers.left_alone.append(f"namespace {name} {reason}")
            continue
        try:
            core.delete_namespace(name, _request_timeout=REQUEST_TIMEOUT_S)
        except ApiException as error:
            if error.status != 404:
                leftovers.failed.append(f"namespace {name} could not be deleted: HTTP {error.status} {error.reason}")
            continue
        except (urllib3.exceptions.HTTPError, OSError) as error:
            leftovers.failed.append(f"namespace {name} could not be deleted: {error}")
            continue
        leftovers.deleted.append(f"deleted the work monitor's namespace {name}")
    return leftovers
