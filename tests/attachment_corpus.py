"""Keep a trimmed copy of what a real main job attached, per suite, as the redaction's corpus
(tests/unit/test_redact_real_attachments.py).

    python -m tests.attachment_corpus REPORTS/allure-results

For each suite, the text attachments of its first scenario with a History (one that ran before one skipped): the
History trimmed to its first and last lines (the command lines and the heal are where flags and tokens show), and
every log tail, verdict, figure and table whole. Nothing is edited inside a line: the corpus is what users' reports
carry."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "data" / "attachments"
HEAD_LINES = 150
TAIL_LINES = 50
MAX_LINE = 4000  # a History line longer than this is left out whole, never cut
SAFE_NAME = re.compile(r"[^a-z0-9]+")


def suite_of(result: dict) -> str | None:
    """The scenario's suite: the folder under scenarios/ its test lives in."""
    for label in result.get("labels", []):
        if label.get("name") == "package":
            parts = label["value"].split(".")
            if len(parts) > 1 and parts[0] == "scenarios":
                return parts[1]
    return None


def trimmed(text: str, name: str) -> str:
    """The attachment as the corpus keeps it: a History cut to its head and tail, anything else whole."""
    if name != "history.jsonl":
        return text
    lines = [line for line in text.splitlines() if len(line) <= MAX_LINE]
    if len(lines) <= HEAD_LINES + TAIL_LINES:
        return "\n".join(lines) + "\n"
    return "\n".join(lines[:HEAD_LINES] + lines[-TAIL_LINES:]) + "\n"


def attachments_in(node: dict) -> list[dict]:
    """Every attachment of a result, a fixture or a step, and of the steps inside it."""
    found = list(node.get("attachments", []))
    for step in node.get("steps", []):
        found += attachments_in(step)
    return found


def fixture_attachments(results: Path) -> dict[str, list[dict]]:
    """Per result uuid, what its fixtures attached (the History is attached in a fixture's teardown)."""
    by_result: dict[str, list[dict]] = {}
    for path in sorted(results.glob("*-container.json")):
        container = json.loads(path.read_text())
        attached = [a for fixture in container.get("befores", []) + container.get("afters", [])
                    for a in attachments_in(fixture)]
        for child in container.get("children", []):
            by_result.setdefault(child, []).extend(attached)
    return by_result


def collect(results: Path) -> dict[str, list[str]]:
    """Write the corpus from an allure-results directory; returns, per suite, the files written."""
    written: dict[str, list[str]] = {}
    from_fixtures = fixture_attachments(results)
    loaded = [json.loads(path.read_text()) for path in sorted(results.glob("*-result.json"))]
    # a scenario that ran attached its verdicts, figures and log tails; a skipped one only its History's start
    for result in sorted(loaded, key=lambda result: result.get("status") == "skipped"):
        suite = suite_of(result)
        attachments = [a for a in attachments_in(result) + from_fixtures.get(result.get("uuid", ""), [])
                       if a.get("type", "").startswith(("text/", "application/json"))]
        if suite is None or suite in written or not any(a["name"] == "history.jsonl" for a in attachments):
            continue
        folder = CORPUS / suite
        folder.mkdir(parents=True, exist_ok=True)
        written[suite] = []
        (folder / "SCENARIO").write_text(result.get("fullName", result["name"]) + "\n")
        for attachment in attachments:
            text = (results / attachment["source"]).read_text(errors="replace")
            extension = ".json" if attachment["type"] == "application/json" else ".txt"
            target = folder / (SAFE_NAME.sub("-", attachment["name"].lower()).strip("-") + extension)
            target.write_text(trimmed(text, attachment["name"]))
            written[suite].append(target.name)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2 or not Path(sys.argv[1]).is_dir():
        sys.exit("usage: python -m tests.attachment_corpus REPORTS/allure-results")
    for suite, names in collect(Path(sys.argv[1])).items():
        print(suite, names)
