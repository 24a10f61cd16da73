"""The `quorum` command."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from harness.backends import registry
from harness.backends.common import find_run
from harness.change.cli import change, install
from harness.errors import ClusterError, QuorumError
from harness.inventory.cli import inventory
from harness.toolchain.versions import (ETCD_UPGRADE_BINARIES, ETCD_UPGRADE_TO, ETCD_VERSION, KUBERNETES_DEFAULT,
                                       RELEASE_MATRIX, UPGRADE_BINARIES, UPGRADE_TO, kubernetes_version,
                                       matrix_binaries)

# CI logs are not terminals; keep tables on one line per row there
console = Console(width=None if sys.stdout.isatty() else 160)
errors = Console(stderr=True, soft_wrap=True)  # a message is one line however long: CI logs and tests read it


@click.group()
def cli() -> None:
    """Quorum: build disposable Kubernetes control planes, break them on purpose, judge what happens."""


@cli.group()
def toolchain() -> None:
    """Build or install every upstream binary into the versioned cache (~/.cache/quorum)."""


@toolchain.command("install")
@click.option("--kubernetes", default=KUBERNETES_DEFAULT, show_default=True, help="Kubernetes release to build")
@click.option("--etcd", default=ETCD_VERSION, show_default=True, help="etcd release to build")
@click.option("--upgrade-target", is_flag=True, help=f"instead, the control plane of {UPGRADE_TO} and etcd "
              f"{ETCD_UPGRADE_TO}, the releases the lifecycle suite upgrades to by default (pytest --upgrade-to, "
              "--etcd-upgrade-to)")
@click.option("--release-matrix", is_flag=True, help="instead, what the lifecycle matrix runs of the releases after the "
              f"default ({', '.join(RELEASE_MATRIX[1:])}): their control planes, and kubectl where a cluster is built")
@click.argument("names", nargs=-1)
def toolchain_install(kubernetes: str, etcd: str, upgrade_target: bool, release_matrix: bool,
                      names: tuple[str, ...]) -> None:
    """Install every binary (or only NAMES) that is missing from the cache."""
    from harness.toolchain.install import Toolchain

    chosen = [flag for flag, given in (("--upgrade-target", upgrade_target), ("--release-matrix", release_matrix))
              if given]
    if chosen and (kubernetes != KUBERNETES_DEFAULT or etcd != ETCD_VERSION or names or len(chosen) > 1):
        raise click.UsageError(f"{chosen[-1]} chooses the releases itself, so it takes no --kubernetes, --etcd, "
                               "names or other choice of releases: drop one")
    if release_matrix:
        entries = []
        for release in RELEASE_MATRIX[1:]:
            chain = Toolchain(release)
            entries += chain.install(list(matrix_binaries(release)))
    elif upgrade_target:
        entries = Toolchain(UPGRADE_TO).install(list(UPGRADE_BINARIES))
        chain = Toolchain(etcd=ETCD_UPGRADE_TO)
        entries += chain.install(list(ETCD_UPGRADE_BINARIES))
    else:
        chain = Toolchain(kubernetes, etcd=etcd)
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


@cli.group()
def images() -> None:
    """Container images, built here from Debian's archive and the toolchain (no registry)."""


@images.command("build")
@click.option("--kind", "with_kind", is_flag=True,
              help="also kind's node image (control-plane images preloaded) and its load balancer stand-in")
