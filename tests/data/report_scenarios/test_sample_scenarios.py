"""Two stand-in scenarios that attach exactly what real ones do (verdicts, figures, timeline), without a
cluster: tests/integration/test_report.py renders them with Allure and opens the report in Chromium."""

import allure

from harness.checkers import availability
from harness.history import History, Outcome
from harness.report.redact import redact
from harness.report.timeline import plot_timeline
from harness.scenario import explain_all, judge


def run(tmp_path, pattern):
    history = History(tmp_path / "history.jsonl")
    history.event("fault.start", t=0.2, id="f1", name="kill", params={"component": "kube-apiserver@c1"})
    for i, char in enumerate(pattern):
        history.record("api-0", "api.readyz", "lb", i * 0.05, Outcome.OK if char == "." else Outcome.FAIL,
                       complete=i * 0.05 + 0.004)
    history.event("fault.end", t=0.9, id="f1", name="kill")
    verdicts = judge(history, availability(history, threshold_pct=99.5), figures={"component": "kube-apiserver@c1"})
    allure.attach.file(str(plot_timeline(history, tmp_path / "timeline.png", "sample")), name="timeline",
                       attachment_type=allure.attachment_type.PNG)
    # a log line that carried a key must reach the report redacted
    allure.attach(redact("starting\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBQ=\n-----END EC PRIVATE KEY-----\n"),
                  name="log kube-apiserver@c1", attachment_type=allure.attachment_type.TEXT)
    return verdicts


def test_apiserver_kill_keeps_the_api_available(tmp_path):
    allure.dynamic.label("suite", "self_healing")
    verdicts = run(tmp_path, "." * 40)
    assert all(verdicts), explain_all(verdicts)


def test_apiserver_kill_loses_the_api(tmp_path):
    allure.dynamic.label("suite", "self_healing")
    verdicts = run(tmp_path, "...." + "x" * 12 + "." * 24)
    assert all(verdicts), explain_all(verdicts)
