"""docs/gate.md's table of objectives, made from the measures' records (catalog.py), the defaults (policy.py) and the
scenarios' declarations (declared.py): `python -m harness.objectives.table` writes it into docs/gate.md, and
tests/unit/test_objectives.py fails while the page's table is not the one these make."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.objectives.catalog import MEASURES
from harness.objectives.declared import ROOT, declared_measures
from harness.objectives.policy import Objectives

PAGE = ROOT / "docs" / "gate.md"
HEADER = ("| objective | default | unit | what is measured | where the default comes from | measured by |\n"
          "|---|---|---|---|---|---|")


def shown(value: float | dict[str, float]) -> str:
    return ", ".join(f"{k} {v:g}" for k, v in value.items()) if isinstance(value, dict) else f"{value:g}"


def objectives_table() -> str:
    declared, defaults = declared_measures(), Objectives()
    rows = [HEADER]
    for name, spec in MEASURES.items():
        by = sorted({f"{nodeid.split('/')[1]}: {nodeid.split('::')[1]}" for nodeid, names in declared.items()
                     if name in names})
        better = "higher" if spec.higher_is_better else "lower"
        rows.append(f"| `{name}` | {shown(getattr(defaults, name))} | {spec.unit} | {spec.what} ({better} is better) "
                    f"| {spec.source} | {'; '.join(by)} |")
    return "\n".join(rows)


def table_on(page: str) -> str:
    """The page's table of objectives as it stands (from its header to its last row)."""
    lines = page.splitlines()
    start = lines.index(HEADER.splitlines()[0])
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "\n".join(lines[start:end])


def write(page: Path = PAGE) -> bool:
    """Put the table the records make into the page; whether it changed."""
    text = page.read_text()
    now = text.replace(table_on(text), objectives_table())
    page.write_text(now)
    return now != text


if __name__ == "__main__":
    print(f"{PAGE}: {'table rewritten' if write() else 'table already up to date'}")
    sys.exit(0)
