"""The wrapper Go module that builds Kubernetes from the Go module proxy.

k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/client-go, ...) at v0.0.0 and
replaces them with ./staging/src/... paths. Replace directives of a dependency are ignored by Go, so
a module that requires k8s.io/kubernetes must replace each staging module itself, with the version
published for the release (v1.34.4 -> v0.34.4).
"""

from __future__ import annotations

import re

from harness.toolchain.versions import Version, staging_version

WRAPPER_MODULE = "quorum.local/kubernetes-build"
_STAGING_REPLACE = re.compile(r"^\s*(k8s\.io/[\w.\-/]+)\s*=>\s*\./staging/src/\1\s*$", re.M)
_DIRECTIVE = re.compile(r"^(go|toolchain|godebug)\s+\S.*$", re.M)


def staging_modules(kubernetes_gomod: str) -> list[str]:
    """Every module that k8s.io/kubernetes's go.mod replaces with a ./staging/src path, sorted."""
    modules = sorted(set(_STAGING_REPLACE.findall(kubernetes_gomod)))
    if not modules:
        raise ValueError("no ./staging/src replace directives found: is this k8s.io/kubernetes's go.mod?")
    return modules


def go_directive(kubernetes_gomod: str) -> str:
    """The minimum Go version the release declares (e.g. "1.24.0")."""
    match = re.search(r"^go\s+(\S+)\s*$", kubernetes_gomod, re.M)
    if not match:
        raise ValueError("go.mod has no go directive")
    return match.group(1)


def wrapper_gomod(kubernetes_gomod: str, kubernetes: Version) -> str:
    """A go.mod that requires k8s.io/kubernetes and replaces every staging module.

    The go, toolchain and godebug directives are copied so that the build behaves like upstream's.
    """
    directives = [match.group(0) for match in _DIRECTIVE.finditer(kubernetes_gomod)]
    staged = staging_version(kubernetes)
    lines = [f"module {WRAPPER_MODULE}", "", *directives, "", f"require k8s.io/kubernetes {kubernetes}", ""]
    lines.append("replace (")
    lines += [f"\t{module} => {module} {staged}" for module in staging_modules(kubernetes_gomod)]
    lines.append(")")
    return "\n".join(lines) + "\n"


def version_ldflags(kubernetes: Version, *, build_date: str, commit: str = "") -> str:
    """Linker flags that stamp the release into the binaries, as upstream's hack/lib/version.sh does.

    kubeadm and kind read `kube-apiserver --version`, so it must print the real release.
    """
    values = {
        "gitVersion": str(kubernetes),
        "gitMajor": str(kubernetes.major),
        "gitMinor": str(kubernetes.minor),
        "gitCommit": commit,
        "gitTreeState": "clean",
        "buildDate": build_date,
    }
    flags = ["-s", "-w"]
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [f"-X {package}.{key}={value}" for key, value in values.items() if value]
    return " ".join(flags)
