"""A self-hosted control-plane DaemonSet's rollout as the API shows it: its revisions, its pods' commands, whether a
new pod fails, whether every pod runs a given command and is Ready; and `kubectl rollout undo`, as an operator runs
it. Read through the API only, so it works on any self-hosted cluster (bootkube's and Typhoon's label, k8s-app)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

import requests

from harness.clients import checkpoints
from harness.clients.checkpoints import pod_ready
from harness.clients.kubeapi import ApiClient
from harness.toolchain.cache import BinaryCache
from harness.toolchain.versions import KUBERNETES_DEFAULT

NAMESPACE = "kube-system"


def _path(name: str) -> str:
    return f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets/{name}"


def daemonset(api: ApiClient, name: str) -> dict | None:
    """The DaemonSet, or None when the API does not answer or has none of that name."""
    try:
        response = api.get(_path(name), timeout=5.0)
    except requests.RequestException:
        return None
    return response.json() if response.status_code == 200 else None


def command(workload: dict) -> list[str]:
    """The command of the workload's first container (the component itself)."""
    return list(workload["spec"]["template"]["spec"]["containers"][0].get("command") or [])


def revision(api: ApiClient, workload: dict) -> int:
    """The newest ControllerRevision of the DaemonSet: what `kubectl rollout undo --to-revision` names."""
    labels = ",".join(f"{k}={v}" for k, v in workload["spec"]["selector"]["matchLabels"].items())
    response = api.get(f"/apis/apps/v1/namespaces/{NAMESPACE}/controllerrevisions?labelSelector={labels}", timeout=10.0)
    response.raise_for_status()
    owned = [r for r in response.json().get("items", [])
             if any(o.get("uid") == workload["metadata"]["uid"] for o in r["metadata"].get("ownerReferences") or [])]
    return max((int(r["revision"]) for r in owned), default=0)


def set_command(api: ApiClient, name: str, argv: list[str]) -> None:
    """Replace the command of the DaemonSet's first container: the DaemonSet controller rolls it out."""
    patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/command", "value": argv}]
    response = api.request("PATCH", _path(name), patch, timeout=30.0, content_type="application/json-patch+json")
    response.raise_for_status()


@dataclass(frozen=True)
class Pods:
    """The DaemonSet's own pods (not checkpoints of them): each one's command, readiness and whether it failed."""

    pods: list[dict]

    def running(self, argv: list[str]) -> bool:
        """Every pod runs `argv` and is Ready (an update rolled out, or undone)."""
        return bool(self.pods) and all(p["spec"]["containers"][0].get("command") == argv and pod_ready(p)
                                       for p in self.pods)

    def failing(self, argv: list[str]) -> list[str]:
        """The pods running a command other than `argv` whose container exited or waits to restart."""
        def failed(pod: dict) -> bool:
            for status in pod.get("status", {}).get("containerStatuses") or []:
                state, last = status.get("state") or {}, status.get("lastState") or {}
                if "terminated" in state or "terminated" in last or \
                        (state.get("waiting") or {}).get("reason") in ("CrashLoopBackOff", "Error"):
                    return True
            return False

        return [p["metadata"]["name"] for p in self.pods
                if p["spec"]["containers"][0].get("command") != argv and failed(p)]


def pods(api: ApiClient, component: str) -> Pods | None:
    """None when the API does not answer."""
    every = checkpoints.namespace_pods(api, NAMESPACE)
    return None if every is None else Pods(checkpoints.parents(every, component))


def kubectl_rollout_undo(kubeconfig: str, name: str, to_revision: int, timeout: float = 20.0) -> str | None:
    """`kubectl rollout undo daemonset/NAME --to-revision=N` as an operator runs it; None when it worked, else why
    not (what kubectl printed)."""
    binary = BinaryCache().binary_path("kubectl", KUBERNETES_DEFAULT)
    if not binary.exists():
        return f"no kubectl {KUBERNETES_DEFAULT} at {binary}: run `quorum toolchain install`"
    try:
        result = subprocess.run([str(binary), f"--kubeconfig={kubeconfig}", f"--request-timeout={timeout:.0f}s",
                                 "-n", NAMESPACE, "rollout", "undo", f"daemonset/{name}", f"--to-revision={to_revision}"],
                                capture_output=True, text=True, timeout=timeout + 10.0)
    except subprocess.TimeoutExpired:
        return f"kubectl rollout undo did not finish within {timeout + 10.0:.0f}s"
    return None if result.returncode == 0 else (result.stderr or result.stdout).strip()[-300:]
