"""The measures each scenario declares (`@pytest.mark.measures(...)`), read from the scenarios' source without
collecting them: what docs/gate.md's table lists as "measured by", and what tests that write a run's results
themselves put in its run.json (a real run's comes from the plugin, fixtures/evidence.py)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def declared_measures() -> dict[str, list[str]]:
    """'scenarios/<suite>/<file>::<test function>' -> the measures its marker names (every parameter's alike)."""
    found = {}
    for path in sorted((ROOT / "scenarios").rglob("test_*.py")):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.measures":
                    found[f"{path.relative_to(ROOT).as_posix()}::{node.name}"] = \
                        [ast.literal_eval(arg) for arg in decorator.args]
    return found


def declared_by(nodeid: str) -> list[str]:
    return declared_measures().get(nodeid.split("[")[0], [])
