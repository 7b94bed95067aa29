"""Each install path gives what the README says, with only the dependencies it declares.

Building wheels and installing them in fresh environments would need the network
(or a wheel cache) and minutes. This test gets the same answer offline from the
packages already installed (the ``[dev]`` environment holds them all):

1. From ``pyproject.toml`` it resolves what ``pip install '.[EXTRA]'`` would bring:
   the base dependencies and the extra's, then, transitively, each distribution's own
   requirements from its installed metadata (markers and requested extras honoured;
   ``readmit[a,b]`` inside ``[dev]`` expanded).
2. A child interpreter installs an import hook before anything else is imported:
   a top-level module that belongs to an installed distribution outside that set
   raises ``ModuleNotFoundError``, as it would in a clean environment. Modules that no
   distribution owns (the standard library) pass.
3. Under that hook the child imports every module the path is documented to give
   (``LIBRARY`` is every module of the package that no extra claims; ``[dev]`` is all
   of them), plus the third-party modules readmit imports lazily for that extra, and
   runs a small action (``readmit demo``; building the HTTP app and the MCP server).

So a module that imports a package its extra does not declare, an extra that loses
one of its packages, or a library module that grows an import of an optional package
fails here, naming the package and the path. What it cannot catch: a declared package
that is missing from this environment (the resolution skips it), and version bounds.
"""

import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).parent.parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
README = (ROOT / "README.md").read_text(encoding="utf-8")

EXTRAS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # extra: (readmit modules it gives, by prefix; third-party modules readmit imports lazily)
    "service": (("readmit.service",), ("uvicorn",)),
    "postgres": (("readmit.store.postgres",), ("psycopg",)),
    "bench": (("readmit.bench",), ("matplotlib.pyplot", "httpx")),
    "openai": (
        (
            "readmit.verifiers.client",
            "readmit.verifiers.openai_compat",
            "readmit.verifiers.embedders",
            "readmit.verifiers.llm_scan",
            "readmit.verifiers.chain",
        ),
        ("httpx",),
    ),
    "ed25519": ((), ("cryptography.hazmat.primitives.asymmetric.ed25519",)),
    "gguf": (("readmit.verifiers.gguf",), ("xllamacpp", "httpx")),
    "wordllama": (("readmit.verifiers.wordllama_embedder",), ("wordllama",)),
    "langgraph": (
        ("readmit.integrations.langgraph", "readmit.bench.backends.langgraph_store"),
        ("langgraph.store.sqlite", "langgraph.checkpoint.postgres"),
    ),
    "mem0": (("readmit.integrations.mem0", "readmit.bench.backends.mem0_bank"), ("mem0",)),
    "agents": (("readmit.integrations.agents_sdk",), ("agents",)),
}
"""What each extra adds; the README's install section documents the same."""

DEV_TOOLS = ("pytest", "hypothesis", "mypy", "ruff", "schemathesis")

_CHILD = r"""
import importlib, importlib.abc, importlib.metadata, json, re, sys

config = json.loads(sys.argv[1])
allowed = set(config["allowed"])
owners = importlib.metadata.packages_distributions()

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

class NotDeclared(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        dists = {norm(d) for d in owners.get(top, ())}
        if dists and not dists & allowed:
            raise ModuleNotFoundError(
                f"{name}: distribution {sorted(dists)} is not declared for this install",
                name=name,
            )
        return None

sys.meta_path.insert(0, NotDeclared())
for module in config["modules"]:
    importlib.import_module(module)
if "demo" in config["actions"]:
    from readmit.cli import cli
    cli(["demo"], standalone_mode=False)
if "service" in config["actions"]:
    from readmit.service.app import create_app
    from readmit.service.mcp import create_mcp
    from readmit.model import Agent
    from readmit.service.operations import Service
    from readmit.service.reading import Caller
    service = Service.from_env("sqlite://:memory:", "builtin", {"READMIT_SIGNING_KEY": "k" * 32})
    paths = {route.path for route in create_app(service).routes}
    assert {"/health", "/docs", "/openapi.json"} <= paths, paths
    create_mcp(service, Caller(workspace="w", agent=Agent(id="a", principal="p", role="r")))
if "refusals" in config["actions"]:
    from readmit.cli import cli
    import os
    ed25519 = "ed25519:" + "A" * 43 + "="
    with open("view.json", "w") as view:
        view.write("{}")
    for args, env in (
        (["bench", "--seeds", "1", "--out", "bench"], {}),
        (["keys", "signing"], {}),
        (["demo"], {"READMIT_SIGNING_KEY": ed25519}),
        (["verify", "view.json"], {"READMIT_VERIFY_KEY": ed25519}),
        (["audit", "--db", "postgresql://u@127.0.0.1:1/x"], {}),
        (["demo", "--verifier", "openai-compat:m@http://127.0.0.1:9/v1"], {}),
        (["demo", "--verifier", "gguf:m.gguf"], {}),
    ):
        os.environ.update(env)
        try:
            cli(args)
        except SystemExit as exit:
            print("exit", exit.code, file=sys.stderr)
        for name in env:
            del os.environ[name]
print("imported", len(config["modules"]), "modules")
"""


