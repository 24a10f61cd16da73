"""Keep keys, tokens and certificate bodies out of every report and log attachment."""

from __future__ import annotations

import re

# flags named like a token that name something instead: etcd's --initial-cluster-token tells one cluster's members
# from another's during bootstrap (etcd's configuration docs); it is printed on every etcd command line and in logs
IDENTIFIER_FLAGS = ("--initial-cluster-token",)

_PATTERNS = [
    (re.compile(r"-----BEGIN [A-Z0-9 ]+-----.*?-----END [A-Z0-9 ]+-----", re.S), "[redacted PEM block]"),
    (re.compile(r"-----BEGIN [A-Z0-9 ]+-----.*", re.S), "[redacted PEM block]"),  # truncated block
    # kubeconfig data in YAML or JSON, and any base64 of a PEM block ("-----BEGIN" is LS0tLS1CRUdJTi)
    (re.compile(r"((?:client-key|client-certificate|certificate-authority)-data[\"']?\s*:\s*[\"']?)[A-Za-z0-9+/=]+"),
     r"\1[redacted]"),
    (re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/=]*"), "[redacted base64 PEM]"),
    (re.compile(r"(?i)(authorization:\s*bearer\s+|bearer\s+)[A-Za-z0-9._\-]{8,}"), r"\1[redacted]"),
    (re.compile(r"(?i)(authorization:\s*basic\s+)[A-Za-z0-9+/=]{4,}"), r"\1[redacted]"),
    # YAML's unquoted `token: ...` / `password: ...` at the start of a line, and quoted passwords anywhere
    (re.compile(r"(?im)^(\s*[\"']?(?:token|password|secret)[\"']?:\s+)(?!\[redacted)[^\s\"'#]{8,}"), r"\1[redacted]"),
    (re.compile(r"(?i)(password[\"']?\s*[:=]\s*[\"'])[^\"']{4,}(?=[\"'])"), r"\1[redacted]"),
    # a token as a quoted value ("token": "...") or a flag (--token=..., --token ...); bare code such as
    # `token:e.tokens` in a report's JavaScript is not one
    (re.compile(r"(?i)(token[\"']?\s*[:=]\s*[\"'])[A-Za-z0-9._\-]{16,}(?=[\"'])"), r"\1[redacted]"),
    # a flag whose name ends in "token" carries one (--token, --bootstrap-token), but for the identifiers IDENTIFIER_FLAGS
    # names and values that are no token: a path, a yes or no
    (re.compile(r"(?i)(--(?!" + "|".join(f"{flag[2:]}[= ]" for flag in IDENTIFIER_FLAGS) +
                r")[a-z-]*token[= ])(?!/|true\b|false\b)\S{8,}"), r"\1[redacted]"),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"), "[redacted JWT]"),
    # a DER key or certificate in base64 starts its run; "MII" in the middle of one (an image a single-file report
    # embeds, after a "+" or "/") is chance, about once in 3 MB of base64
    (re.compile(r"(?<![A-Za-z0-9+/])(?:MII|MHc|MIG)[A-Za-z0-9+/]{60,}={0,2}"), "[redacted DER base64]"),
]


def redact(text: str) -> str:
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def contains_secret(text: str) -> bool:
    return redact(text) != text
