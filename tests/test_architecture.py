"""The package's shape: no module over 400 lines, no import cycle between modules, and the
core (the pipeline and its data) imports nothing from the edges (stores, service, CLI,
integrations, verifiers, wire formats)."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parent.parent / "src"
PACKAGE = SRC / "readmit"
CORE = {"admission", "model", "events", "terms", "reasons", "policy", "signing", "canonical"}
CORE |= {"clock", "errors", "records"}
EDGE = {"store", "service", "cli", "integrations", "bench", "replay", "decide", "scenario"}
EDGE |= {"plugins", "verifiers", "report", "wire"}


def _name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    base = SRC.joinpath(*name.split("."))
    return base.with_suffix(".py").exists() or base.is_dir()


def _imports(path: Path) -> set[str]:
    """The readmit modules ``path`` imports, anywhere in it (functions included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("readmit"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if _is_module(sub) else node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("readmit")}
    return found


GRAPH = {_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(package)"


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for dep in graph.get(todo.pop(), set()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def _cycles() -> list[list[str]]:
    """The groups of modules that import each other, directly or through others."""
    graph = {m: {d for d in deps if d in GRAPH and d != m} for m, deps in GRAPH.items()}
    reach = {m: _reach(graph, m) for m in graph}
    groups = {
        frozenset({m} | {o for o in reach[m] if m in reach[o]}) for m in graph if m in reach[m]
    }
    return sorted(sorted(g) for g in groups)


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(p.relative_to(SRC)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 400
    }
    assert long == {}


def test_no_modules_import_each_other_in_a_cycle() -> None:
    assert _cycles() == []


def test_the_core_imports_nothing_from_the_edges() -> None:
    arrows = sorted(
        (module, dep)
        for module, deps in GRAPH.items()
        for dep in deps
        if _room(module) in CORE and _room(dep) in EDGE
    )
    assert arrows == []


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": ["b"], "b": ["a"], "c": ["a"]}, [["a", "b"]]),
        ({"a": ["b"], "b": ["c"], "c": []}, []),
        ({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["d"]}, [["a", "b", "c"]]),
    ],
)
def test_the_cycle_finder_finds_cycles(
    graph: dict[str, list[str]], expected: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(globals(), "GRAPH", {k: set(v) for k, v in graph.items()})
    assert _cycles() == expected
