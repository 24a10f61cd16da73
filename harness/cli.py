"""The `quorum` command."""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.table import Table

from harness.errors import QuorumError
from harness.toolchain.versions import KUBERNETES_DEFAULT

# CI logs are not terminals; keep tables on one line per row there
console = Console(width=None if sys.stdout.isatty() else 160)
errors = Console(stderr=True)


@click.group()
def cli() -> None:
    """Quorum: build disposable Kubernetes control planes, break them on purpose, judge what happens."""


@cli.group()
def toolchain() -> None:
    """Build or install every upstream binary into the versioned cache (~/.cache/quorum)."""


@toolchain.command("install")
@click.option("--kubernetes", default=KUBERNETES_DEFAULT, show_default=True, help="Kubernetes release to build")
@click.argument("names", nargs=-1)
def toolchain_install(kubernetes: str, names: tuple[str, ...]) -> None:
    """Install every binary (or only NAMES) that is missing from the cache."""
    from harness.toolchain.install import Toolchain

    chain = Toolchain(kubernetes)
    entries = chain.install(list(names) or None)
    console.print(f"{len(entries)} binaries ready in {chain.cache.root}")


@toolchain.command("status")
@click.option("--kubernetes", default=KUBERNETES_DEFAULT, show_default=True)
def toolchain_status(kubernetes: str) -> None:
    """Table of binaries: wanted version, version found by running it, path, source."""
    from harness.toolchain.install import Toolchain

    rows = Toolchain(kubernetes).status()
    table = Table("binary", "wanted", "found", "path", "source")
    for row in rows:
        found = row.found if row.ok else f"[red]{row.found}[/red]"
        table.add_row(row.name, row.wanted, found, row.path, row.source)
    console.print(table)
    if not all(row.ok for row in rows):
        errors.print("some binaries are missing or at the wrong version; fix: quorum toolchain install")
        sys.exit(1)


def main() -> None:
    try:
        cli(standalone_mode=False)
    except click.exceptions.Abort:
        errors.print("aborted")
        sys.exit(130)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except QuorumError as error:
        errors.print(f"[bold red]error:[/bold red] {error.problem}", highlight=False)
        if error.fix:
            errors.print(f"[bold]fix:[/bold] {error.fix}", highlight=False)
        sys.exit(2)


if __name__ == "__main__":
    main()
