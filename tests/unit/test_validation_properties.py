"""Every rule of harness/validation.py, thrown generated strings (Hypothesis) and then used as Quorum uses it: a value
a rule accepts is rendered through the real command line and config builders, and comes out whole. The oracle: each
argument of a command line, each rendered config line and each written kubeconfig's value equals the validated
value (it is one token, on one line); a rule never accepts a control character or a value with text around it.

The budget is bounded (QUORUM_FUZZ_EXAMPLES, 60 examples per property by default) so it runs in presubmit."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from harness import validation
from harness.components import Layout, specs_for
from harness.components.haproxy import config as haproxy_config
from harness.components.scheduler import configuration as scheduler_configuration
from harness.components.static_pod import StaticPods
from harness.components.systemd_keeper import SystemdUnits
from harness.topology import load_topology, parse_topology
from harness.validation import CONTROL, Rule

ROOT = Path(__file__).resolve().parents[2]
BUDGET = settings(max_examples=int(os.environ.get("QUORUM_FUZZ_EXAMPLES", "60")), deadline=None,
                  suppress_health_check=[HealthCheck.function_scoped_fixture])
RULES = {name: rule for name, rule in vars(validation).items() if isinstance(rule, Rule)}
# text that looks like what each rule takes, with anything around or inside it: line breaks, NUL, shell syntax
NEAR = st.sampled_from(["/etc/kubernetes/manifests", "--v", "2", "etcd.service", "c1", "10.0.0.1",
                        "https://10.0.0.1:6443", "core", "ha3", "/readyz", "scenarios/etcd/test_x.py::test_y"])
NOISE = st.text(alphabet=st.characters(codec="utf-8"), max_size=6) | st.sampled_from(
    ["\n", "\r\n", "\x00", "\t", "; reboot", "$(id)", "`id`", " ", "\u2028", "\x85", "'", '"', "\\"])
CANDIDATES = st.one_of(st.text(max_size=60), st.builds(lambda a, b, c: a + b + c, NOISE, NEAR, NOISE),
                       st.builds(lambda a, b: a + b, NEAR, NOISE))


@BUDGET
@given(name=st.sampled_from(sorted(RULES)), value=CANDIDATES)
def test_a_value_a_rule_accepts_has_no_control_character_and_is_wholly_its_pattern(name, value):
    import re

    rule = RULES[name]
    if rule.matches(value):
        assert not CONTROL.search(value) and re.fullmatch(rule.pattern, value)
        assert value == value.strip("\n\r\x00")


@pytest.mark.parametrize("name", sorted(RULES))
def test_no_rule_takes_a_value_with_a_trailing_line_break(name):
    """Python's re `$` matches before a final newline: the values the rules exist for, with one, are refused."""
    rule = RULES[name]
    for value in ("/etc/kubernetes/manifests", "--kubeconfig", "etcd.service", "c1", "controller-0", "10.0.0.1",
                  "core", "https://10.0.0.1:6443", "https://10.0.0.1:2379", "ha3", "/readyz", "0644", "etcd",
                  "scenarios/etcd/test_x.py::test_y", "a reason"):
        if rule.matches(value):
            for tail in ("\n", "\r\n", "\x00", "\u2028"):
                assert not rule.matches(value + tail), (name, value + tail)


def _ha3_with(**apiserver) -> object:
    data = yaml.safe_load((ROOT / "clusters" / "ha3.yaml").read_text())
    data["apiserver"].update(apiserver)
    return data


@BUDGET
@given(name=st.one_of(st.builds(lambda tail: "--" + tail, st.text(max_size=20)), NEAR),
       value=st.one_of(st.text(max_size=40), CANDIDATES))
def test_an_extra_flag_a_topology_takes_is_one_argument_of_the_apiservers_command_line(name, value):
    try:
        topology = parse_topology(_ha3_with(extra_flags={name: value}))
    except Exception:  # noqa: BLE001 - refused (a QuorumError with the field and the fix, tests/unit/test_topology.py)
        return
    assume(name not in {"--v"})
    spec = next(s for s in specs_for(Layout(topology, Path("/run-dir"), lambda b: Path("/bin") / b))
                if s.id.startswith("kube-apiserver@"))
    assert f"{name}={value}" in spec.argv
    assert not CONTROL.search(name + value)


