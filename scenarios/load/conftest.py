"""The load suite's fixtures: the hollow nodes' readiness monitor and the API load itself."""

from __future__ import annotations

from collections.abc import Iterator

import allure
import pytest

from harness.checkers import slo
from harness.target.protocol import Target
from harness.history import History
from harness.load.generator import LoadGenerator, spec_for
from harness.load.scraped import ScrapedLoad
from harness.metrics import api_responsiveness, etcd_window
from harness.monitors.nodes import NodeReadiness
from harness.report.load_plots import plot_load


@pytest.fixture
def node_readiness(cluster: Target, history: History) -> Iterator[NodeReadiness | None]:
    if not cluster.hollow_nodes():  # someone else's nodes: not Quorum's to judge
        yield None
        return
    monitor = NodeReadiness(cluster, history).start()
    yield monitor
    if monitor.running:
        monitor.stop()


@pytest.fixture
def api_load(request: pytest.FixtureRequest, cluster: Target, history: History, profile,
             quorum_settings) -> Iterator[ScrapedLoad]:
    """The profile's API load, started; the test waits for it (or stops it). Afterwards the latency
    tables (client-side and server-side) and the load picture are attached to the report."""
    spec = spec_for(cluster, users=profile.load_users, rate_per_s=profile.load_rate_per_s, duration_s=profile.load_s)
    work = quorum_settings.history_dir / "load" / request.node.name
    load = ScrapedLoad(cluster, history, LoadGenerator(cluster, history, spec, work))
    load.generator.start()
    try:
        yield load
    finally:
        summary = load.stop()
        rows = slo.latency_table(history, profile.slo_window_s)  # every request, the warm-up included
        unanswered = f"\n(not counted: the apiservers on {', '.join(load.missing)}, unanswered at a scrape)" \
            if load.missing else ""
        allure.attach(slo.table_text(rows, profile.slo_window_s) +
                      f"\n\nachieved {summary.rps:.1f} requests/s over {summary.processes - summary.readers} locust "
                      f"process(es) and {summary.readers} plain reader(s) "
                      f"({spec.rate_per_s:.0f}/s planned, {spec.users} users, churn {spec.churn_per_s:.1f} objects/s)"
                      f"\n\n{api_responsiveness.table_text(load.server or [])}{unanswered}"
                      f"\n\n{etcd_window.table_text(load.etcd)}",
                      name="latency percentiles", attachment_type=allure.attachment_type.TEXT)
        picture = plot_load(history, work / "load.png", title=request.node.nodeid)
        if picture is not None:
            allure.attach.file(str(picture), name="latency and request rate", attachment_type=allure.attachment_type.PNG)
