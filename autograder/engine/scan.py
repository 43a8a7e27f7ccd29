"""Read the student's code (never run it) for what can tamper with grading and no answer needs.

Runs in the trusted grading process on the submitted notebook's text. What it reports, and
nothing else (a word in a string, `setattr(self, ...)` on the student's own object, a method
that happens to be called `eval` or `compile` are answers' business):
- importing or naming the reference answers (`helpers.reference`), `importlib`, `ctypes`,
  `builtins`/`__builtins__`, `sys.modules`;
- the builtins that run or reach code around a plain import: exec, eval, compile, __import__,
  open, globals, breakpoint, and get_ipython (IPython hooks: AST and input transformers,
  events), when the name is the builtin (not one the cell defines);
- writes to what was imported (a module, a check, a class): `np.allclose = ...`,
  `del torch.testing`, `setattr(helpers.checks, ...)`, `vars(np)[...] = ...`, rebinding a
  name imported from `helpers` (the checks) at the top of a cell;
- `getattr`/`hasattr` with a constant name, read as the dotted name it spells
  (`getattr(sys, "modules")`); a constant module name given to `__import__`/`import_module`;
- per assignment: the probe's `forbidden` names (Probe.forbidden), wherever named (01: `torch` and
  `helpers`, NumPy only).
A finding fails the exercises whose code it is in (autograder/engine/verify.py says which) and is named
in the feedback; nothing here is a guess about intent, only about what the code does.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from autograder.course.cell_code import imported_names, parse

# Named at all (imported, read, written): the reference answers and the ways around an import.
ALWAYS = ("helpers.reference", "importlib", "ctypes", "sys.modules", "builtins", "__builtins__")
# Builtins that no answer here needs, flagged where the name is Python's own.
BUILTINS = ("exec", "eval", "compile", "__import__", "open", "globals", "breakpoint", "get_ipython")
WRITERS = ("setattr", "delattr")  # flagged when their object is imported (a module, a check)
READERS = ("getattr", "hasattr")  # a constant attribute name is read as part of a dotted name
IMPORTERS = ("__import__", "import_module")  # a constant module name is read as an import
CHECKS = "helpers.checks"  # the check_* names imported from here must not be rebound
# Writes to these are settings an answer may change (speed, precision, plot size), not the
# grader's tools.
SETTINGS = ("torch.backends", "plt.rcParams", "matplotlib.rcParams", "mpl.rcParams", "os.environ")


def _dotted(node: ast.AST) -> str | None:
    """'a.b.c' for a Name or an Attribute chain on a Name; None otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _root(node: ast.AST) -> str | None:
    """The name at the bottom of an attribute, subscript or call chain: `np` in `np.a[0].b`."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call, ast.Starred)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _mentions(name: str, forbidden: str) -> bool:
    """`helpers.reference.numpy_mlp` mentions `helpers.reference`; `openai` does not mention `open`."""
    return name == forbidden or name.startswith(forbidden + ".")


def check_names(source: str) -> set[str]:
    """The checks a cell imports: `check_*` names bound by `from helpers.checks import ...`."""
    tree = parse(source)
    if tree is None:
        return set()
    return {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and _mentions(node.module or "", CHECKS) for a in node.names
            if (a.asname or a.name).startswith("check")}


def _bound(tree: ast.AST) -> set[str]:
    """Names the cell itself defines anywhere (a function called `compile` is not the builtin)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def findings(source: str, forbidden: Iterable[str] = (), modules: Iterable[str] = (),
             checks: Iterable[str] = ()) -> list[str]:
    """What the code does of the above, as 'line N: what' (sorted, unique).

    forbidden: the assignment's forbidden names (Probe.forbidden); modules: names imported by the notebook's other
    cells (the setup's `np`, `torch`, `check_close`): writes to them count like writes to the
    cell's own imports; checks: the other cells' check names (`check_names`).
    """
    names = (*ALWAYS, *forbidden)
    tree = parse(source)
    if tree is None:
        return []  # it cannot run either; nbgrader's tests report it
    imported = {*modules, *imported_names(source), "builtins", "__builtins__"}
    checks = {*checks, *check_names(source)}
    own = _bound(tree) - imported
    found: set[tuple[int, str]] = set()

    def named(node: ast.AST, name: str | None) -> bool:
        hit = next((f for f in names if name and _mentions(name, f)), None)
        if hit:
            found.add((node.lineno, hit))
        return hit is not None

    def written(node: ast.AST, target: ast.AST, deleted: bool) -> None:
        root = _root(target)
        if root not in imported or isinstance(target, ast.Name):
            return
        where = _dotted(target.value if isinstance(target, ast.Subscript) else target) or root
        if not any(_mentions(where, setting) for setting in SETTINGS):
            found.add((node.lineno, f"del {where}" if deleted else f"{where} = ..."))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                named(node, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            for name in (base, *(f"{base}.{alias.name}" for alias in node.names)):
                if named(node, name):
                    break
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            named(node, _dotted(node))
        elif isinstance(node, ast.Name):
            if not named(node, node.id) and node.id in BUILTINS and node.id not in own:
                found.add((node.lineno, node.id))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = (node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target])
            for target in targets:
                for part in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]):
                    if isinstance(part, ast.Attribute):
                        named(part, _dotted(part))
                    written(node, part, isinstance(node, ast.Delete))
        if isinstance(node, ast.Call):
            _call(node, imported, own, named, found)
    for node in tree.body:  # the checks rebound where the tests would call them
        for name in _top_level_bindings(node) & checks:
            found.add((node.lineno, f"{name} = ..."))
    return [f"line {line}: {name}" for line, name in sorted(found)]


def _call(node: ast.Call, imported: set[str], own: set[str], named, found: set) -> None:
    """setattr/delattr/vars on what was imported; getattr's and __import__'s constant names."""
    func = node.func.id if isinstance(node.func, ast.Name) else (
        node.func.attr if isinstance(node.func, ast.Attribute) else None)
    args = node.args
    if func in own or not args:
        return
    first = args[0]
    if func in (*WRITERS, "vars") and isinstance(node.func, ast.Name) and _root(first) in imported:
        found.add((node.lineno, f"{func}({_dotted(first) or _root(first)}, ...)"))
    elif (func in READERS and isinstance(node.func, ast.Name) and len(args) > 1
          and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str)):
        base = _dotted(first)
        if base and not named(node, base):
            named(node, f"{base}.{args[1].value}")
    elif func in IMPORTERS and isinstance(first, ast.Constant) and isinstance(first.value, str):
        named(node, first.value)


def _top_level_bindings(node: ast.stmt) -> set[str]:
    """Names a top-level statement rebinds (assignment, def, class, for, with, import as)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.Delete)):
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    return set()
