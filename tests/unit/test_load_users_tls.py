"""The locust users' TLS context, as geventhttpclient builds it for each user's connection pool: it trusts the
cluster's CA and nothing else, with or without a client certificate (a public CA bundle would let any publicly signed
certificate stand in for the apiserver)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.pki import Authority

ROOT = Path(__file__).resolve().parents[2]
# in a child process: importing the users module imports locust, which monkey-patches the standard library with gevent
PROBE = """
import json
from geventhttpclient.connectionpool import _CA_CERTS, init_ssl_context
from harness.load import users

context = init_ssl_context(users.ApiClientUser.ssl_context_factory, _CA_CERTS)
print(json.dumps({"bundle": _CA_CERTS, "cas": context.cert_store_stats()["x509_ca"],
                  "names": [dict(n[0] for n in c["subject"]).get("commonName") for c in context.get_ca_certs()]}))
"""


@pytest.mark.parametrize("anonymous", [False, True])
def test_the_load_users_trust_only_the_clusters_ca(tmp_path, anonymous):
    authority = Authority(tmp_path / "ca", "quorum-test-ca")
    client = authority.issue("client", "load", client=True)
    spec = {"endpoint": "https://127.0.0.1:6443", "ca": str(authority.pair.cert), "cert": str(client.cert),
            "key": str(client.key), "nodes": [], "mix": {"readyz": 1}, "anonymous": anonymous}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=60,
                            env={"PATH": "/usr/bin:/bin", "QUORUM_LOAD_SPEC": str(tmp_path / "spec.json")})
    assert result.returncode == 0, result.stderr[-2000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["cas"] == 1 and seen["names"] == ["quorum-test-ca"], seen
