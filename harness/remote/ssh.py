"""One host of someone else's cluster, reached over SSH with paramiko (docs/libraries.md).

Commands are argument lists, quoted with shlex.join: no value from an inventory is pasted into a command string.
Host keys are checked: `strict` refuses a host known_hosts does not list; `accept-new` adds it on first contact;
a key that differs from the listed one is refused by both. Each failure to connect is a RemoteError naming the
host, what failed and the fix. The remote target's testinfra host runs its commands through `run` here
(harness/target/hosts.py), so it checks host keys as every other command does."""

from __future__ import annotations

import shlex
import socket
from functools import cached_property
from pathlib import Path

import paramiko

from harness.errors import ClusterError
from harness.inventory.model import HostKeyPolicy, Ssh
from harness.target.hosts import Ran

CONNECT_TIMEOUT_S = 10.0
CHANNEL_TIMEOUT_S = 15.0  # for sshd to open a session on a live connection (it answers in milliseconds when well)


class RemoteError(ClusterError):
    """A host could not be reached, logged in to, or did not run what was asked."""


class _AcceptNew(paramiko.MissingHostKeyPolicy):
    """OpenSSH's StrictHostKeyChecking=accept-new: remember an unknown host's key; a changed key is still refused
    (paramiko raises BadHostKeyException before asking a policy)."""

    def __init__(self, known_hosts: Path) -> None:
        self.known_hosts = known_hosts

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        client.get_host_keys().add(hostname, key.get_name(), key)
        # appended, not rewritten: paramiko's save would drop the lines it cannot parse (@cert-authority, ...)
        self.known_hosts.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with self.known_hosts.open("a") as known:
            known.write(paramiko.hostkeys.HostKeyEntry([hostname], key).to_line())


