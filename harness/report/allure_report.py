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
import subprocess
import tempfile
from pathlib import Path

from harness.errors import QuorumError
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


def generate(results: Path, output: Path, *, history: Path | None = None, name: str = "Quorum") -> Path:
    if not results.is_dir() or not any(results.glob("*-result.json")):
        raise QuorumError(f"no Allure results in {results}",
                          "run the suites with --alluredir, e.g. `pytest scenarios/ --alluredir reports/allure-results`")
    refuse_secrets(results, "results")
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
        raise QuorumError(f"allure generate failed:\n{(result.stdout + result.stderr)[-1500:]}",
                          "check the results directory; `quorum toolchain status` shows the allure install")
    refuse_secrets(output, "report")
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


def secrets_in(directory: Path) -> list[str]:
    """Files of a report (or results) directory that contain a key, token or certificate body, in plain
    text or inside embedded base64."""
    found = []
    for path in directory.rglob("*"):
        if path.is_file() and path.stat().st_size < 50_000_000:
            text = path.read_text(errors="replace")
            if contains_secret(text) or contains_secret(_decoded_runs(text)):
                found.append(str(path.relative_to(directory)))
    return found
