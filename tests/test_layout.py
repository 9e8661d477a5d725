"""The package's layout: stage units in the order DESIGN writes once, imports only downwards, no circles,
and every reason code spelled in the vocabulary alone."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "citecheck"


def import_order() -> list[str]:
    """The units, lowest first, from DESIGN's `import-order` block (written there once)."""
    design = (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- import-order:.*?-->\s*```text\n(.*?)```", design, re.S)
    assert block, "docs/DESIGN.md has no import-order block"
    return block.group(1).split()


def modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _runtime_nodes(tree: ast.AST):
    """Every node except those under `if TYPE_CHECKING:` (annotations only, never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                stack.extend(child.orelse)
                continue
            stack.append(child)


def imports() -> dict[str, set[str]]:
    """module -> the citecheck modules it imports, at the top or inside a function."""
    mods = modules()
    edges: dict[str, set[str]] = {name: set() for name in mods}
    for name, (path, is_package) in mods.items():
        package = name if is_package else name.rpartition(".")[0]
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges[name] |= {a.name for a in node.names if a.name.split(".")[0] == "citecheck"}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != "citecheck":
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    edges[name].add(sub if sub in mods else target)
    for name in edges:
        edges[name].discard(name)
    return edges


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_unit_is_placed_in_the_order():
    order = import_order()
    units = {unit(m) for m in modules()} - {"__init__"}
    assert sorted(units - set(order)) == [], "units missing from DESIGN's import-order block"
    assert sorted(set(order) - units) == [], "DESIGN's import-order block names units that do not exist"
    assert len(order) == len(set(order))


def test_no_import_runs_upwards():
    rank = {name: i for i, name in enumerate(import_order())}
    upward = [f"{src} -> {dst}" for src, targets in imports().items() for dst in sorted(targets)
              if unit(src) != "__init__" and unit(dst) != "__init__" and rank[unit(dst)] > rank[unit(src)]]
    assert upward == []


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1
        stack.append(root); on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in edges:
                    continue
                if child not in index:
                    index[child] = low[child] = counter[0]; counter[0] += 1
                    stack.append(child); on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop(); on_stack.discard(member); component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circles():
    assert circles(imports()) == []


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_every_package_says_what_it_owns_and_may_import():
    for path in sorted(PACKAGE.rglob("__init__.py")):
        if path.parent == PACKAGE:
            continue
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        if path.parent.parent == PACKAGE:   # a stage package: what it owns, what it may import
            assert re.search(r"[Ii]mports?\b", doc), f"{path.relative_to(ROOT)}: the docstring does not say what it may import"
        assert len(doc) > 40, f"{path.relative_to(ROOT)}: no docstring saying what the package owns"


def test_reason_codes_are_spelled_only_in_the_vocabulary():
    from citecheck import vocabulary
    codes = set(vocabulary.REASONS) | {vocabulary.JUDGE_UNAVAILABLE}
    literal = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "vocabulary.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in codes \
                    and id(node) not in docstrings:
                literal.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert literal == []
