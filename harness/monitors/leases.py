"""Who leads: the kube-controller-manager and kube-scheduler lease holders, and the etcd leader.

Leases are read with one LIST of kube-system leases every `period` (0.1 s by default), through the
load balancer and, if that fails, from each apiserver directly. The etcd leader is the leader that a
majority of members report, each member polled by its own thread (a partitioned member must not slow
the others' sampling). A "leader" event is recorded at each change, timestamped at the midpoint of
the poll that saw it, so a failover is timed to within one period.

A holder is an identity: for a lease "<host>_<uuid>" (a restarted process on the same host is a new
holder), for etcd the member name. Events carry `holder` (identity) and `host`.

Where leases are read from is the target's choice (lease_clients: on kind, through kind's load balancer only), and
holders are named by the target's host names.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import requests

from harness.target.health import LEASES
from harness.target.protocol import Target
from harness.errors import FaultError
from harness.history import History, now
from harness.wait import until

SUBJECTS = (*LEASES, "etcd")
RENEWED = "lease.renewed"  # event: a lease's renewTime changed since the last look (subject, holder)
START_WAIT_S = 10.0  # start() waits this long at most for every subject's first answer


@dataclass(frozen=True)
class RenewalSeen:
    """A lease's renewTime as last observed, and the interval its write fell in: after the start of the last LIST
    that did not show it (`after`), before the end of the first LIST that did (`before`), on the monitor's clock."""
    renew_time: str
    after: float
    before: float


def mid_sleep(seen: RenewalSeen, retry_period_s: float) -> float | None:
    """The moment halfway through the holder's sleep after the renewal `seen`: client-go's holder sleeps one retry
    period after each renewal, so the sleep surely spans [before, after + retry period] and its middle is furthest
    from both renewals. None when the write's moment is known too loosely (over half a retry period) to place it."""
    spread = seen.before - seen.after
    if spread > retry_period_s / 2:
        return None
    return (seen.after + seen.before + retry_period_s) / 2


