"""`quorum toolchain install/status`: make every binary available at its pinned version, and find it later."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ToolchainError
from harness.toolchain import debian, gobuild
from harness.toolchain.cache import BinaryCache, ManifestEntry
from harness.toolchain.catalog import TOOLS, Source, Tool, probe_version, tool
from harness.toolchain.gotool import find_go
from harness.toolchain.progress import Reporter
from harness.toolchain.versions import ETCD_VERSION, KUBERNETES_DEFAULT, Version, etcd_version, kubernetes_version

# measured: module cache + build cache + binaries of one release take about 5 GiB
MIN_FREE_BYTES_FOR_BUILD = 6 * 1024**3


@dataclass(frozen=True)
class StatusRow:
    name: str
    wanted: str
    found: str
    path: str
    source: str
    ok: bool


class Toolchain:
    """The binaries of one Kubernetes release and one etcd release, plus the pinned helper tools."""

    def __init__(self, kubernetes: str = KUBERNETES_DEFAULT, cache: BinaryCache | None = None,
                 reporter: Reporter | None = None, etcd: str = ETCD_VERSION) -> None:
        self.kubernetes = kubernetes_version(kubernetes)
        self.etcd = etcd_version(etcd)
        self.cache = cache or BinaryCache()
        self.reporter = reporter or Reporter()

    def wanted(self, spec: Tool) -> str:
        if spec.source in (Source.KUBERNETES, Source.GO_WRAPPER):
            return self._version_of(spec)
        if spec.source in (Source.GO_INSTALL, Source.NPM):
            return spec.pinned
        return f">= {spec.minimum}"

    # ---- install -------------------------------------------------------------------------------

    def install(self, names: list[str] | None = None) -> list[ManifestEntry]:
        """Install what is missing; a second run with everything present only verifies checksums."""
        specs = [tool(name) for name in names] if names else list(TOOLS)
        with self.cache.locked():
            self.cache.remove_partials()
            entries = self._install_debian([s for s in specs if s.source is Source.DEBIAN])
            entries += [self._install_npm(s) for s in specs if s.source is Source.NPM]
            go_specs = [s for s in specs if s.source in (Source.KUBERNETES, Source.GO_INSTALL, Source.GO_WRAPPER)]
            missing = [s for s in go_specs if self.cache.valid(s.name, self._version_of(s)) is None]
            entries += [e for s in go_specs if (e := self.cache.valid(s.name, self._version_of(s)))]
            if missing:
                entries += self._build(missing)
        return entries

    def _version_of(self, spec: Tool) -> str:
        if spec.source is Source.KUBERNETES:
            return str(self.kubernetes)
        return str(self.etcd) if spec.source is Source.GO_WRAPPER else spec.pinned

    def _install_debian(self, specs: list[Tool]) -> list[ManifestEntry]:
        if not specs:
            return []
        with self.reporter.step("Debian packages") as step:
            step.update(", ".join(sorted({s.package for s in specs})))
            debian.apt_install(sorted({s.package for s in specs}))
            entries = []
            for spec in specs:
                path = Path(spec.system_path)
                version = debian.installed_version(spec.package)
                if not path.exists() or version is None:
                    raise ToolchainError(
                        f"{spec.name} is not at {path} although {spec.package} is installed",
                        f"apt-get install --reinstall {spec.package}",
                    )
                entries.append(self.cache.record(spec.name, version, path, source=spec.describe_source(version)))
            return entries

    def _install_npm(self, spec: Tool) -> ManifestEntry:
        """npm install <package>@<pinned> into cache/node/<name>-<version>; the entry point is the package's CLI."""
        done = self.cache.valid(spec.name, spec.pinned)
        if done is not None:
            return done
        if shutil.which("npm") is None:
            raise ToolchainError(f"{spec.name} comes from the npm registry and this machine has no npm",
                                 "apt-get install npm (or install Node.js >= 20 with npm)")
        prefix = self.cache.root / "node" / f"{spec.name}-{spec.pinned}"
        with self.reporter.step(f"npm {spec.package}@{spec.pinned}"):
            result = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix),
                                     f"{spec.package}@{spec.pinned}"], capture_output=True, text=True)
            if result.returncode != 0:
                raise ToolchainError(f"npm could not install {spec.package}@{spec.pinned}:\n{result.stderr[-800:]}",
                                     "check access to the npm registry, then run `quorum toolchain install` again")
        entry = (prefix / "node_modules" / ".bin" / spec.name).resolve()
        self._verify(entry, spec, spec.pinned)
        return self.cache.record(spec.name, spec.pinned, entry, source=spec.describe_source(spec.pinned))

    def _build(self, specs: list[Tool]) -> list[ManifestEntry]:
        if self.cache.free_bytes() < MIN_FREE_BYTES_FOR_BUILD:
            raise ToolchainError(
                f"only {self.cache.free_bytes() / 1024**3:.1f} GiB free under {self.cache.root}; "
                f"building Kubernetes needs about {MIN_FREE_BYTES_FOR_BUILD / 1024**3:.0f} GiB",
                "free disk space, or point QUORUM_CACHE at a larger disk",
            )
        go = find_go(self.cache)
        entries = []
        kube = [s for s in specs if s.source is Source.KUBERNETES]
        if kube:
            with self.reporter.step(f"Kubernetes {self.kubernetes} wrapper module") as step:
                wrapper = gobuild.prepare_wrapper(go, self.cache, self.kubernetes, step)
        for index, spec in enumerate(specs, 1):
            version = self._version_of(spec)
            with self.reporter.step(f"[{index}/{len(specs)}] build {spec.name} {version}") as step:
                partial = self.cache.partial_path(spec.name, version)
                try:
                    if spec.source is Source.KUBERNETES:
                        gobuild.build_kubernetes_binary(go, wrapper, self.kubernetes, spec.name, partial, step)
                    elif spec.source is Source.GO_WRAPPER:
                        work = self.cache.work_dir(f"{spec.package.rsplit('/', 2)[-2]}-{version}")
                        assert spec.modules is not None  # every GO_WRAPPER tool names its modules
                        gobuild.build_in_wrapper(go, work, spec.modules(version), spec.package, partial, step)
                    else:
                        stamp = f" -X {spec.version_variable}={version}" if spec.version_variable else ""
                        gobuild.go_install(go, spec.package, version, partial, step, ldflags="-s -w" + stamp)
                    self._verify(partial, spec, version)
                    entries.append(self.cache.publish(spec.name, version, partial, source=spec.describe_source(version)))
                finally:
                    partial.unlink(missing_ok=True)
        return entries

    def _verify(self, path: Path, spec: Tool, version: str) -> None:
        found = probe_version(path, spec)
        if found is None or found != Version.parse(version):
            raise ToolchainError(
                f"the freshly built {spec.name} reports version {found}, expected {version}",
                "this is a bug in Quorum's build flags; report it with the output of `quorum toolchain status`",
            )

    # ---- locate and status ---------------------------------------------------------------------

    def path(self, name: str) -> Path:
        """The binary to run, or a ToolchainError naming the command that installs it."""
        spec = tool(name)
        manifest = self.cache.load()
        entry = manifest.get(name, self._version_of(spec)) if spec.source is not Source.DEBIAN else manifest.latest(name)
        if entry and Path(entry.path).exists():
            return Path(entry.path)
        if spec.source is Source.DEBIAN and spec.system_path and Path(spec.system_path).exists():
            return Path(spec.system_path)
        flag = {Source.KUBERNETES: f" --kubernetes {self.kubernetes}", Source.GO_WRAPPER: f" --etcd {self.etcd}"}.get(
            spec.source, "")
        raise ToolchainError(f"{name} {self.wanted(spec)} is not installed", f"quorum toolchain install{flag}")

    def status(self) -> list[StatusRow]:
        rows = []
        for spec in TOOLS:
            try:
                path = self.path(spec.name)
            except ToolchainError:
                rows.append(StatusRow(spec.name, self.wanted(spec), "missing", "-", spec.describe_source(self._version_of(spec)), False))
                continue
            found = probe_version(path, spec)
            ok = found is not None and (
                found >= Version.parse(spec.minimum) if spec.source is Source.DEBIAN else found == Version.parse(self._version_of(spec))
            )
            entry = self.cache.load().latest(spec.name)
            source = entry.source if entry and entry.path == str(path) else spec.describe_source(self._version_of(spec))
            rows.append(StatusRow(spec.name, self.wanted(spec), str(found or "does not run"), str(path), source, ok))
        return rows


