"""`quorum report`: allure-results -> an HTML report with Allure 3 (npm `allure`, no Java).

The pytest plugin writes environment.properties (topology, versions) and categories.json (product
failure, harness error, cluster broken before the test) into the results; the report keeps a history
file next to the output so trends accumulate across runs. The generated report is scanned for key,
token and certificate material before it is declared good.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness.errors import QuorumError
from harness.report.gate_page import add_to_results as add_gate_result, write_page
from harness.report.redact import contains_secret
from harness.toolchain.install import Toolchain

CATEGORIES = [
    {"name": "Cluster broken before the test", "matchedStatuses": ["broken", "failed"],
     "messageRegex": ".*cluster broken before the test.*"},
    {"name": "Product failure (a verdict failed)", "matchedStatuses": ["failed"]},
    {"name": "Harness error", "matchedStatuses": ["broken"]},
]


def write_metadata(results: Path, environment: dict[str, str]) -> None:
    """environment.properties (shown as the report's metadata) and categories.json (Allure 2 readers;
    Allure 3 takes the same categories from its config, see generate)."""
    results.mkdir(parents=True, exist_ok=True)
    lines = [f"{key}={str(value).replace(chr(10), ' ')}" for key, value in sorted(environment.items())]
    (results / "environment.properties").write_text("\n".join(lines) + "\n")
    (results / "categories.json").write_text(json.dumps(CATEGORIES, indent=1))


MARKER = ".quorum-report"  # what makes a directory a report Quorum rendered: the next report may replace it
RENDERED = {"index.html", "summary.json", "test-results.json", "gate.html", "histories", MARKER}  # what a report directory holds
# Allure 3's report pages load Google Analytics whatever their options (its plugins set analyticsEnable); a team's
# report must make no request off its machine, so the tag and its inline set-up are cut from every page
_ANALYTICS = re.compile(r'<script async src="https://www\.googletagmanager\.com/gtag/js\?id=[^"]*"></script>\s*'
                        r"<script>\s*window\.dataLayer.*?</script>", re.S)


def prepare_output(output: Path) -> None:
    """An output directory is new, empty, or a report Quorum rendered (replaced whole); anything else is refused
    before anything is written, so a report never lands among someone's files."""
    if output.is_symlink() or (output.exists() and not output.is_dir()):
        raise QuorumError(f"report output {output} is not a directory of its own (a file or a link)",
                          "give --output a new or empty directory")
    if output.is_dir() and any(output.iterdir()):
        entries = {entry.name for entry in output.iterdir()}
        if not (output / MARKER).is_file() and not entries <= RENDERED:
            raise QuorumError(f"report output {output} is not empty and holds no report Quorum rendered",
                              "give --output a new or empty directory (a report Quorum rendered there is replaced)")
        shutil.rmtree(output)
    output.mkdir(parents=True, exist_ok=True)


def strip_analytics(directory: Path) -> None:
    """Cut Allure's analytics tag from every page; refuse a page that still names its host."""
    for page in directory.rglob("*.html"):
        text = page.read_text(errors="replace")
        cut = _ANALYTICS.sub("", text)
        if "googletagmanager" in cut:
            raise QuorumError(f"{page} loads Google Analytics in a way Quorum does not know how to cut",
                              "report this as a Quorum bug (harness/report/allure_report.py, _ANALYTICS)")
        if cut != text:
            page.write_text(cut)


def generate(results: Path, output: Path, *, history: Path | None = None, name: str = "Quorum",
             gate: Path | None = None, trends: Path | None = None) -> Path:
    """The HTML report of `results` in `output` (single file index.html), with the gate's page when `gate` names a
    gate.json; scanned for key material before it is declared good."""
    if not results.is_dir() or not any(results.glob("*-result.json")):
        raise QuorumError(f"no Allure results in {results}",
                          "run the suites with --alluredir, e.g. `pytest scenarios/ --alluredir reports/allure-results`")
    refuse_secrets(results, "results")
    prepare_output(output)
    if gate is not None:
        add_gate_result(gate, results)
    allure = Toolchain().path("allure")
    config = {"name": name, "output": str(output.resolve()),
              "historyPath": str((history or output.parent / "allure-history.jsonl").resolve()),
              "categories": CATEGORIES,
              "plugins": {"awesome": {"options": {"reportName": name, "singleFile": True, "reportLanguage": "en"}}}}
    with tempfile.TemporaryDirectory() as workdir:
        (Path(workdir) / "allurerc.json").write_text(json.dumps(config))
        result = subprocess.run(["node", str(allure), "generate", str(results.resolve())], cwd=workdir,
                                capture_output=True, text=True, timeout=600, env={"NO_COLOR": "1",
                                                                                   "PATH": "/usr/bin:/bin"})
    index = output / "index.html"
    if result.returncode != 0 or not index.exists():
        shutil.rmtree(output, ignore_errors=True)  # nothing half-done, nothing unscanned left behind
        said = (result.stdout + result.stderr).strip()[-1500:] or f"exit {result.returncode} and no index.html"
        raise QuorumError(f"allure generate failed: {said}",
                          "check the results directory; `quorum toolchain status` shows the allure install")
    if gate is not None:
        write_page(gate, output, trends)
    (output / MARKER).write_text("a report quorum rendered: `quorum report` may replace this directory\n")
    strip_analytics(output)
    try:
        refuse_secrets(output, "report")
    except QuorumError:
        shutil.rmtree(output, ignore_errors=True)
        raise
    return index


def refuse_secrets(directory: Path, what: str) -> None:
    leaks = secrets_in(directory)
    if leaks:
        raise QuorumError(f"the {what} contain(s) key or certificate material in {leaks}",
                          "this is a bug in an attachment; redact it at the source (harness/report/redact.py)")


_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}")


def _decoded_runs(text: str) -> str:
    """The text of every base64 run in `text` (a single-file report embeds its attachments that way)."""
    decoded = []
    for run in _BASE64_RUN.findall(text):
        try:
            decoded.append(base64.b64decode(run + "=" * (-len(run) % 4)).decode("utf-8", errors="ignore"))
        except (binascii.Error, ValueError):
            continue
    return "\n".join(decoded)


CHUNK = 4 * 1024 * 1024
OVERLAP = 256 * 1024  # longer than any PEM block or token: a secret across two chunks is whole in one of them


def _chunks(path: Path):
    """The file's text in overlapping chunks, so that a file of any size is scanned without reading it whole."""
    tail = ""
    with path.open("r", errors="replace") as handle:
        while True:
            block = handle.read(CHUNK)
            if not block:
                return
            yield tail + block
            tail = block[-OVERLAP:]


def secrets_in(directory: Path) -> list[str]:
    """Files of a report (or results) directory that contain a key, token or certificate body, in plain text or
    inside embedded base64, whatever their size."""
    found = []
    for path in sorted(directory.rglob("*")):
        if path.is_file() and not path.is_symlink() and any(contains_secret(text) or contains_secret(
                _decoded_runs(text)) for text in _chunks(path)):
            found.append(str(path.relative_to(directory)))
    return found
