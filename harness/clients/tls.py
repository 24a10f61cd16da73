"""One TLS context per credential for requests' sessions.

For every new connection, urllib3 builds a fresh SSLContext and reads the CA bundle and the client's key pair from
disk (its ssl_wrap_socket). A prober that opens a connection per request, as kubectl does, spent about half of its
CPU samples opening connections, part of it on that (docs/design.md, choices). This adapter hands urllib3 a
context built once per CA and client pair (and per version of their files: inode, size, modification time), so a
rewritten certificate still takes effect on the next connection. Verification is unchanged: urllib3 still checks
the chain and the host name with it.
"""

from __future__ import annotations

import os
import ssl
import threading
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3.util.ssl_ import create_urllib3_context

_CONTEXTS: dict[tuple, ssl.SSLContext] = {}
_LOCK = threading.Lock()
_MAX_CONTEXTS = 64  # a long session meets many clusters' CAs: start afresh rather than grow without bound
_FILE_KEYS = ("ca_certs", "ca_cert_dir", "cert_file", "key_file")


def _files(verify: str | bool, cert: str | tuple[str, str] | None) -> list[str]:
    paths = [verify] if isinstance(verify, str) else []
    paths += [cert] if isinstance(cert, str) else list(cert or ())
    return [path for path in paths if path]


def context_for(verify: str | bool, cert: str | tuple[str, str] | None) -> ssl.SSLContext:
    """The context for a CA bundle (a file or a directory; False: no verification) and a client pair, built once
    per version of those files."""
    files = _files(verify, cert)
    key = (verify, tuple(cert) if isinstance(cert, (list, tuple)) else cert,
           tuple((stat.st_ino, stat.st_size, stat.st_mtime_ns) for stat in map(os.stat, files)))
    with _LOCK:
        context = _CONTEXTS.get(key)
        if context is None:
            context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED if verify else ssl.CERT_NONE)
            if isinstance(verify, str):
                if os.path.isdir(verify):
                    context.load_verify_locations(capath=verify)
                else:
                    context.load_verify_locations(cafile=verify)
            if cert:
                context.load_cert_chain(*((cert,) if isinstance(cert, str) else tuple(cert)))
            if len(_CONTEXTS) >= _MAX_CONTEXTS:
                _CONTEXTS.clear()
            _CONTEXTS[key] = context
    return context


class CachedContextAdapter(HTTPAdapter):
    """requests' adapter with context_for's context on https; `verify=True` (the system's CAs) is left to requests,
    which preloads its own context for it."""

    def build_connection_pool_key_attributes(self, request: Any, verify: Any, cert: Any = None
                                             ) -> tuple[dict[str, Any], dict[str, Any]]:
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(request, verify, cert)
        if host_params.get("scheme") == "https" and verify is not True:
            for name in _FILE_KEYS:
                pool_kwargs.pop(name, None)
            pool_kwargs["ssl_context"] = context_for(verify, cert)
        return host_params, pool_kwargs

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        super().cert_verify(conn, url, verify, cert)  # keeps requests' checks that the files exist
        if url.lower().startswith("https") and verify is not True:
            for name in _FILE_KEYS:  # the pool's context holds them: urllib3 would load them again per connection
                setattr(conn, name, None)
