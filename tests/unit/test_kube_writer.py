"""The Kubernetes writer's read-back (harness/monitors/kube_writer.py) against a scripted API: the names it records
are what the LIST returned, whatever the cleanup after it does."""

from types import SimpleNamespace

import urllib3

from harness.history import History
from harness.monitors import kube_writer
from harness.monitors.kube_writer import KubeWriter


class SlowDeleteApi:
    """Lists what is there; its delete-collection times out at the client while the server deletes some."""

    def __init__(self, names: list[str]) -> None:
        self.names = list(names)

    def list_namespaced_config_map(self, namespace, label_selector, _request_timeout):
        items = [SimpleNamespace(metadata=SimpleNamespace(name=n)) for n in self.names]
        return SimpleNamespace(items=items, metadata=SimpleNamespace(resource_version="42"))

    def delete_collection_namespaced_config_map(self, namespace, label_selector, _request_timeout):
        del self.names[: len(self.names) * 3 // 4]  # the server goes on deleting after the client gave up
        raise urllib3.exceptions.ReadTimeoutError(None, "/api/v1/namespaces/default/configmaps", "read timed out")


def test_a_cleanup_that_times_out_never_turns_a_complete_read_into_lost_writes(monkeypatch):
    written = [f"qw-abc-0-{i:06d}" for i in range(1, 1430)]
    api = SlowDeleteApi(written)
    monkeypatch.setattr(kube_writer, "api_client", lambda cluster: None)
    monkeypatch.setattr(kube_writer.k8s, "CoreV1Api", lambda client: api)
    writer = KubeWriter.__new__(KubeWriter)  # no cluster: only its read-back is under test
    writer.cluster, writer.history, writer.tag = None, History(), "abc"
    assert writer.read_back(deadline_s=5.0) == sorted(written)
    reads = writer.history.ops_of("kube.read_all")
    assert len(reads) == 1 and len(reads[0].value) == 1429
