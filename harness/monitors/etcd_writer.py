"""etcd writer: unique keys written through the members' client URLs; a final read-back finds lost writes.

The pyetcd client marks an endpoint failed after one connection error and then refuses every call
("Trying to use a failed node", GOTCHAS.md), so after any error the worker drops its client and
connects to the next member. A write whose reply was lost is recorded as unknown (it may have been
applied), never as ok; only acknowledged writes count for durability.
"""

from __future__ import annotations

import secrets
import time
from urllib.parse import urlparse

import pyetcd
import pyetcd.exceptions

from harness.target.protocol import Target
from harness.history import History, Outcome, now
from harness.monitors.base import Monitor


def etcd_client(cluster: Target, url: str, timeout: float = 2.0):
    parsed = urlparse(url)
    credentials = cluster.etcd_credentials
    if credentials is not None:
        return pyetcd.client(host=parsed.hostname, port=parsed.port, ca_cert=str(credentials.ca),
                             cert_key=str(credentials.client.key), cert_cert=str(credentials.client.cert),
                             timeout=timeout)
    return pyetcd.client(host=parsed.hostname, port=parsed.port, timeout=timeout)


class EtcdWriter(Monitor):
    name = "etcd"

    def __init__(self, cluster: Target, history: History, *, rate: float = 20.0, workers: int = 2,
                 timeout: float = 2.0, prefix: str | None = None, **limits) -> None:
        super().__init__(cluster, history, rate=rate, workers=workers, **limits)
        self.timeout = timeout
        self.prefix = prefix or f"/quorum/writer-{secrets.token_hex(3)}/"
        self.urls = cluster.etcd_urls
        self._endpoint = list(range(workers))  # each worker starts at a different member
        self._clients: list = [None] * workers
        self._seq = [0] * workers

    def _client(self, worker: int):
        if self._clients[worker] is None:
            url = self.urls[self._endpoint[worker] % len(self.urls)]
            self._clients[worker] = (url, etcd_client(self.cluster, url, self.timeout))
        return self._clients[worker]

    def _drop(self, worker: int) -> None:
        _, client = self._clients[worker] or (None, None)
        if client is not None:
            try:
                client.close()
            except Exception:  # noqa: BLE001
                pass
        self._clients[worker] = None
        self._endpoint[worker] += 1

    def step(self, worker: int) -> None:
        self._seq[worker] += 1
        key = f"{self.prefix}{worker}/{self._seq[worker]:08d}"
        invoke = now()
        try:
            url, client = self._client(worker)
        except Exception as error:  # noqa: BLE001 - nothing was sent
            self.history.record(f"etcd-{worker}", "etcd.put", "etcd", invoke, Outcome.FAIL, value=key,
                                error=f"connect: {error}")
            self._drop(worker)
            return
        target = urlparse(url).hostname or url
        try:
            response = client.put(key, "v")
            self.history.record(f"etcd-{worker}", "etcd.put", target, invoke, Outcome.OK, value=key,
                                revision=int(response.header.revision))
        except ValueError as error:  # the client refused to send on a failed node: not applied
            self.history.record(f"etcd-{worker}", "etcd.put", target, invoke, Outcome.FAIL, value=key, error=str(error))
            self._drop(worker)
        except Exception as error:  # noqa: BLE001 - sent, reply lost or refused: may have been applied
            self.history.record(f"etcd-{worker}", "etcd.put", target, invoke, Outcome.UNKNOWN, value=key,
                                error=f"{type(error).__name__}: {error}"[:200])
            self._drop(worker)

    def finish(self) -> None:
        for worker in range(self.workers):
            self._drop(worker)
        self.read_back()

    def read_back(self, deadline_s: float = 30.0) -> list[str] | None:
        """Read every key under the prefix from whichever member answers (linearizable read)."""
        invoke = now()
        end = time.monotonic() + deadline_s
        error = ""
        while time.monotonic() < end:
            for url in self.urls:
                client = None
                try:
                    client = etcd_client(self.cluster, url, 5.0)
                    keys = sorted(meta.key.decode() for _, meta in client.get_prefix(self.prefix, keys_only=True))
                    self.history.record("etcd-check", "etcd.read_all", urlparse(url).hostname or url, invoke,
                                        Outcome.OK, value=keys)
                    return keys
                except Exception as exc:  # noqa: BLE001 - try the next member
                    error = f"{type(exc).__name__}: {exc}"
                finally:
                    if client is not None:
                        client.close()
            time.sleep(0.5)
        self.history.record("etcd-check", "etcd.read_all", "etcd", invoke, Outcome.FAIL, error=error[:200])
        return None
