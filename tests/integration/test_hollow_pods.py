"""kwok's pod-ready stage for real, on a small hollow-node cluster: a pod whose Running status is applied a
second time keeps one pod IP and turns Ready again. (With kwok's default strategic merge patch the second
application added a second IPv4 address, the apiserver refused every later patch, and the pod stayed
Pending: seen in CI as 976 of 1000 hollow pods available under load.)"""

import time

import yaml

from harness.load.hollow import NAMESPACE
from tests.integration.conftest import CLUSTERS, running

SUBNET = "10.213.6.0/24"  # no other test uses it


def small_hollow_topology(tmp_path):
    data = yaml.safe_load((CLUSTERS / "ha3-1000.yaml").read_text())
    data |= {"name": "ha3-hollow5", "network": {"subnet": SUBNET}}
    data["hollow_nodes"] |= {"count": 5}
    path = tmp_path / "ha3-hollow5.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def pods(cluster) -> list[dict]:
    response = cluster.api.request("GET", f"/api/v1/namespaces/{NAMESPACE}/pods")
    response.raise_for_status()
    return response.json()["items"]


def ready(pod: dict) -> bool:
    return pod["status"].get("phase") == "Running" and any(
        c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions", []))


def test_a_pod_made_ready_twice_keeps_one_ip_and_turns_ready_again(tmp_path):
    with running(small_hollow_topology(tmp_path), tmp_path / "run") as cluster:
        pod = pods(cluster)[0]
        name, first_ip = pod["metadata"]["name"], pod["status"]["podIP"]
        assert ready(pod) and len(pod["status"]["podIPs"]) == 1
        # what a lost-then-retried patch leaves behind: the pod looks Pending again while its first IP stays,
        # so kwok's pod-ready stage matches it and applies Running once more (with a fresh address)
        response = cluster.api.request(
            "PATCH", f"/api/v1/namespaces/{NAMESPACE}/pods/{name}/status",
            {"status": {"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"}]}},
            content_type="application/strategic-merge-patch+json")
        assert response.status_code == 200, response.text
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pod = next(p for p in pods(cluster) if p["metadata"]["name"] == name)
            if ready(pod):
                break
            time.sleep(0.5)
        assert ready(pod), f"pod {name} did not turn Ready again: {pod['status']}"
        assert len(pod["status"]["podIPs"]) == 1, pod["status"]["podIPs"]
        assert first_ip  # the first application gave it an address too
