"""A fault's iptables rules inside one host go in as one command, each rule tagged with the fault."""

import shlex

from harness.net import firewall


def test_several_rules_are_one_command_and_each_is_tagged():
    commands = []
    firewall.add_all(lambda argv, check=True: commands.append(argv) or "",
                     [("INPUT", ["-s", "10.0.0.2"]), ("OUTPUT", ["-d", "10.0.0.2"])], "f1")
    assert len(commands) == 1 and commands[0][:2] == ["sh", "-c"]
    rules = [shlex.split(part) for part in commands[0][2].split(" && ")]
    assert rules == [["iptables", "-w", "-I", chain, flag, "10.0.0.2", "-m", "comment", "--comment",
                      "quorum-fault:f1", "-j", "DROP"] for chain, flag in (("INPUT", "-s"), ("OUTPUT", "-d"))]


def test_one_rule_is_run_as_it_is_and_none_runs_nothing():
    commands = []
    run = lambda argv, check=True: commands.append(argv) or ""  # noqa: E731
    firewall.add_all(run, [("INPUT", ["-s", "10.0.0.2"])], "f1")
    firewall.add_all(run, [], "f1")
    assert commands == [["iptables", "-w", "-I", "INPUT", "-s", "10.0.0.2", *firewall.tag_arguments("f1"), "-j", "DROP"]]