def _requirements(name: str, extras: frozenset[str]) -> list[Requirement]:
    if name == "readmit":
        texts = list(PROJECT["dependencies"])
        texts += [t for e in sorted(extras) for t in PROJECT["optional-dependencies"][e]]
        return [Requirement(t) for t in texts]
    try:
        declared = requires(name) or []
    except PackageNotFoundError:
        return []  # not installed here: nothing to follow (see the docstring)
    wanted = [{"extra": e} for e in ("", *sorted(extras))]
    return [
        r
        for r in map(Requirement, declared)
        if r.marker is None or any(r.marker.evaluate(env) for env in wanted)
    ]


def resolve(extras: frozenset[str]) -> set[str]:
    """Every distribution ``pip install '.[extras]'`` brings, read from installed metadata."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [("readmit", extras)]
    while todo:
        name, wanted = todo.pop()
        if (name, wanted) in seen:
            continue
        seen.add((name, wanted))
        todo += [
            (canonicalize_name(r.name), frozenset(r.extras)) for r in _requirements(name, wanted)
        ]
    return {name for name, _ in seen}


def package_modules() -> list[str]:
    src = ROOT / "src"
    paths = sorted((src / "readmit").rglob("*.py"))
    names = [".".join(p.relative_to(src).with_suffix("").parts) for p in paths]
    return [n.removesuffix(".__init__") for n in names if not n.endswith("__main__")]


def owner(module: str) -> str:
    """The extra that gives ``module`` (the longest matching prefix), or "" for the library."""
    claims = [
        (len(prefix), extra)
        for extra, (prefixes, _) in EXTRAS.items()
        for prefix in prefixes
        if module == prefix or module.startswith(prefix + ".")
    ]
    return max(claims)[1] if claims else ""


def gives(extra: str) -> list[str]:
    """The modules an install with ``extra`` ("" for the library alone) should import."""
    modules = package_modules()
    if extra == "dev":
        lazy = [m for _, third_party in EXTRAS.values() for m in third_party]
        return modules + lazy + list(DEV_TOOLS)
    mine = [m for m in modules if owner(m) in ("", extra)]
    return mine + list(EXTRAS[extra][1] if extra else ())


ACTIONS = {"": ["demo"], "service": ["service"], "dev": ["demo", "service"]}
PATHS = ["", *EXTRAS, "dev"]


def child(config: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(config)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def installs(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, Future[subprocess.CompletedProcess[str]]]]:
    """Every path's child, started at once, a few at a time (each mostly waits on imports)."""
    cwd = tmp_path_factory.mktemp("installs")
    with ThreadPoolExecutor(max_workers=4) as pool:
        yield {
            extra: pool.submit(
                child,
                {
                    "allowed": sorted(resolve(frozenset({extra} - {""}))),
                    "modules": gives(extra),
                    "actions": ACTIONS.get(extra, []),
                },
                cwd,
            )
            for extra in PATHS
        }


@pytest.mark.slow
@pytest.mark.parametrize("extra", PATHS, ids=lambda e: e or "library")
def test_an_install_path_gives_its_modules_with_only_its_declared_dependencies(
    extra: str, installs: dict[str, Future[subprocess.CompletedProcess[str]]]
) -> None:
    done = installs[extra].result()

    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1].startswith("imported ")


def test_the_hook_refuses_what_an_install_path_does_not_declare(tmp_path: Path) -> None:
    config = {"allowed": sorted(resolve(frozenset())), "modules": ["fastapi"], "actions": []}

    done = child(config, tmp_path)

    assert done.returncode == 1
    assert "fastapi: distribution ['fastapi'] is not declared" in done.stderr


def test_the_library_alone_names_the_extra_a_command_needs(tmp_path: Path) -> None:
    config = {"allowed": sorted(resolve(frozenset())), "modules": [], "actions": ["refusals"]}

    done = child(config, tmp_path)

    assert done.stderr.splitlines() == [
        "error [config_error]: readmit bench needs matplotlib: pip install '.[bench]' in the "
        "readmit checkout",
        "exit 2",
        *[
            "error [config_error]: Ed25519 signing needs cryptography: pip install "
            "'.[ed25519]' in the readmit checkout",
            "exit 2",
        ]
        * 3,
        "error [config_error]: the PostgreSQL store needs psycopg: pip install "
        "'.[postgres]' in the readmit checkout",
        "exit 2",
        "error [config_error]: verifier 'openai-compat' needs httpx: pip install "
        "'.[openai]' in the readmit checkout",
        "exit 2",
        "error [config_error]: verifier 'gguf' needs httpx: pip install "
        "'.[gguf]' in the readmit checkout",
        "exit 2",
    ]


def test_every_extra_is_documented_in_the_install_section_and_known_here() -> None:
    install = README.split("## Install", 1)[1].split("\n## ", 1)[0]

    assert set(PROJECT["optional-dependencies"]) == {*EXTRAS, "dev"}
    assert "pip install ." in install
    for extra in PROJECT["optional-dependencies"]:
        assert re.search(rf"\[{extra}\]", install), extra