def images_build(with_kind: bool) -> None:
    """Build every image that is missing (starts a Docker engine if none runs and it may)."""
    from harness.backends.docker import base_image
    from harness.backends.docker.engine import ensure_engine

    say = lambda m: errors.print(m, highlight=False)  # noqa: E731 - progress goes to stderr
    engine = ensure_engine(say=say)
    built = [("node base", *base_image.build(engine, say=say))]
    if with_kind:
        from harness.backends.kind import images as kind_images
        from harness.backends.kind import node_image

        built.append(("kind node", *node_image.build(engine, say=say)))
        base_tag = base_image.Recipe().tag
        for what, current, build in (("kind load balancer", kind_images.lb_standin_current, kind_images.build_lb_standin),
                                     ("iperf3 pod", kind_images.iperf3_current, kind_images.build_iperf3)):
            started, fresh = time.monotonic(), not current(engine, base_tag)
            built.append((what, build(engine, say=say), time.monotonic() - started if fresh else 0.0))
    for what, tag, took in built:
        console.print(f"{what} {tag}: " + (f"built in {took:.0f}s" if took else "present (cached by recipe)"))


@images.command("bundle")
@click.argument("release")
@click.argument("directory", type=click.Path(path_type=Path))
def images_bundle(release: str, directory: Path) -> None:
    """Write RELEASE's kubeadm, kubelet and kubectl and its control-plane and kube-proxy images (one archive) to
    DIRECTORY, for kubeadm nodes that reach no registry: what the reference upgrade
    (clusters/procedures/kubeadm-upgrade.yaml) copies to kind's nodes. Builds the release first if it is missing
    (quorum toolchain install --kubernetes RELEASE kubeadm kubelet kubectl kube-proxy ...)."""
    from harness.backends.docker.engine import ensure_engine
    from harness.backends.kind import release_bundle

    say = lambda m: errors.print(m, highlight=False)  # noqa: E731 - progress goes to stderr
    kubernetes_version(release)  # both checked before an engine is started for nothing
    release_bundle.vacant(directory)
    bundle = release_bundle.write(ensure_engine(say=say), release, directory, say=say)
    console.print(f"{bundle.release}: {bundle.directory} ({', '.join(bundle.images)})")


@images.command("status")
def images_status() -> None:
    """Each image Quorum needs: tag (a hash of its recipe), present or missing, size."""
    from harness.backends.docker import base_image
    from harness.backends.docker.engine import ensure_engine
    from harness.backends.kind import images as kind_images
    from harness.backends.kind import node_image

    engine = ensure_engine(say=lambda m: errors.print(m, highlight=False))
    table = Table("image", "tag", "present", "size", "recipe")

    def row(what: str, tag: str, present: bool, recipe: str) -> None:
        size = f"{engine.client.image.inspect(tag).size / 2**20:.0f} MiB" if present else "-"
        table.add_row(what, tag, "yes" if present else "[red]missing[/red]", size, recipe)

    recipe = base_image.Recipe()
    present = base_image.exists(engine, recipe)
    row("node base", recipe.tag, present, f"debootstrap {recipe.suite} + {len(recipe.packages)} packages + etcd {recipe.etcd}")
    row("kind node", node_image.tag_for(), node_image.exists(engine),
        "kind's base files + Debian containerd + toolchain binaries and images (--kind)")
    row("kind load balancer", kind_images.LB_IMAGE, kind_images.lb_standin_current(engine, recipe.tag),
        "HAProxy stand-in for kind's Envoy (--kind)")
    row("iperf3 pod", kind_images.iperf3_tag(recipe.tag), kind_images.iperf3_current(engine, recipe.tag),
        "iperf3 and its libraries from the node base image (--kind; the bandwidth suite on kind)")
    console.print(table)
    if not present:
        errors.print("an image is missing; fix: quorum images build")
        sys.exit(1)


