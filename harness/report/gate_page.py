"""The gate's decision as a page of the report (gate.html beside index.html): the decision, what it was compared with,
what was not judged and why, the table with each scenario's row linked to its History and timeline (copied beside the
page, so the report holds what it links to), and the key figures' trends across runs. The Allure report gets a result
of its own, "promotion gate", that links to the page and carries its table."""

from __future__ import annotations

import html
import json
import shutil
import time
import uuid
from pathlib import Path

from harness.report.results import history_slug

PAGE = "gate.html"
LINKED = "histories"  # the copies of the run's Histories and timelines, beside the page
VERDICT_COLOURS = {"ok": "#1a7f37", "block": "#cf222e", "unjudged": "#9a6700", "known failure": "#0969da",
                   "not judged": "#57606a", "sample": "#57606a"}


def _row_link(results: Path, row: dict) -> str:
    """Links to the row's scenario's History and timeline (as copied beside the page), or nothing."""
    nodeid = row.get("nodeid")
    if not nodeid or row.get("measure"):
        return ""
    history = results / f"{history_slug(str(nodeid))}.jsonl"
    if not history.is_file():
        return ""
    links = [f'<a href="{LINKED}/{html.escape(history.name)}">History</a>']
    if history.with_suffix(".png").is_file():
        links.append(f'<a href="{LINKED}/{html.escape(history.with_suffix(".png").name)}">timeline</a>')
    return " ".join(links)


def table_html(gate: dict, results: Path | None = None) -> str:
    """The gate's rows as an HTML table; with `results`, each scenario's row links to its History and timeline."""
    head = "".join(f"<th>{name}</th>" for name in ("suite", "scenario", "outcome", "measure", "figure", "objective",
                                                     "configuration", "verdict", "reason", "evidence"))
    rows = []
    for row in gate.get("rows", []):
        verdict = str(row.get("verdict", ""))
        colour = VERDICT_COLOURS.get(verdict, "#000")
        cells = [html.escape(str(row.get(key, ""))) for key in ("suite", "scenario", "outcome", "measure", "figure",
                                                                  "objective", "bound")]
        # a scenario's name is one long word: it may break after its underscores, or the table runs off the screen
        cells[1] = cells[1].replace("_", "_<wbr>")
        link = _row_link(results, row) if results is not None else ""
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) +
                    f'<td style="color:{colour};font-weight:bold">{html.escape(verdict)}</td>'
                    f"<td>{html.escape(str(row.get('reason', '')))}</td><td>{link}</td></tr>")
    return f'<table border="1" cellspacing="0" cellpadding="3"><tr>{head}</tr>{"".join(rows)}</table>'


def page_html(gate: dict, results: Path, trends: str | None) -> str:
    decision = str(gate.get("decision", "unjudged"))
    colour = {"promote": "#1a7f37", "block": "#cf222e"}.get(decision, "#9a6700")
    judged = gate.get("cluster") or {}
    on = html.escape(str(judged.get("target") or judged.get("cluster") or ""))
    items = "".join(f"<li>{html.escape(str(n))}</li>" for n in gate.get("notes", []))
    unjudged = "".join(f"<li><b>{html.escape(str(i.get('suite')))}</b> {html.escape(str(i.get('what')))}: "
                       f"{html.escape(str(i.get('why')))}</li>" for i in gate.get("not_judged", []))
    reasons = "".join(f"<li>{html.escape(str(r))}</li>" for r in gate.get("reasons", []))
    baseline = html.escape(str(gate.get("baseline") or "no earlier promoted run to compare with"))
    figure = f'<h2>Key figures across runs</h2><img src="{LINKED}/{trends}" alt="key figures across runs">' \
        if trends else ""
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Quorum: promotion gate</title>
<style>body{{font-family:sans-serif;margin:1.5em}} td,th{{font-size:12px;text-align:left}}</style></head><body>
<h1>Promotion gate: <span id="decision" style="color:{colour}">{html.escape(decision)}</span></h1>
<p>Run judged{': ' + on if on else ''}. Compared with: {baseline}.</p>
{f'<h2>Notes</h2><ul>{items}</ul>' if items else ''}
{f'<h2>Why</h2><ul>{reasons}</ul>' if reasons else ''}
{f'<h2>Not judged, and why</h2><ul>{unjudged}</ul>' if unjudged else ''}
<h2>Every row</h2>{table_html(gate, results)}
{figure}
</body></html>
"""


def write_page(gate_json: Path, output: Path, trends_png: Path | None = None) -> Path:
    """gate.html in the report's output directory, with the run's Histories and timelines copied beside it."""
    results = gate_json.parent
    gate = json.loads(gate_json.read_text())
    linked = output / LINKED
    linked.mkdir(parents=True, exist_ok=True)
    for source in (*results.glob("*.jsonl"), *results.glob("*.png")):
        if source.is_file() and not source.is_symlink():
            shutil.copyfile(source, linked / source.name)
    trends = None
    if trends_png is not None and trends_png.is_file():
        shutil.copyfile(trends_png, linked / "key-figures-across-runs.png")
        trends = "key-figures-across-runs.png"
    page = output / PAGE
    page.write_text(page_html(gate, results, trends))
    return page


def add_to_results(gate_json: Path, results: Path) -> None:
    """A "promotion gate" result in allure-results: the decision as its status, the table as an HTML attachment,
    and a link to gate.html."""
    gate = json.loads(gate_json.read_text())
    ident = str(uuid.uuid4())
    attachment = f"{ident}-attachment.html"
    (results / attachment).write_text(f"<html><body>{table_html(gate)}</body></html>")
    status = {"promote": "passed", "block": "failed"}.get(str(gate.get("decision")), "broken")
    now = int(time.time() * 1000)
    reasons = "; ".join(str(r) for r in gate.get("reasons", []))[:2000]
    (results / f"{ident}-result.json").write_text(json.dumps({
        "uuid": ident, "historyId": "quorum-promotion-gate", "name": "promotion gate",
        "fullName": "gate.promotion gate", "status": status, "stage": "finished", "start": now, "stop": now,
        "labels": [{"name": "suite", "value": "gate"}],
        "statusDetails": {"message": f"decision: {gate.get('decision')}" + (f": {reasons}" if reasons else "")},
        "links": [{"name": "the gate's page, every row linked to its History and timeline", "url": PAGE,
                   "type": "link"}],
        "description": f"The promotion gate's decision on this run: {gate.get('decision')}. "
                       f"Compared with: {gate.get('baseline') or 'no earlier promoted run'}.",
        "attachments": [{"name": "gate table", "source": attachment, "type": "text/html"}]}))