@BUDGET
@given(name=st.one_of(CANDIDATES, st.from_regex(validation.SCHEDULER_NAME.pattern, fullmatch=True)))
def test_a_scheduler_name_a_topology_takes_is_one_profile_of_the_schedulers_configuration_as_given(name):
    data = yaml.safe_load((ROOT / "clusters" / "ha3.yaml").read_text())
    data["scheduler"] = {"profiles": [name]}
    try:
        topology = parse_topology(data)
    except Exception:  # noqa: BLE001 - refused
        return
    layout = Layout(topology, Path("/run-dir"), lambda b: Path("/bin") / b)
    host = topology.hosts[0]
    configuration = yaml.safe_load(scheduler_configuration(layout, host))
    assert configuration["profiles"] == [{"schedulerName": name}]
    assert set(configuration) == {"apiVersion", "kind", "clientConnection", "enableProfiling", "profiles"}


@BUDGET
@given(path=st.one_of(st.builds(lambda tail: "/" + tail, st.text(max_size=30)), CANDIDATES))
def test_a_health_check_path_a_topology_takes_is_one_line_of_haproxy_cfg_as_given(path):
    data = yaml.safe_load((ROOT / "clusters" / "ha3.yaml").read_text())
    data["load_balancer"]["health_check"]["path"] = path
    try:
        topology = parse_topology(data)
    except Exception:  # noqa: BLE001 - refused
        return
    layout = Layout(topology, Path("/run-dir"), lambda b: Path("/bin") / b)
    lines = haproxy_config(layout, topology.load_balancer_host).splitlines()
    assert f"  http-check send meth GET uri {path}" in lines
    assert len(lines) == len(haproxy_config(Layout(load_topology(ROOT / "clusters" / "ha3.yaml"), Path("/run-dir"),
                                                   lambda b: Path("/bin") / b),
                                            topology.load_balancer_host).splitlines())


def words(script: str) -> list[str]:
    """The words a POSIX shell reads in a script: split at blanks and at ; & | ( ) < >, quotes removed."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


class Recorder:
    """A host that records each command it is asked to run."""

    def __init__(self) -> None:
        self.commands: list[list[str]] = []

    def exec(self, host: str, argv: list[str], *, check: bool = True, timeout: float = 60.0) -> str:
        self.commands.append(argv)
        return "held"

    def put_file(self, host: str, path: str, text: str) -> None:
        self.commands.append(["put", path])


@BUDGET
@given(manifests=st.one_of(st.builds(lambda tail: "/" + tail, st.text(max_size=30)), CANDIDATES))
def test_a_manifest_dir_the_rule_takes_is_one_word_of_the_hold_script_on_the_host(manifests):
    if not validation.HOST_PATH.matches(manifests):
        with pytest.raises(ValueError):
            StaticPods(manifests, "/var/lib/quorum/")
        return
    host = Recorder()
    StaticPods(manifests, "/var/lib/quorum/").hold(host, "node", "kube-apiserver", "SIGKILL")
    scripts = [argv[2] for argv in host.commands if argv[:2] == ["sh", "-c"]]
    assert scripts, host.commands
    for script in scripts:
        assert "\n" not in script, script  # one command line: no value opened a second one
        assert f"{manifests}/kube-apiserver.yaml" in words(script), script


@BUDGET
@given(unit=st.one_of(st.builds(lambda head: head + ".service", st.text(max_size=20)), CANDIDATES))
def test_a_unit_the_rule_takes_is_one_argument_of_every_systemctl_command(unit):
    if not validation.UNIT.matches(unit):
        with pytest.raises(KeyError):
            SystemdUnits("/var/lib/quorum/").held_marker(unit)
        return
    host = Recorder()
    SystemdUnits("/var/lib/quorum/").hold(host, "node", unit)
    scripts = [argv[2] for argv in host.commands if argv[:2] == ["sh", "-c"]]
    assert scripts, host.commands
    for script in scripts:
        assert "\n" not in script, script
        # systemctl kill and stop take it as a word, and so does systemctl show inside the command substitution
        substituted = next(word for word in words(script) if word.startswith("$("))
        assert words(script).count(unit) == 2 and words(substituted[2:-1]).count(unit) == 1, script


@BUDGET
@given(endpoint=st.one_of(st.builds(lambda host, port: f"https://{host}:{port}", st.text(max_size=15),
                                    st.integers(-5, 100000)), CANDIDATES))
def test_an_api_endpoint_the_rule_takes_is_the_written_kubeconfigs_server_as_given(tmp_path_factory, endpoint):
    from harness.remote.credentials import api_credentials
    from tests.unit.test_credentials_go_only_to_the_endpoint import inventory_with, token_kubeconfig

    if not validation.API_URL.matches(endpoint):
        return
    work = tmp_path_factory.mktemp("endpoint")
    inventory = inventory_with(work, endpoint, token_kubeconfig(work, "https://10.0.0.9:6443"))
    written = api_credentials(inventory, work, work / "run").kubeconfig
    server = yaml.safe_load(written.read_text())["clusters"][0]["cluster"]["server"]
    assert server == endpoint