class LeaderWatcher:
    name = "leases"

    def __init__(self, cluster: Target, history: History, *, period: float = 0.1, max_s: float = 1800.0) -> None:
        self.cluster = cluster
        self.history = history
        self.period = period
        self.max_s = max_s
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self.current: dict[str, str | None] = {}
        self._member_views: dict[str, tuple[int, float]] = {}
        self._polled: set[str] = set()  # members polled at least once: etcd is judged only after all were
        self._judging = threading.Lock()  # one etcd judgement at a time, so the record is in judgement order
        self._last_t: dict[str, float] = {}
        self._renewed: dict[str, RenewalSeen] = {}  # each lease's last observed spec.renewTime
        self._names: dict[int, str] = {}
        self.samples: dict[str, int] = {}  # polls done per source, for the sampling benchmark
        self._clients = cluster.lease_clients()

    # ---- recording -----------------------------------------------------------------------------

    def _observe(self, subject: str, holder: str | None, t: float, **attrs) -> None:
        with self._lock:
            if subject in self.current and self.current[subject] == holder:
                return
            self.current[subject] = holder
            # a poll's midpoint can be earlier than that of a poll judged before it (member threads overlap): keep
            # a subject's events in the order they were judged, or the record could put a stale "no leader" last
            t = max(t, self._last_t.get(subject, t) + 1e-6)
            self._last_t[subject] = t
            # recorded under the lock: whoever reads `current` (start() does) finds its event already in the record
            host = (self.cluster.health.lease_host(holder) if subject != "etcd" else holder) if holder else None
            self.history.event("leader", t=t, subject=subject, holder=holder, host=host, **attrs)

    def _poll_leases(self) -> None:
        path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
        answered_since = 0.0  # the start of the last LIST that answered: a renewal it did not show came after it
        while not self._stop.is_set():
            invoke = now()
            items = None
            for client in self._clients:
                try:
                    response = client.get(path, timeout=0.5)
                    if response.status_code == 200:
                        items = {i["metadata"]["name"]: i.get("spec", {}) for i in response.json()["items"]}
                        break
                except (requests.RequestException, ValueError):
                    continue
            t = (invoke + now()) / 2
            self.samples["leases"] = self.samples.get("leases", 0) + 1
            if items is not None:
                answered = now()
                for name in LEASES:
                    spec = items.get(name, {})
                    identity = spec.get("holderIdentity") or None
                    renew_time = spec.get("renewTime") or ""
                    with self._lock:
                        seen = self._renewed.get(name)
                        if seen is None or seen.renew_time != renew_time:
                            self._renewed[name] = RenewalSeen(renew_time, answered_since, answered)
                    # the first look shows a renewal of any age; each change after it, one made since the last look
                    if seen is not None and seen.renew_time != renew_time and identity and renew_time:
                        # a live leader writes its lease every retry period: the gaps between these are how long
                        # the lease went without one (harness/checkers/change.py, leader-continuity)
                        self.history.event(RENEWED, t=t, subject=name, holder=identity)
                    self._observe(name, identity, t, transitions=spec.get("leaseTransitions"))
                answered_since = invoke
            self._stop.wait(max(0.0, self.period - (now() - invoke)))

    def _poll_member(self, url: str) -> None:
        while not self._stop.is_set():
            invoke = now()
            status = self.cluster.etcd.status(url, timeout=0.3)
            t = (invoke + now()) / 2
            self.samples[url] = self.samples.get(url, 0) + 1
            self._member_answered(url, status.leader_id if status is not None else None, t)
            self._stop.wait(max(0.0, self.period - (now() - invoke)))

    def _member_answered(self, url: str, leader_id: int | None, t: float) -> None:
        """One member's answer at time t (0: it knows no leader; None: it did not answer), and the etcd judgement
        that follows it. A member that did not answer keeps its last view until that is stale: one slow status
        call on a busy machine is not a lost leader (docs/design.md, 2026-12-02)."""
        with self._judging:
            with self._lock:
                self._polled.add(url)
                if leader_id:
                    self._member_views[url] = (leader_id, t)
                elif leader_id == 0:
                    self._member_views.pop(url, None)
                if len(self._polled) < len(self.cluster.etcd_urls):
                    return  # before every member answered once, "no majority" means "not asked yet"
            self._judge_etcd(t)

    def _judge_etcd(self, t: float) -> None:
        members = len(self.cluster.etcd_urls)
        with self._lock:
            fresh = [leader for leader, seen in self._member_views.values() if t - seen < 1.0]
        agreed = next((lid for lid in set(fresh) if fresh.count(lid) > members // 2), None)
        if agreed is not None and agreed not in self._names:
            self._names.update(self.cluster.etcd.members(timeout=0.5))
        self._observe("etcd", self._names.get(agreed) if agreed is not None else None, t)

    # ---- control -------------------------------------------------------------------------------

    def start(self) -> "LeaderWatcher":
        self.cluster.ensure_local()
        self._names = self.cluster.etcd.members(timeout=1.0)
        targets = [(self._poll_leases, ()), *((self._poll_member, (url,)) for url in self.cluster.etcd_urls)]
        for function, args in targets:
            thread = threading.Thread(target=self._bounded, args=(function, args), daemon=True, name="leases")
            thread.start()
            self._threads.append(thread)
        # a scenario may inject a fault right after start: the record must already say who led before it. A
        # cluster without an etcd leader is waited for until the deadline (CI on docker: one member's first
        # status answer was slow, "no leader" was taken as the answer and the failover had no "before")
        until(self._judged_all, START_WAIT_S, self.period / 2)
        return self

    def _judged_all(self) -> bool:
        """Every subject has an answer: one LIST answers for every lease (a missing lease is an answer); etcd
        answers with a named leader that a majority of members report."""
        with self._lock:
            return all(subject in self.current for subject in LEASES) and bool(self.current.get("etcd"))

    def _bounded(self, function, args) -> None:
        timer = threading.Timer(self.max_s, self._stop.set)
        timer.daemon = True
        timer.start()
        function(*args)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(5)
        self._threads.clear()

    def __enter__(self) -> "LeaderWatcher":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- queries for scenarios -----------------------------------------------------------------

    def holder(self, subject: str, timeout: float = 10.0) -> str:
        """The host of the current holder (waiting up to `timeout` for one to be observed): a topology host,
        or on kind a node's short name."""
        identity = self.identity(subject, timeout)
        return identity if subject == "etcd" else self.cluster.health.lease_host(identity)

    def identity(self, subject: str, timeout: float = 10.0) -> str:
        """The current holder's identity (waiting up to `timeout` for one to be observed)."""
        holder = until(lambda: self._current(subject), timeout, self.period / 2).value
        if not holder:
            raise FaultError(f"no {subject} leader observed within {timeout:.0f}s")
        return holder

    def _current(self, subject: str) -> str | None:
        with self._lock:
            return self.current.get(subject)

    def wait_for_renewal(self, subject: str, timeout: float) -> RenewalSeen | None:
        """Wait until the lease's holder renews it (its renewTime changes): what was seen, or None on timeout."""
        with self._lock:
            before = self._renewed.get(subject)
        def renewed() -> RenewalSeen | None:
            with self._lock:
                seen = self._renewed.get(subject)
            return seen if seen is not None and (before is None or seen.renew_time != before.renew_time) else None

        return until(renewed, timeout, self.period / 4).value

    def wait_for_renew_sleep(self, subject: str, retry_period_s: float, timeout: float) -> bool:
        """Return halfway through the holder's sleep between two renewals (mid_sleep), so that a fault lands
        outside any renewal in flight; False if no renewal could be placed within `timeout`."""
        deadline = time.monotonic() + timeout

        def placed() -> bool:
            seen = self.wait_for_renewal(subject, max(0.0, deadline - time.monotonic()))
            moment = None if seen is None else mid_sleep(seen, retry_period_s)
            if moment is None or moment < now():  # none in the time left, or seen too late or too loosely: the next
                return False
            time.sleep(max(0.0, moment - now()))
            return True

        return until(placed, timeout, 0.0).held

    def wait_for_new_holder(self, subject: str, old: str, timeout: float) -> str | None:
        """Wait until an identity other than `old` leads; None on timeout (the checker judges the record)."""
        def new_holder() -> str | None:
            holder = self._current(subject)
            return holder if holder and holder != old else None

        return until(new_holder, timeout, self.period / 2).value
