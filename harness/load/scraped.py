"""The load generator with the windows the SLOs are judged on: every apiserver's latency histograms and every etcd
member's metrics scraped before the load starts and as soon as it stopped (docs/load.md)."""

from __future__ import annotations

from harness.checkers.server_slo import EVENT
from harness.history import History
from harness.load.generator import LoadGenerator, LoadSummary
from harness.metrics import api_responsiveness, etcd_window
from harness.target.protocol import Target


class ScrapedLoad:
    """The difference of the scrapes is recorded as a `server-side-latency` event (and etcd's as its own event)
    before anything judges it."""

    def __init__(self, cluster: Target, history: History, generator: LoadGenerator) -> None:
        self.cluster, self.history, self.generator = cluster, history, generator
        self.before = api_responsiveness.scrape(cluster)
        self.etcd_before = etcd_window.scrape(cluster)
        self.server: list[api_responsiveness.ServerRow] | None = None
        self.missing: list[str] = []
        self.etcd: list[etcd_window.MemberWindow] = []

    def wait(self) -> LoadSummary:
        summary = self.generator.wait()
        self._scrape_after()
        return summary

    def stop(self) -> LoadSummary:
        summary = self.generator.stop()
        self._scrape_after()
        return summary

    def _scrape_after(self) -> None:
        if self.server is None:
            self.server, self.missing = api_responsiveness.between(self.before, api_responsiveness.scrape(self.cluster))
            self.history.event(EVENT, rows=[r.as_dict() for r in self.server], apiservers_missing=self.missing)
            self.etcd, etcd_missing = etcd_window.between(self.etcd_before, etcd_window.scrape(self.cluster))
            self.history.event(etcd_window.EVENT, members=[r.as_dict() for r in self.etcd], missing=etcd_missing)
