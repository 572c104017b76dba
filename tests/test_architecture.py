"""The layers of docs/architecture.md: no upward import, no cycle, no reference to missing briefs.

Every ``import`` of every module of ``glauber`` (at module level or inside a function) is read
with :mod:`ast`; each arrow must be one the architecture page allows.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "glauber"

#: unit -> the units it may import (docs/architecture.md, "The layers and their arrows").
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "core": {"errors"},
    "theory": {"core", "errors"},
    "exact": {"theory", "core", "errors"},
    "toy_models": {"exact", "theory", "core", "errors"},
    "estimators": {"theory", "core", "errors"},
    "mlm_backend": {"estimators", "theory", "core", "errors"},
    "models": {"toy_models", "mlm_backend", "core", "errors"},
    "certify": {"exact", "estimators", "theory", "core", "errors"},
    "testing": {"certify", "toy_models", "exact", "estimators", "mlm_backend", "theory", "core",
                "errors"},
    "verification": {"testing", "toy_models", "exact", "theory", "core", "errors"},
    "experiments": {"certify", "models", "exact", "estimators", "mlm_backend",
                    "theory", "core", "errors"},
    "commands": {"verification", "experiments", "testing", "certify", "models", "toy_models",
                 "exact", "estimators", "mlm_backend", "theory", "core", "errors"},
    "cli": {"commands", "errors"},
}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "glauber"


def _arrows() -> list[tuple[str, str, str]]:
    """``(file, source unit, target unit)`` for every import of a ``glauber`` module."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        parts = path.relative_to(ROOT).with_suffix("").parts
        source = _unit(".".join(p for p in parts if p != "__init__"))
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module == "glauber":
                    names = [f"glauber.{a.name}" for a in node.names]
                elif node.module.startswith("glauber."):
                    names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("glauber.")]
            for name in names:
                target = _unit(name)
                if target not in (source, "glauber", "__version__"):
                    out.append((rel, source, target))
    return out


def test_every_unit_is_known():
    units = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"}
    assert units - {"__init__"} <= set(ALLOWED)


def test_no_upward_arrow():
    bad = [(f, s, t) for f, s, t in _arrows()
           if t not in ALLOWED[s]]
    assert not bad, "imports against docs/architecture.md: " + "; ".join(
        f"{f}: {s} -> {t}" for f, s, t in bad)


def test_the_allowed_arrows_have_no_cycle():
    seen: dict[str, int] = {}

    def visit(unit: str, stack: tuple[str, ...]) -> None:
        assert unit not in stack, f"cycle: {' -> '.join(stack + (unit,))}"
        for target in ALLOWED[unit]:
            visit(target, stack + (unit,))
        seen[unit] = 1

    for unit in ALLOWED:
        visit(unit, ())


def test_the_facade_is_light_and_its_names_resolve():
    code = ("import sys, glauber\n"
            "heavy = {'torch', 'scipy', 'numpy', 'glauber.certify'} & set(sys.modules)\n"
            "assert not heavy, heavy\n"
            "from glauber.exact import ExactChain\n"
            "import networkx as nx\n"
            "from glauber.toy_models import IsingModel\n"
            "assert glauber.ExactChain is ExactChain\n"
            "cert = glauber.certify(IsingModel(nx.path_graph(3)), 2.0, n_pairs=0)\n"
            "assert type(cert).__name__ == 'Certificate' and cert.tau == 2.0\n"
            "assert sorted(glauber.__all__) == ['ExactChain', 'certify', 'load_antiberty',\n"
            "                                   'resolve_model', 'restrict']\n"
            "assert all(callable(getattr(glauber, name)) for name in glauber.__all__)\n"
            "import glauber.estimators as e\n"
            "assert not hasattr(e, 'certify'), 'no upward alias in estimators'\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_repository_cites_only_files_it_holds():
    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=ROOT)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    offenders = []
    for name in tracked.stdout.split():
        path = ROOT / name
        if path.suffix in {".py", ".md", ".sh", ".toml", ".cfg", ".txt"} and path.is_file():
            text = path.read_text(errors="replace")
            if "THEORY" + ".md" in text or "DESIGN" + ".md" in text:
                offenders.append(name)
    assert not offenders, f"references to files outside the repository: {offenders}"


def test_argparse_lives_only_in_the_cli_and_the_commands():
    # A parser built or an argument added anywhere else (reading an argparse.Namespace out of a
    # fairseq checkpoint, as the Sapiens loader does, is not parsing).
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "glauber/cli.py" or rel.startswith("glauber/commands/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            name = (node.attr if isinstance(node, ast.Attribute)
                    else node.id if isinstance(node, ast.Name) else None)
            if name in ("ArgumentParser", "add_argument", "add_parser", "add_subparsers"):
                offenders.append(f"{rel}:{node.lineno}")
    assert not offenders, f"argparse outside glauber/cli.py and glauber/commands/: {offenders}"


def test_version_and_help_load_no_command_work():
    # `glauber --version` and `glauber --help` import the command modules (light: argparse and
    # the standard library) and nothing they run; a command's parser is built when it is named.
    code = ("import contextlib, io, sys\n"
            "from glauber.cli import COMMANDS, main\n"
            "for argv in (['--version'], ['--help']):\n"
            "    out = io.StringIO()\n"
            "    with contextlib.redirect_stdout(out):\n"
            "        try:\n"
            "            main(argv)\n"
            "        except SystemExit as stop:\n"
            "            assert stop.code == 0, stop.code\n"
            "    text = out.getvalue()\n"
            "    assert text, argv\n"
            "for name in COMMANDS:\n"
            "    assert name.replace('_', '-') in text, name\n"
            "heavy = {'numpy', 'scipy', 'torch', 'networkx', 'hypothesis', 'tqdm'}\n"
            "loaded = {m.split('.')[0] for m in sys.modules} & heavy\n"
            "ours = {m for m in sys.modules if m.startswith('glauber.')\n"
            "        and not m.startswith(('glauber.commands', 'glauber.cli', 'glauber.errors'))}\n"
            "assert not loaded and not ours, (loaded, ours)\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def _module_imports() -> dict[str, set[str]]:
    """``module -> modules of glauber it imports`` (every import: module level, inside
    functions, under TYPE_CHECKING, absolute or relative). ``from glauber.x import y`` is an
    import of ``glauber.x.y`` where that module exists, else of ``glauber.x`` (a package's
    ``__init__`` counts: importing a facade imports everything it imports)."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(p for p in parts if p != "__init__")] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            found = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                found = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module
                         for a in node.names]
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            for target in found:
                while target not in modules and "." in target:
                    target = target.rpartition(".")[0]
                if target in modules and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
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
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_through_a_circle():
    # Inside a room or across rooms: one file must stand on the other, never both ways round.
    circles = _strongly_connected(_module_imports())
    assert not circles, "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _strongly_connected(graph) == [["a", "b", "c"]]


#: Most lines of a file of glauber/ (one concept a file).
MAX_LINES = 800


def test_no_file_is_longer_than_its_concept_needs():
    long = {path.relative_to(ROOT).as_posix(): n for path in sorted(PACKAGE.rglob("*.py"))
            if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert not long, f"files over {MAX_LINES} lines (split them along their concepts): {long}"
