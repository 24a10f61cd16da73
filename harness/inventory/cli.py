"""`quorum inventory`: commands about clusters Quorum did not build (docs/target.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

console = Console(width=None if sys.stdout.isatty() else 160)


@click.group()
def inventory() -> None:
    """Clusters Quorum did not build, described by an inventory file (docs/target.md)."""


@inventory.command("check")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def check_command(file: Path) -> None:
    """Reach everything FILE names, read only: the API, each host over SSH, etcd. Exit 0 when every piece
    answered as the inventory says, 2 otherwise (each failing piece named with its fix)."""
    from harness.inventory.check import check
    from harness.inventory.load import load_inventory

    described = load_inventory(file)
    rows = check(described, file.resolve().parent)
    title = f"{described.name}: " + ("disposable" if described.disposable else
                                     "not disposable (only read-only checks, monitors and load will run)")
    if sys.stdout.isatty():
        table = Table(title=title)
        for column in ("piece", "", "what was found"):
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(row.piece, "ok" if row.ok else "FAIL", row.detail)
        console.print(table)
    else:  # CI logs: one line per piece, whole, for grep
        print(title)
        for row in rows:
            print(f"{'ok  ' if row.ok else 'FAIL'} {row.piece}: {row.detail}")
    failed = [row for row in rows if not row.ok]
    for row in failed:
        console.print(f"FAIL {row.piece}: {row.detail}" + (f"\n  fix: {row.fix}" if row.fix else ""),
                      markup=False, highlight=False, soft_wrap=True)
    if failed:
        sys.exit(2)