@cli.command()
@click.argument("topology", default="clusters/ha3.yaml", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--run-dir", type=click.Path(file_okay=False, path_type=Path), help="default ~/.cache/quorum/runs/<name> (keys stay out of reports/)")
@click.option("--timeout", default=None, type=float, help="seconds to wait for readiness (default: the backend's)")
@click.option("--backend", type=click.Choice(registry.public_names()), default="process", show_default=True,
              help="; ".join(f"{name}: {registry.get(name).summary}" for name in registry.public_names()))
def up(topology: Path, run_dir: Path | None, timeout: float | None, backend: str) -> None:
    """Bring up TOPOLOGY and return when the whole cluster is healthy (API, etcd, leases, load balancer)."""
    target = registry.get(backend).up(topology, run_dir, say=lambda m: errors.print(m, highlight=False, markup=False),
                                      timeout_s=timeout)
    console.print(f"cluster {target.name} is ready: {target.api_endpoint}", markup=False)
    console.print(f"  kubeconfig: {target.admin_kubeconfig}", markup=False)
    console.print(f"  run dir:    {target.run_dir}", markup=False)


@cli.command()
@click.argument("cluster", required=False)
@click.option("--all", "everything", is_flag=True, help="remove every run and every leftover of crashed runs")
@click.option("--force", is_flag=True, help="even a run a live session (pytest, a bench) is using")
def down(cluster: str | None, everything: bool, force: bool) -> None:
    """Remove a cluster: its hosts, processes, network, firewall rules, keys and state."""
    from harness.run.owner import refuse_if_owned
    from harness.run.state import registered_runs

    runs = registered_runs().values() if everything else [find_run(cluster)]
    for run_dir in runs if not force else []:
        refuse_if_owned(run_dir, "quorum down")
    removed = registry.down_all() if everything else registry.down(find_run(cluster))
    for item in removed:
        console.print(f"removed {item}", highlight=False, markup=False)
    console.print("down" if removed or not everything else "nothing to remove")


@cli.command()
@click.argument("cluster", required=False)
def status(cluster: str | None) -> None:
    """Hosts, components, pids, restarts, health, the etcd leader, the lease holders and what is unhealthy."""
    from harness.target.capabilities import Capability
    from harness.topology import Component

    c = registry.open_target(find_run(cluster))
    table = Table("host", "component", "pid", "restarts", "health",
                  title=escape(f"{c.name} (run {c.run_id}, {c.backend} backend) {c.api_endpoint}"))
    for component in Component:
        for host in c.component_hosts(component):
            pid, healthy = c.pid(component, host), c.health.component_healthy(component, host)
            try:
                restarts = str(c.restarts(component, host))
            except QuorumError:
                restarts = "?"
            table.add_row(escape(host), component.value, str(pid or "-"), restarts,
                          "[green]ok[/green]" if healthy else "[red]down[/red]")
    console.print(table)
    console.print(f"etcd leader: {c.etcd.leader() or 'none'}", markup=False)
    if Capability.LB_ADMIN in c.capabilities() and c.hosts("loadbalancer"):
        try:
            lb = ", ".join(f"{server} {state}" for server, state in c.health.lb_server_states().items())
        except ClusterError as error:
            lb = f"unreadable ({error.problem})"
        console.print(f"load balancer: {lb}", markup=False)
    for lease, host in c.health.lease_holders().items():
        console.print(f"{lease} lease: {host or 'unheld'}", markup=False)
    expected = c.hollow_nodes()
    if expected:
        from harness.load.hollow import node_readiness

        total, ready = node_readiness(c.api, c.hollow_selector())
        console.print(f"hollow nodes: {len(ready)} Ready of {total} ({len(expected)} expected)")
    problems = c.health.problems()
    console.print("healthy" if not problems else f"unhealthy: {'; '.join(problems)}", markup=False)


@cli.command()
@click.argument("component")
@click.option("--cluster", default=None)
@click.option("-n", "--lines", default=50, show_default=True)
def logs(component: str, cluster: str | None, lines: int) -> None:
    """Show the log of COMPONENT[@HOST] (e.g. kube-apiserver@c1)."""
    from harness.topology import Component

    c = registry.open_target(find_run(cluster))
    name, _, only = component.partition("@")
    known = [value.value for value in Component]
    if name not in known:
        raise click.UsageError(f"no component {name!r}; components: {', '.join(known)}")
    hosts = [h for h in c.component_hosts(name) if not only or h == only]
    if not hosts:
        raise click.UsageError(f"{component!r} runs nowhere; {name} runs on {', '.join(c.component_hosts(name)) or 'no host'}")
    for host in hosts:
        console.rule(f"{name}@{host}")
        console.print(c.log_tail(name, host, lines) or "(no log yet)", highlight=False, markup=False)


@cli.command()
@click.argument("cluster", required=False)
def kubeconfig(cluster: str | None) -> None:
    """Print the path of the admin kubeconfig (it points at the load balancer)."""
    console.print(str(registry.open_target(find_run(cluster)).admin_kubeconfig), markup=False)


@cli.command()
@click.argument("cluster", required=False)
@click.option("--force", is_flag=True, help="even a run a live session (pytest, a bench) is using; with --target, "
              "faults a harness on another machine injected (say that harness is gone)")
@click.option("--target", "inventory", type=click.Path(dir_okay=False, path_type=Path),
              help="an inventory: heal a cluster Quorum did not build from the records on its hosts")
def heal(cluster: str | None, force: bool, inventory: Path | None) -> None:
    """Heal faults left by a harness that was killed: journaled faults, rules, shaping, paused processes.
    Every run and every fault is tried; exit 1 names each that could not be healed. A run a live session
    owns is left to it (its faults are its own, healed when it ends) unless --force."""
    from harness.backends.common import require_root
    from harness.faults.sweep import heal_cluster, heal_work_leftovers
    from harness.run.owner import owner_of, refuse_if_owned
    from harness.run.state import registered_runs

    if inventory is not None:
        if cluster:
            raise click.UsageError("give a run (CLUSTER) or --target INVENTORY, not both")
        heal_inventory(inventory, force)
        return
    require_root("heal")
    if cluster:
        run_dirs = [find_run(cluster)]
        if not force:
            refuse_if_owned(run_dirs[0], "quorum heal")
    else:
        run_dirs = []
        for run_dir in (d for d in registered_runs().values() if (d / "state.json").exists()):
            live = None if force else owner_of(run_dir)
            if live is not None:
                console.print(f"{run_dir}: left alone, in use by {live.describe()}", highlight=False, markup=False)
            else:
                run_dirs.append(run_dir)
    failed = []
    for run_dir in run_dirs:
        try:
            c = registry.open_target(run_dir)
            report = heal_cluster(c)
            heal_work_leftovers(c, report, force)
        except Exception as error:  # noqa: BLE001 - one broken run must not keep the others from being healed
            failed.append(f"{run_dir}: {error}")
            continue
        console.print(f"{c.name}: " + ("; ".join(report.healed) if report.healed else "nothing to heal"),
                      highlight=False, markup=False)
        for alone in report.left_alone:
            console.print(f"{c.name}: left alone: {alone}", highlight=False, markup=False)
        failed += [f"{c.name}: {problem}" for problem in report.failed]
    if not run_dirs:
        console.print("no cluster to heal")
    for problem in failed:
        errors.print(f"not healed: {problem}", highlight=False, markup=False)
    if failed:
        sys.exit(1)


def heal_inventory(inventory: Path, force: bool) -> None:
    report = registry.get("remote").heal_from_hosts(inventory, force)
    console.print("; ".join(report.healed) if report.healed else "nothing to heal", highlight=False, markup=False)
    for alone in report.left_alone:
        console.print(f"left alone: {alone}", highlight=False, markup=False)
    for problem in report.failed:
        errors.print(f"not healed: {problem}", highlight=False, markup=False)
    if report.failed:
        sys.exit(1)


@cli.command()
@click.option("--policy", "policy_path", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--results", type=click.Path(file_okay=False, path_type=Path),
              help="a run's results directory (default: the newest reports/histories/*)")
@click.option("--baseline", type=click.Path(file_okay=False, path_type=Path),
              help="one earlier run's results to compare with (instead of the store's promoted runs)")
@click.option("--store", type=click.Path(file_okay=False, path_type=Path),
              help="where the runs the gate promoted are kept: each run is compared with them, and kept there when "
                   "promoted (./run.sh scenarios uses reports/promoted)")
def gate(policy_path: Path, results: Path | None, baseline: Path | None, store: Path | None) -> None:
    """Judge a run against a policy: exit 0 promote, 1 block, 2 cannot judge."""
    from harness.gate.command import run

    sys.exit(run(policy_path, results, baseline, store, console, errors))


@cli.command()
@click.option("--results", default="reports/allure-results", show_default=True,
              type=click.Path(file_okay=False, path_type=Path))
@click.option("--output", default="reports/allure-report", show_default=True,
              type=click.Path(file_okay=False, path_type=Path))
@click.option("--histories", default="reports/histories", show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="runs whose figures the report trends")
@click.option("--gate", "gate_json", type=click.Path(dir_okay=False, path_type=Path),
              help="the gate.json `quorum gate` wrote: the report shows the decision as a page of its own (gate.html)")
def report(results: Path, output: Path, histories: Path, gate_json: Path | None) -> None:
    """Render allure-results as an HTML report (Allure 3, no Java), with history and figure trends across runs."""
    from harness.report.allure_report import generate
    from harness.report.trends import add_to_results

    trends = add_to_results(histories, results) if results.is_dir() and histories.is_dir() else None
    index = generate(results, output, gate=gate_json, trends=trends)
    console.print(f"report: {index}" + (f"; the gate's decision: {index.parent / 'gate.html'}" if gate_json else ""),
                  markup=False)


@cli.command()
@click.argument("results", required=False, type=click.Path(path_type=Path))
def analyze(results: Path | None) -> None:
    """Judge a saved run again: every checker each History records, re-run on the History as it then was, with the
    arguments the scenario gave it (RESULTS: a run's results directory, default the newest reports/histories/*, or
    one History file). Exit 0 when every verdict is the same, 1 when one differs."""
    from harness.checkers.rejudge import Again, rejudge, rejudge_directory
    from harness.gate.command import newest_results
    from harness.history import History

    results = results or newest_results()
    if results.is_file():
        found = {results.stem: rejudge(History.load(results))}
    elif results.is_dir():
        found = rejudge_directory(results)
    else:
        raise QuorumError(f"{results} is neither a run's results directory nor a History file",
                          "give a directory under reports/histories/, or one of its .jsonl files")
    runs = [(test, run) for test, rejudged in found.items() for run in rejudged]
    if not runs:
        raise QuorumError(f"no History under {results} records a checker's run",
                          "analyze a run made by this version of Quorum (each checker records its run)")
    table = Table("test", "checker", "then", "now", "again", title=f"{results}: {len(runs)} checker runs")
    for test, run in runs:
        table.add_row(escape(test), run.checker, run.then_status, run.now_status,
                      run.again.value + (f" ({run.why})" if run.why else ""))
    console.print(table)
    differ = [run for _, run in runs if run.again is Again.DIFFERENT]
    cannot = sum(run.again is Again.CANNOT for _, run in runs)
    console.print(f"{len(runs) - len(differ) - cannot} the same, {len(differ)} different, {cannot} cannot be "
                  "re-judged", markup=False)
    sys.exit(1 if differ else 0)


cli.add_command(inventory)
cli.add_command(change)
cli.add_command(install)


def main() -> None:
    from harness.faults.signals import interrupt_on_signals

    interrupt_on_signals()  # SIGTERM and SIGHUP unwind like Ctrl-C: a half-built cluster is torn down
    try:
        cli(standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt):
        errors.print("aborted")
        sys.exit(130)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except QuorumError as error:  # as text, never as markup: a message may hold [brackets] (paths, regexes)
        errors.print(f"error: {error.problem}", highlight=False, markup=False)
        if error.fix:
            errors.print(f"fix: {error.fix}", highlight=False, markup=False)
        sys.exit(2)


if __name__ == "__main__":
    main()
