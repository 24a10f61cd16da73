"""The shape the code must keep (docs/design.md): no import circle in harness/, no backend named outside
harness/backends/, each fault defined once, no method written as an alias of another module's function, no wait written
as a loop of sleeps."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "harness"


def modules() -> dict[str, Path]:
    """harness module name -> file (a package by its __init__.py)."""
    found = {}
    for path in HARNESS.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(path: Path, known: set[str]) -> set[str]:
    """Every harness module `path` imports, at its top or inside a function (a late import to dodge a circle is
    still an edge), resolved to the deepest module that exists: `from harness.x import y` is harness.x.y when that
    is a module, else harness.x."""
    found = set()
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
                   for n in ast.walk(block)}  # never run: they name types for the checker
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known else node.module
                     for alias in node.names]
        else:
            continue
        found |= {name for name in names if name in known}
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> modules its import runs: those it names and their packages (importing harness.a.b runs
    harness/a/__init__.py too), except its own packages, which are running already when it is imported."""
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        edges = set()
        for target in imported(path, set(known)):
            parts = target.split(".")
            edges |= {".".join(parts[:i]) for i in range(2, len(parts) + 1)}
        own = {".".join(name.split(".")[:i]) for i in range(1, len(name.split(".")) + 1)}
        graph[name] = {e for e in edges if e in known and e not in own}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_in_the_harness():
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_a_circle_through_a_late_import():
    graph = {"harness.a": {"harness.b"}, "harness.b": {"harness.c"}, "harness.c": {"harness.a"}, "harness.d": set()}
    assert circles(graph) == [["harness.a", "harness.b", "harness.c"]]
    assert "harness.faults.base" in import_graph()["harness.faults.component"]


def test_nothing_outside_the_backends_imports_a_backend_module_except_through_the_registry():
    graph = import_graph()
    backends = {name for name in graph if name.startswith("harness.backends.") and name not in (
        "harness.backends.registry", "harness.backends.common")}
    leaks = {name: sorted(graph[name] & backends) for name in graph
             if not name.startswith("harness.backends") and graph[name] & backends}
    # the CLI builds images and release bundles; the scenarios' pod bandwidth measurement uses the kind backend's
    # iperf3 image
    assert leaks == {"harness.cli": ["harness.backends.docker", "harness.backends.docker.base_image",
                                     "harness.backends.docker.engine", "harness.backends.kind",
                                     "harness.backends.kind.images", "harness.backends.kind.node_image",
                                     "harness.backends.kind.release_bundle"]}


def test_no_backend_is_named_outside_the_backends():
    pattern = re.compile(r"backend\s*(==|!=|\bin\b|\bnot in\b)|state\.backend")
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for top in ("harness", "fixtures", "scenarios") for path in (ROOT / top).rglob("*.py")
             if "backends" not in path.relative_to(ROOT).parts
             for number, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert [line.split(": ", 1)[1] for line in found] == ["return self.state.backend"], found  # Target.backend


def test_each_fault_class_and_fault_name_is_defined_once():
    classes, names = {}, {}
    for path in (HARNESS / "faults").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef):
                continue
            assert node.name not in classes, f"{node.name} in {path.name} and {classes[node.name]}"
            classes[node.name] = path.name
            for statement in node.body:
                if isinstance(statement, ast.Assign) and [t.id for t in statement.targets if isinstance(t, ast.Name)] \
                        == ["name"] and isinstance(statement.value, ast.Constant):
                    assert statement.value.value not in names, f"fault name {statement.value.value} twice"
                    names[statement.value.value] = node.name
    assert {"Kill", "Pause", "Stop", "ModifyFlags", "Partition", "IsolateEtcdLeader", "Bandwidth", "PacketLoss",
            "NodeKill", "NodePause", "NodeRestart"} <= set(classes)


def method_aliases(tree: ast.Module) -> list[str]:
    """Class attributes that are another module's function (`restarts = promises.restarts`): a method written
    elsewhere, taking the class as its first argument, so the class is spread over files."""
    harness_names = {alias.asname or alias.name for node in ast.walk(tree)  # a module of the harness, or a name in one
                     if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness")
                     for alias in node.names}
    found = []
    for cls in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        for statement in cls.body:
            value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
            if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) \
                    and value.value.id in harness_names and not value.attr.isupper():
                found.append(f"{cls.name}.{ast.unparse(statement).split('=')[0].strip()} = {ast.unparse(value)}")
    return found


def test_no_method_is_an_alias_of_another_modules_function():
    """Size is a guideline (docs/design.md), not a cap to squeeze under by moving a class's methods elsewhere."""
    aliases = {str(path.relative_to(ROOT)): found for top in ("harness", "fixtures") for path in (ROOT / top).rglob("*.py")
               if (found := method_aliases(ast.parse(path.read_text())))}
    assert aliases == {}, f"write these as methods of their class: {aliases}"


def test_the_alias_check_finds_an_alias_and_passes_a_method_and_a_constant():
    tree = ast.parse("from harness.backends.remote import promises\nimport signal as signals\n"
                     "class T:\n    restarts = promises.restarts\n    KILL = signals.SIGKILL\n"
                     "    def held(self):\n        return promises.held(self)\n")
    assert method_aliases(tree) == ["T.restarts = promises.restarts"]


def hand_written_waits(tree: ast.AST) -> list[str]:
    """`while` loops that only wait: their body sleeps and at most gives up at a deadline (raise, return, break),
    asking the condition in the loop's test. A loop that acts on each pass (a retry, a load loop) is not one."""
    found = []
    for loop in ast.walk(tree):
        if not isinstance(loop, ast.While) or "time.monotonic()" not in ast.unparse(loop):
            continue
        only_waits = all(
            (isinstance(statement, ast.Expr) and ast.unparse(statement.value).startswith("time.sleep("))
            or isinstance(statement, ast.Pass)
            or (isinstance(statement, ast.If) and not statement.orelse
                and all(isinstance(s, (ast.Raise, ast.Return, ast.Break)) for s in statement.body))
            for statement in loop.body)
        if only_waits:
            found.append(f"line {loop.lineno}: while {ast.unparse(loop.test)}")
    return found


def test_every_wait_is_harness_wait():
    """One way to wait (harness/wait.py: until, eventually, wait_for), not a loop of sleeps written again."""
    waits = {str(path.relative_to(ROOT)): found for top in ("harness", "fixtures", "scenarios")
             for path in (ROOT / top).rglob("*.py") if (found := hand_written_waits(ast.parse(path.read_text())))}
    assert waits == {}, f"write these with harness.wait.until: {waits}"


def test_the_wait_check_finds_a_sleeping_loop_and_passes_a_retry():
    tree = ast.parse("import time\n"
                     "def a(ready, deadline):\n"
                     "    while not ready() and time.monotonic() < deadline:\n        time.sleep(0.2)\n"
                     "def b(gone, deadline):\n"
                     "    while not gone():\n"
                     "        if time.monotonic() > deadline:\n            raise TimeoutError\n"
                     "        time.sleep(0.5)\n"
                     "def c(act, deadline):\n"
                     "    while time.monotonic() < deadline:\n        act()\n        time.sleep(2.0)\n")
    assert hand_written_waits(tree) == ["line 3: while not ready() and time.monotonic() < deadline",
                                        "line 6: while not gone()"]