class SshHost:
    def __init__(self, name: str, address: str, settings: Ssh, known_hosts: Path, key_file: Path | None) -> None:
        self.name, self.address, self.settings = name, address, settings
        self.known_hosts, self.key_file = known_hosts, key_file

    def __repr__(self) -> str:
        return f"SshHost({self.name}: {self.settings.user}@{self.address}:{self.settings.port})"

    @property
    def where(self) -> str:
        return f"{self.name} ({self.settings.user}@{self.address}:{self.settings.port})"

    def _load_known_hosts(self, client: paramiko.SSHClient) -> None:
        """known_hosts as OpenSSH reads it, minus its markers: paramiko's own loader fails on a whole file with one
        @cert-authority line. Certificate authorities are not used (list the host's own key); @revoked lines
        cannot be honoured, so a file with one is refused rather than half-read."""
        if not self.known_hosts.is_file():
            return
        keys = client.get_host_keys()
        try:
            for number, line in enumerate(self.known_hosts.read_text().splitlines(), 1):
                line = line.strip()
                if line.startswith("@revoked"):
                    raise RemoteError(f"{self.known_hosts} line {number} revokes a key, which Quorum cannot honour",
                                      "give ssh.known_hosts a file without @revoked lines, listing the hosts' keys")
                if not line or line.startswith(("#", "@")):
                    continue
                entry = paramiko.hostkeys.HostKeyEntry.from_line(line, number)
                for name in entry.hostnames if entry else []:
                    keys.add(name, entry.key.get_name(), entry.key)
        except (paramiko.hostkeys.InvalidHostKey, OSError, UnicodeDecodeError) as error:
            raise RemoteError(f"{self.where}: {self.known_hosts} cannot be read: {error}",
                              f"fix the line it names in {self.known_hosts}") from None

    @cached_property
    def client(self) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        self._load_known_hosts(client)
        client.set_missing_host_key_policy(_AcceptNew(self.known_hosts)
                                           if self.settings.host_key_policy == HostKeyPolicy.ACCEPT_NEW
                                           else paramiko.RejectPolicy())
        try:
            client.connect(self.address, port=self.settings.port, username=self.settings.user,
                           key_filename=str(self.key_file) if self.key_file else None, timeout=CONNECT_TIMEOUT_S,
                           banner_timeout=CONNECT_TIMEOUT_S, auth_timeout=CONNECT_TIMEOUT_S,
                           allow_agent=self.key_file is None, look_for_keys=self.key_file is None)
        except paramiko.BadHostKeyException as error:
            raise RemoteError(f"{self.where}: its host key ({error.key.get_name()}) is not the one {self.known_hosts} "
                              "lists: another machine answers at this address, or the host was reinstalled",
                              f"check the host's fingerprint out of band, then update {self.known_hosts}") from None
        except paramiko.AuthenticationException:
            raise RemoteError(f"{self.where}: the login was refused for {self.settings.user} with "
                              f"{self.key_file or 'the agent and default keys'}",
                              "check ssh.user and ssh.key_file (the key must be in the user's authorized_keys)") from None
        except paramiko.SSHException as error:
            if "not found in known_hosts" in str(error):
                raise RemoteError(f"{self.where}: {self.known_hosts} does not list this host's key (host_key_policy: "
                                  "strict)", f"add it with ssh-keyscan -p {self.settings.port} {self.address} >> "
                                  f"{self.known_hosts} after checking its fingerprint, or use host_key_policy: "
                                  "accept-new") from None
            raise RemoteError(f"{self.where}: SSH failed: {error}", "check that sshd runs there") from None
        except (OSError, socket.timeout) as error:
            raise RemoteError(f"{self.where}: unreachable: {error.strerror or error}",
                              "check the address and port, and that this machine can reach the host") from None
        return client

    def _exec(self, argv: list[str], sudo: bool | None, timeout_s: float, data: bytes | None = None
              ) -> tuple[int, bytes, str]:
        use_sudo = self.settings.sudo if sudo is None else sudo
        command = shlex.join((["sudo", "-n", "--"] if use_sudo else []) + argv)
        try:
            channel = self._session()
            channel.settimeout(timeout_s)
            channel.exec_command(command)
            if data is not None:
                channel.sendall(data)
            channel.shutdown_write()  # the command reads no more: end of its input
            out = channel.makefile("rb").read()
            err = channel.makefile_stderr("rb").read().decode(errors="replace")
            rc = channel.recv_exit_status()
        except (paramiko.SSHException, OSError, socket.timeout) as error:
            raise RemoteError(f"{self.where}: {argv[0]} did not complete: {error}",
                              "check the host's load and its sshd") from None
        if use_sudo and rc != 0 and "a password is required" in err:
            raise RemoteError(f"{self.where}: sudo asks {self.settings.user} for a password",
                              "allow passwordless sudo for that user (NOPASSWD), or log in as root")
        if use_sudo and rc == 127 and "sudo" in err:
            raise RemoteError(f"{self.where}: sudo is not installed there",
                              "install sudo with passwordless rights for the user, or log in as root (ssh.user)")
        return rc, out, err

    def _session(self) -> paramiko.Channel:
        """A new session channel; if the host does not open one in time (seen once in CI under load, after other
        sessions on the same connection: docs/target.md), once more on a new connection. A channel that never
        opened ran nothing, so trying again cannot run a command twice."""
        try:
            return self.client.get_transport().open_session(timeout=CHANNEL_TIMEOUT_S)
        except paramiko.SSHException as error:
            if "Timeout opening channel" not in str(error):
                raise
            self.close()
            return self.client.get_transport().open_session(timeout=CHANNEL_TIMEOUT_S)

    def run(self, argv: list[str], *, sudo: bool | None = None, timeout_s: float = 30.0) -> Ran:
        """Run argv on the host (through `sudo -n` when the host's settings say so, or `sudo` says)."""
        rc, out, err = self._exec(argv, sudo, timeout_s)
        return Ran(tuple(argv), rc, out.decode(errors="replace"), err)

    def read_file(self, path: str) -> bytes:
        """A file's bytes (with sudo when the host's settings say so)."""
        rc, out, err = self._exec(["cat", "--", path], None, 30.0)
        if rc != 0:
            raise RemoteError(f"{self.where}: cannot read {path}: {err.strip()}",
                              "check the path in the inventory and the user's rights (sudo)")
        return out

    def write_file(self, path: str, data: bytes) -> None:
        """Replace a file atomically (a hidden file beside it, mode 0600, then a rename: a reader such as the
        kubelet never sees half of it); the path is an argument of the script, never part of it."""
        script = 'umask 077; hidden="$(dirname -- "$1")/.$(basename -- "$1").quorum"; cat > "$hidden" && mv -f -- "$hidden" "$1"'
        rc, _, err = self._exec(["sh", "-c", script, "sh", path], None, 30.0, data)
        if rc != 0:
            raise RemoteError(f"{self.where}: cannot write {path}: {err.strip()}",
                              "check the path and the user's rights (sudo)")

    def close(self) -> None:
        if "client" in self.__dict__:
            self.client.close()
            del self.__dict__["client"]
