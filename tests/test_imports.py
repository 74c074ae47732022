"""The layers: every import of the project read with `ast` (also those inside functions), no cycle anywhere,
and imports pointing down only (core knows no RL library, envs know no agents, nothing imports the scripts)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("quiddler_env", "agents")
SCRIPTS = ("train.py", "evaluate.py", "play.py")


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    """Module name -> file, for the packages and the scripts."""
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    for script in SCRIPTS:
        if (root / script).is_file():
            out[Path(script).stem] = root / script
    return out


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `name` imports (at the top, in functions; not under `if TYPE_CHECKING`)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and _type_checking_only(node, parents):
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            # `from pkg import mod` imports the module pkg.mod; `from mod import name` imports mod.
            targets = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in modules else stem for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import a.b.c` where only a.b is ours, etc.
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = project_modules(root)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_detector_finds_cycles_and_reads_relative_and_lazy_imports(tmp_path):
    pkg = tmp_path / "agents"
    (pkg / "sub").mkdir(parents=True)
    (tmp_path / "quiddler_env").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import x\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\nimport agents.a\n"
    )
    graph = import_graph(tmp_path)
    assert graph["agents.a"] == {"agents.sub.b"} and graph["agents.sub.b"] == {"agents.c"}
    assert graph["agents.c"] == {"agents.a"}  # the TYPE_CHECKING import is not counted, the plain one is
    assert cycles(graph) == [["agents.a", "agents.c", "agents.sub.b"]]


def test_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_imports_point_down():
    graph = import_graph()
    for name, targets in graph.items():
        if name.startswith("quiddler_env.core"):
            assert not {t for t in targets if not t.startswith("quiddler_env.core")}, name
        if name.startswith("quiddler_env"):
            assert not {t for t in targets if t.startswith("agents")}, (name, "the envs know no agents")
        assert not targets & {"train", "evaluate"}, (name, "nothing imports the scripts")
    for path in (ROOT / "quiddler_env" / "core").rglob("*.py"):
        text = path.read_text()
        for library in ("gymnasium", "pettingzoo", "stable_baselines3", "sb3_contrib", "torch", "ray"):
            assert f"import {library}" not in text and f"from {library}" not in text, (path.name, library)


KERNEL_MODULES = {
    "quiddler_env.core.batch_kernels",
    "quiddler_env.core.batch_bots",
    "quiddler_env.core.solver_kernel",
    "quiddler_env.core.borrow",
    "quiddler_env.core.kernel_cache",
}
"""The compiled kernels and their helpers: the engine's insides, which only `core` reads."""


def test_the_envs_talk_to_the_engine_not_its_kernels():
    """Every env plays through the engine's interface (`core.engine`, `core.batch`): none imports a kernel
    module, whose packed state and positional arguments may change with any kernel work."""
    graph = import_graph()
    envs = {name: targets for name, targets in graph.items() if name.startswith("quiddler_env.envs")}
    assert len(envs) >= 8  # the detector sees the env modules
    leaks = {name: sorted(targets & KERNEL_MODULES) for name, targets in envs.items() if targets & KERNEL_MODULES}
    assert not leaks, f"env modules importing kernel internals: {leaks}"
    for kernel in KERNEL_MODULES:  # the names are real modules (a rename would make the test pass vacuously)
        assert kernel in graph, kernel
    assert "quiddler_env.core.engine" in graph["quiddler_env.envs.quiddler_v0"]


def test_the_agents_package_imports_itself_relatively():
    """The folder installs as `quiddler_agents` and a checkout imports it as `agents`: an absolute `agents.`
    import inside it would load a second copy of the package (or fail) under the other name."""
    absolute = []
    for path in sorted((ROOT / "agents").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            absolute += [f"{path.relative_to(ROOT)}:{node.lineno}" for n in names if n.split(".")[0] in INSTALLED]
    assert not absolute, f"absolute imports of the package inside it: {absolute}"


INSTALLED = {"agents", "quiddler_agents"}


def test_the_envs_reach_the_agents_package_in_one_place_only_lazily():
    """`Quiddler-v0` builds opponents given as agent spec strings ("greedy") with the agents' registry: the one
    import of the agents package in quiddler_env (by its installed name, which the graph above does not read), inside
    a function, so `import quiddler_env` and every env with policy objects never load it."""
    found = []
    for path in sorted((ROOT / "quiddler_env").rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            if any(n.split(".")[0] in INSTALLED for n in names):
                scope = node
                while scope in parents and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    scope = parents[scope]
                function = scope.name if isinstance(scope, ast.FunctionDef) else None
                found.append((path.relative_to(ROOT).as_posix(), function, names))
    assert found == [("quiddler_env/envs/gym_env.py", "build_opponents", ["quiddler_agents"])]


def test_users_read_and_run_one_import_name():
    """The agents package is `quiddler_agents` wherever a user reads or runs code: the README, the docs, the
    examples, the benchmarks, the tests and the root scripts (a checkout importing both names loads it twice)."""
    old = re.compile(r"^\s*(from agents[. ]|import agents\b)", re.M)
    places = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "agents" / "zoo").glob("*/README.md")]
    for folder in ("examples", "benchmarks", "tests"):
        places += (ROOT / folder).rglob("*.py")
    places += [ROOT / name for name in ("train.py", "evaluate.py", "play.py")]
    found = [
        f"{p.relative_to(ROOT)}: {m.group(0).strip()}"
        for p in places
        if p.name != "test_imports.py"  # builds a throwaway `agents` package to test the import graph
        for m in old.finditer(p.read_text())
    ]
    assert not found, found
