"""What a value from a user's file (a topology, an inventory, a policy) may be before it reaches a command line, a
config file, a connection or a report: one way to check it, used by every such field.

A value passes its `Rule` when it is text, holds no control character anywhere (no line break, tab, NUL, DEL, C1
control or Unicode line separator), and its rule's pattern matches the whole of it (`re.fullmatch`). Python's `$`
also matches before a final newline, which let `"--kubeconfig\\n"` past DENIED_FLAGS and a manifest_dir of
`"/etc/kubernetes/manifests\\n"` split a shell script on a host in two; a whole match with no control character
cannot. tests/unit/test_validation_properties.py throws generated strings at every rule and renders what passes
through the real command and config builders (docs/safety.md)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator

# C0 controls, DEL, C1 controls, and the Unicode line and paragraph separators (a line break to many parsers)
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


@dataclass(frozen=True)
class Rule:
    """A kind of value: its whole-match pattern, what it is called, how to write one, and (`more`) a further check
    returning a problem or None."""

    pattern: str
    what: str
    fix: str
    more: Callable[[str], str | None] | None = field(default=None, compare=False)

    def check(self, value: object) -> str:
        """`value` itself, or ValueError saying what is wrong with it and the fix."""
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not text ({self.what}); fix: {self.fix}")
        found = CONTROL.search(value)
        if found:
            raise ValueError(f"{value!r} holds a control character ({found.group()!r} at {found.start()}); "
                             f"fix: {self.fix}")
        if re.fullmatch(self.pattern, value) is None:
            raise ValueError(f"{value!r} is not {self.what}; fix: {self.fix}")
        problem = self.more(value) if self.more else None
        if problem:
            raise ValueError(f"{value!r}: {problem}; fix: {self.fix}")
        return value

    def matches(self, value: object) -> bool:
        try:
            self.check(value)
        except ValueError:
            return False
        return True



def _no_climbing(path: str) -> str | None:
    return "it climbs out with '..'" if ".." in PurePosixPath(path).parts else None


def _port_in_range(url: str) -> str | None:
    try:
        port = urlsplit(url).port
    except ValueError as error:  # urllib's own words: "Port out of range 0-65535"
        return str(error)
    return "port 0 is not a port" if port == 0 else None


# ---- topologies -------------------------------------------------------------------------------------------------

TOPOLOGY_NAME = Rule(r"[a-z][a-z0-9-]{0,30}", "a topology name", "use lower-case letters, digits and '-', starting "
                     "with a letter, at most 31 characters, e.g. ha3")
# it reaches network interface names (15 characters with Quorum's prefixes)
TOPOLOGY_HOST = Rule(r"[a-z][a-z0-9-]{0,11}", "a host name of a topology", "use lower-case letters, digits and '-', "
                     "starting with a letter, at most 12 characters, e.g. c1")
# rendered into haproxy.cfg: a URL path and nothing else
HEALTH_PATH = Rule(r"/[A-Za-z0-9._~/-]{0,100}", "a URL path", "write it as /readyz")
KEY_MODE = Rule(r"0?[0-7]{3}", "a file mode", 'write it as three octal digits, e.g. "0644"')
FLAG_NAME = Rule(r"--[a-z0-9][a-z0-9-]{0,99}", "a flag name", "write it as --flag-name")
# a flag's value reaches a command line as one argument: one line of at most 1000 characters
FLAG_VALUE = Rule(r".{0,1000}", "a flag's value", "give the value on one line of at most 1000 characters")
# flags that make a component (a root process) write files where they say, or that replace what Quorum wires up
# itself (its kubeconfigs, its certificates): not for a topology to set
DENIED_FLAGS = {"--audit-log-path", "--log-file", "--log-dir", "--cert-dir", "--write-config-to",
                "--kubeconfig", "--authentication-kubeconfig", "--authorization-kubeconfig",
                "--tls-cert-file", "--tls-private-key-file", "--client-ca-file"}


def checked_flags(flags: dict[str, str]) -> dict[str, str]:
    """extra_flags as a component will get them: names of the form --name, values on one line, and none of
    DENIED_FLAGS. (Whether the built binary has the flag is checked before a cluster starts:
    harness/components/flags.py.)"""
    for name, value in flags.items():
        FLAG_NAME.check(name)
        try:
            FLAG_VALUE.check(value)
        except ValueError as error:
            raise ValueError(f"{name}'s value: {error}") from None
        if name in DENIED_FLAGS:
            raise ValueError(f"{name} is not for a topology to set (it writes files on the host, or replaces what "
                             f"Quorum sets up); fix: remove it")
    return flags


# ---- inventories ------------------------------------------------------------------------------------------------

# RFC 1123 host names and the names Quorum gives hosts: they reach ssh, logs and file names
HOST_NAME = Rule(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?", "a host name",
                 "use lower-case letters, digits and '-', e.g. controller-0")
ADDRESS = Rule(r"[A-Za-z0-9]([A-Za-z0-9.:-]{0,251}[A-Za-z0-9])?", "an IP address or a DNS name",
               "give the address SSH reaches the host at")
USER = Rule(r"[a-z_][a-z0-9_-]{0,31}", "a login name", "give the account's name, e.g. core or ubuntu")  # useradd's
UNIT = Rule(r"[A-Za-z0-9@._:-]{1,200}\.service", "a systemd service name",
            "give the unit as name.service, e.g. etcd-member.service")
# an absolute path on a host, with no character a shell would read
HOST_PATH = Rule(r"/[A-Za-z0-9._/@+-]{0,1000}", "an absolute path of plain characters",
                 "give it as /dir/file without spaces or '..'", more=_no_climbing)
ETCD_URL = Rule(r"https://[A-Za-z0-9.:\[\]-]+:[0-9]{1,5}", "an etcd client URL over TLS",
                "write each as https://address:2379", more=_port_in_range)
API_URL = Rule(r"https://[A-Za-z0-9.:\[\]-]+(:[0-9]{1,5})?", "an https URL of the API",
               "write it as https://address:6443 (the load balancer's address)", more=_port_in_range)
CONTEXT = Rule(r".{1,253}", "a kubeconfig context's name", "give the context's name as kubectl config get-contexts "
               "lists it")

# ---- policies ---------------------------------------------------------------------------------------------------

# a pod's spec.schedulerName is a DNS-1123 subdomain (k8s.io/apimachinery validation, ValidatePodSpec)
SCHEDULER_NAME = Rule(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?", "a scheduler name",
                      "use lower-case letters, digits, '-' and '.', e.g. default-scheduler")
SUITE = Rule(r"[a-z][a-z0-9_]{0,40}", "a suite's name", "name a directory of scenarios/, e.g. etcd")
NODE_ID = Rule(r"scenarios/[A-Za-z0-9_./-]{1,200}\.py::[A-Za-z0-9_]{1,300}(\[[A-Za-z0-9_.:@=-]{1,200}\])?",
               "one scenario's node id", "name it as scenarios/<suite>/test_x.py::test_y[parameter]")
REASON = Rule(r".{1,500}", "a reason", "say why in one line of at most 500 characters")


def text_of(rule: Rule) -> object:
    """The pydantic field type of a rule's values."""
    return Annotated[str, AfterValidator(rule.check)]


