from harness.report.redact import contains_secret, redact


def test_pem_blocks_kubeconfig_data_tokens_and_jwts_are_redacted():
    text = ("a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nb\n"
            "client-key-data: LS0tLS1CRUdJTiBFQyBQUklWQVRF\n"
            "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345\n"
            '{"token": "abcdef.0123456789abcdef"}\n--bootstrap-token=abcdef.0123456789abcdef\n'
            "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJlc2lnbmF0dXJl\n")
    clean = redact(text)
    for secret in ("MIIEpAIBAAKCAQEA", "LS0tLS1CRUdJTiBFQyBQUklWQVRF", "abcdefghijklmnopqrstuvwxyz012345",
                   "0123456789abcdef", "eyJzdWIiOiJzeXN0ZW0ifQ"):
        assert secret not in clean
    assert clean.startswith("a\n") and "\nb\n" in clean
    assert not contains_secret(clean)


def test_a_truncated_pem_block_is_still_redacted():
    assert "MIIE" not in redact("log tail -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC")


def test_ordinary_log_lines_and_code_are_left_alone():
    for text in ("I1122 etcd-client retrying: token bucket refilled", "s.token:e.tokens.length-1,end:-1",
                 "--tls-private-key-file=/run/pki/apiserver.key", "leader lease kube-scheduler renewed",
                 "--initial-cluster-token=quorum-ha3", '"--initial-cluster-token=quorum-ha3-1000-something"',
                 "--enable-bootstrap-token=true", "--bootstrap-token=/etc/kubernetes/token.csv"):
        assert not contains_secret(text), text


CORPUS = [  # (text with a secret, the secret): what issue #26 found the redactor missed, and its neighbours
    ('{"users": [{"user": {"client-key-data": "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t"}}]}',
     "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t"),
    ("certificate-authority-data: Zm9vYmFyYmF6cXV4cXV1eA==", "Zm9vYmFyYmF6cXV4cXV1eA=="),
    ("token: s3cr3t-t0k3n-value-1234", "s3cr3t-t0k3n-value-1234"),
    ("  password: hunter2hunter2", "hunter2hunter2"),
    ('{"password": "correct horse"}', "correct horse"),
    ("Authorization: Basic YWRtaW46c2VjcmV0", "YWRtaW46c2VjcmV0"),
    ("ca: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM=", "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM="),
]


def test_every_secret_of_the_corpus_is_redacted_and_found_by_the_report_scan():
    for text, secret in CORPUS:
        assert secret not in redact(text), text
        assert contains_secret(text), text  # the report scan (allure_report.secrets_in) uses the same patterns


def test_yaml_and_code_that_hold_no_secret_stay_as_they_are():
    for text in ("token: [redacted]", "tokens: 3", "password_file: /etc/x", "secretName: quorum-tls",
                 "s.token:e.tokens.length-1,end:-1", "passwordless: true"):
        assert not contains_secret(text), text
