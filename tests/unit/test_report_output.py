"""What `quorum report` writes and refuses (issue #55), without Allure: an output directory that is someone else's,
Allure's analytics tag, key material in a file of any size, odd measure subjects and deep JSON in a History, the
gate's page and its links."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import QuorumError
from harness.report.allure_report import MARKER, prepare_output, secrets_in, strip_analytics
from harness.report.gate_page import PAGE, write_page
from harness.report.results import history_slug
from harness.report.trends import collect, picture

KEY = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBQ=\n-----END EC PRIVATE KEY-----\n"
TAG = ('<script async src="https://www.googletagmanager.com/gtag/js?id=G-LNDJ3J7WT0"></script>\n    <script>\n'
       "        window.dataLayer = window.dataLayer || [];\n        function gtag(){dataLayer.push(arguments);}\n"
       "        gtag('js', new Date());\n    </script>")


def test_an_output_directory_with_someone_elses_files_is_refused_before_anything_is_written(tmp_path):
    output = tmp_path / "out"
    (output / "sub").mkdir(parents=True)
    (output / "notes.txt").write_text("mine")
    with pytest.raises(QuorumError, match="not empty and holds no report Quorum rendered"):
        prepare_output(output)
    assert (output / "notes.txt").read_text() == "mine" and (output / "sub").is_dir()


def test_a_report_quorum_rendered_is_replaced_whole(tmp_path):
    output = tmp_path / "out"
    (output / "histories").mkdir(parents=True)
    (output / MARKER).write_text("")
    (output / "index.html").write_text("old")
    prepare_output(output)
    assert output.is_dir() and list(output.iterdir()) == []


def test_allures_analytics_tag_is_cut_and_an_unknown_one_is_refused(tmp_path):
    page = tmp_path / "index.html"
    page.write_text(f"<html><head></head><body><div id=app></div>\n    {TAG}\n</body></html>")
    strip_analytics(tmp_path)
    assert "googletagmanager" not in page.read_text() and "<div id=app></div>" in page.read_text()
    page.write_text('<script>load("https://www.googletagmanager.com/x")</script>')
    with pytest.raises(QuorumError, match="does not know how to cut"):
        strip_analytics(tmp_path)


def test_key_material_at_the_end_of_a_file_over_50_mb_is_found(tmp_path):
    big = tmp_path / "attachment.txt"
    with big.open("w") as out:
        line = "an ordinary line of a History, nothing secret in it\n"
        out.write(line * (60_000_000 // len(line)))
        out.write(KEY)
    assert big.stat().st_size > 50_000_000
    assert secrets_in(tmp_path) == ["attachment.txt"]


def test_a_secret_across_two_chunks_is_found(tmp_path, monkeypatch):
    import harness.report.allure_report as report

    monkeypatch.setattr(report, "CHUNK", 1000)
    monkeypatch.setattr(report, "OVERLAP", 200)
    (tmp_path / "a.txt").write_text("x" * 950 + KEY)
    assert secrets_in(tmp_path) == ["a.txt"]


def test_an_embedded_screenshot_whose_base64_happens_to_hold_mii_is_no_key_but_a_certificate_body_is(tmp_path):
    # the single-file report embeds each screenshot as a data URI; inside its run "+MII" or "/MIG" comes by chance
    image = "iVBORw0KGgoAAAANSUhEUgAA" + "Qx7Z" * 40 + "+MIIEEIIIYQQUqFFpeYiJi0PtezNEZOWh+jUXE0XiVQyFHgTQgghhBBCKrRa9maoY" + \
        "/MIG" + "kq8Z" * 30 + "=="
    page = tmp_path / "index.html"
    page.write_text(f'<img src="data:image/png;base64,{image}">')
    assert secrets_in(tmp_path) == []
    body = "MIIBszCCAVmgAwIBAgIUTm9yZWFsY2VydGlmaWNhdGVib2R5aGVyZWF0YWxsMAoGCCqGSM49BAMCMBgxFjAU"
    page.write_text(f'<pre>ca.crt: "{body}"</pre>')
    assert secrets_in(tmp_path) == ["index.html"]

def test_odd_subjects_and_deep_json_in_histories_draw_the_trends_without_a_traceback(tmp_path):
    for index, subject in enumerate(["$\\frac$", "a_b^c", "$x$"]):
        run = tmp_path / f"2026120{index}-000000"
        run.mkdir()
        lines = [json.dumps({"kind": "event", "t": 1.0, "type": "measure", "name": "api_p99_s", "subject": "get",
                             "value": 0.1 * (index + 1)}),
                 json.dumps({"kind": "event", "t": 1.0, "type": "measure", "name": "lost_writes", "subject": subject,
                             "value": 0}),
                 "[" * 100_000 + "]" * 100_000]
        (run / "a.jsonl").write_text("\n".join(lines) + "\n")
    runs = collect(tmp_path)
    assert [figures["api_p99_s[get]"] for _, figures in runs] == [0.1, 0.2, pytest.approx(0.3)]
    assert "lost_writes[$\\frac$]" in runs[0][1]
    assert picture(runs, tmp_path / "trends.png").is_file()


def test_a_timeline_titled_with_a_dollar_sign_is_drawn(tmp_path):
    from harness.history import History
    from harness.report.timeline import plot_timeline

    history = History()
    history.record("api-0", "api.get", "lb", 1.0, outcome=__import__("harness.history").history.Outcome.OK,
                   complete=1.1)
    assert plot_timeline(history, tmp_path / "t.png", title="scenarios/x.py::test_y[$\\frac$]").is_file()


def test_the_gate_page_shows_the_decision_and_links_each_scenario_to_its_history_and_timeline(tmp_path):
    results, output = tmp_path / "run", tmp_path / "report"
    results.mkdir()
    nodeid = "scenarios/etcd/test_etcd_quorum.py::test_writes_continue_when_the_leader_of_three_dies"
    (results / f"{history_slug(nodeid)}.jsonl").write_text("{}\n")
    (results / f"{history_slug(nodeid)}.png").write_bytes(b"\x89PNG")
    gate = {"decision": "block", "baseline": "1 promoted run(s) in reports/promoted", "notes": [],
            "reasons": ["etcd: <script>alert(1)</script>"], "not_judged": [{"suite": "s", "what": "w", "why": "y"}],
            "rows": [{"suite": "etcd", "scenario": nodeid.split("::")[1], "outcome": "failed", "verdict": "block",
                      "reason": "boom", "nodeid": nodeid},
                     {"suite": "etcd", "scenario": nodeid.split("::")[1], "measure": "lost_writes", "figure": "3",
                      "verdict": "block", "nodeid": nodeid}]}
    (results / "gate.json").write_text(json.dumps(gate))
    page = write_page(results / "gate.json", output)
    text = page.read_text()
    assert page.name == PAGE and '<span id="decision" style="color:#cf222e">block</span>' in text
    assert f'href="histories/{history_slug(nodeid)}.jsonl">History</a>' in text
    assert f'href="histories/{history_slug(nodeid)}.png">timeline</a>' in text
    assert (output / "histories" / f"{history_slug(nodeid)}.jsonl").is_file()
    assert "<script>alert" not in text and "&lt;script&gt;" in text  # report text is escaped
    assert "1 promoted run(s)" in text
    # the scenario's name may break after each underscore, so a long one does not push the table off the screen
    assert "<td>test_<wbr>writes_<wbr>continue_<wbr>when_<wbr>the_<wbr>leader_<wbr>of_<wbr>three_<wbr>dies</td>" in text