# the field types of the models (harness/topology, harness/inventory, harness/gate)
TopologyName = text_of(TOPOLOGY_NAME)
TopologyHostName = text_of(TOPOLOGY_HOST)
HealthPath = text_of(HEALTH_PATH)
KeyMode = text_of(KEY_MODE)
HostName = text_of(HOST_NAME)
Address = text_of(ADDRESS)
User = text_of(USER)
Unit = text_of(UNIT)
HostPath = text_of(HOST_PATH)
EtcdUrl = text_of(ETCD_URL)
ApiUrl = text_of(API_URL)
ContextName = text_of(CONTEXT)
SchedulerName = text_of(SCHEDULER_NAME)
SuiteName = text_of(SUITE)
NodeId = text_of(NODE_ID)
Reason = text_of(REASON)


def checked_directory(path: str | Path, option: str) -> Path:
    """A directory a user names on the command line (--history-dir, --run-dir, --results, --output), absolute: not
    a file, not a symbolic link (what Quorum writes there must land there), and no control character in its path
    (paths reach config files and command lines). ValueError naming the option and the fix otherwise."""
    given = Path(path).expanduser()
    found = CONTROL.search(str(given))
    if found:
        raise ValueError(f"{option} {str(given)!r} holds a control character ({found.group()!r}); fix: give a plain "
                         "path")
    if given.is_symlink():
        raise ValueError(f"{option} {given} is a symbolic link (to {os.readlink(given)}); fix: give the directory "
                         "itself")
    if given.exists() and not given.is_dir():
        raise ValueError(f"{option} {given} is a file, not a directory; fix: give a new or existing directory")
    resolved = given.resolve()
    if resolved == Path(resolved.anchor):
        raise ValueError(f"{option} {given} is the file system's root; fix: give a directory of its own")
    return resolved
