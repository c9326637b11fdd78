"""The package's import structure: no import circles, and no import that runs back up.

Every ``import`` in the package is read (those inside functions too) and resolved to a
module of the package. The layers, bottom to top: the shared machinery (runner, ledger,
progress, backends, estimates, argument checks, warnings, shared CLI options, worker processes and
fork safety), then one package per problem (which never import each other), then the
top-level CLI and the package's face.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gpuqueens"

#: Modules below the problems: they may import each other, never a problem or the CLI.
SHARED = {"_version", "_checks", "estimates", "backends", "kernels", "progress", "ledger",
          "ledger_rows", "ledger_checks", "run_options",
          "runner", "cli_options", "checkpoint_file", "_probe", "fork_safety", "workers",
          "worker_pool", "worker_setup", "user_frames", "glibc"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # "from . import x" names a module x, or a name defined in the package itself
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


def layer(name: str) -> str:
    parts = name.split(".")
    if len(parts) == 2 and parts[1] in SHARED:
        return "shared"
    if len(parts) >= 3 and parts[1] == "problems":
        return f"problem:{parts[2]}"
    return "top"


def test_the_graph_is_read():
    edges = graph()
    assert "gpuqueens.runner" in edges["gpuqueens.problems.nqueens"]
    assert "gpuqueens.ledger" in edges["gpuqueens.runner"]


def test_no_import_circle():
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(edges[name]):
            if state.get(target) == 1:
                cycle = path[path.index(target):] + [target]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, path + [target])
        state[name] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])


def test_no_import_runs_back_up():
    wrong = []
    for name, targets in graph().items():
        for target in targets:
            here, there = layer(name), layer(target)
            if here == "shared" and there != "shared":
                wrong.append(f"{name} -> {target} (shared machinery imports {there})")
            elif here.startswith("problem:") and there.startswith("problem:") and here != there:
                wrong.append(f"{name} -> {target} (one problem imports another)")
            elif there == "top" and target != "gpuqueens.problems" and name != "gpuqueens.__main__":
                wrong.append(f"{name} -> {target} (imports the package's top)")
    assert not wrong, "\n".join(wrong)
