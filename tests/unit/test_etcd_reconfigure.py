"""A membership change whose answer is lost is not blindly sent again: etcd member add is not idempotent."""

import pytest
import requests

from harness.errors import FaultError
from harness.backends.fake.target import FakeTarget
from harness.faults import etcd as etcd_faults
from tests.unit.conftest import fake_target


def scripted(tmp_path, gateway) -> FakeTarget:
    """A fake target whose etcd gateway is `gateway`."""
    return fake_target(tmp_path, cls=type("Scripted", (FakeTarget,), {"etcd": gateway}))


class LosingFirstAnswer:
    """etcd's gateway as seen during a leader change: the first answer times out."""

    def __init__(self, then: Exception | None = None) -> None:
        self.calls = 0
        self.then = then

    def post(self, url, path, body, timeout):
        self.calls += 1
        if self.calls == 1:
            raise requests.ReadTimeout("read timed out")
        if self.then is not None:
            raise self.then
        return {}


@pytest.fixture(autouse=True)
def any_member_answers(monkeypatch):
    monkeypatch.setattr(etcd_faults, "_other_url", lambda cluster, host: "https://c1:2379")
    monkeypatch.setattr(etcd_faults.time, "sleep", lambda s: None)


def test_a_lost_answer_whose_change_took_effect_is_not_sent_again(tmp_path):
    gateway = LosingFirstAnswer()
    etcd_faults.change_membership(scripted(tmp_path, gateway), "c3", "/v3/cluster/member/add", {}, applied=lambda: True)
    assert gateway.calls == 1


def test_a_lost_answer_whose_change_did_not_take_effect_is_sent_again(tmp_path):
    gateway = LosingFirstAnswer()
    etcd_faults.change_membership(scripted(tmp_path, gateway), "c3", "/v3/cluster/member/add", {}, applied=lambda: False)
    assert gateway.calls == 2


def test_a_refusal_other_than_unhealthy_cluster_is_a_fault_error(tmp_path):
    response = requests.Response()
    response.status_code = 400
    gateway = LosingFirstAnswer(then=requests.HTTPError("bad request", response=response))
    with pytest.raises(FaultError, match="refused /v3/cluster/member/add for c3"):
        etcd_faults.change_membership(scripted(tmp_path, gateway), "c3", "/v3/cluster/member/add", {}, applied=lambda: False)
