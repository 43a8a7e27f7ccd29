"""Read the student's code (never run it) for what no answer in this course needs.

Runs in the trusted grading process on the submitted notebook's text. What it looks for:
- always: the reference answers (`helpers.reference`), and the ways around a plain import or
  into the grader's machinery: exec/eval/compile/__import__/importlib, `sys.modules`,
  builtins, `get_ipython` (IPython hooks: AST and input transformers, events), ctypes, open();
- per assignment: the probe module's FORBIDDEN names (01: `torch` and `helpers`, NumPy only).
A finding fails the exercises whose code it is in (autograder/verify.py says which) and is named
in the feedback; nothing here is a guess about intent, only about what the code mentions.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

ALWAYS = ("helpers.reference", "exec", "eval", "compile", "__import__", "importlib", "sys.modules",
          "builtins", "__builtins__", "get_ipython", "ctypes", "open", "globals", "setattr")


def _dotted(node: ast.AST) -> str | None:
    """'a.b.c' for a Name or an Attribute chain on a Name; None otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _mentions(name: str, forbidden: str) -> bool:
    """`helpers.reference.numpy_mlp` mentions `helpers.reference`; `openai` does not mention `open`."""
    return name == forbidden or name.startswith(forbidden + ".")


def findings(source: str, forbidden: Iterable[str] = ()) -> list[str]:
    """What the code mentions from ALWAYS + forbidden, as 'line N: name' (sorted, unique)."""
    names = (*ALWAYS, *forbidden)
    try:
        tree = ast.parse(_python_only(source))
    except SyntaxError:
        return []  # it cannot run either; nbgrader's tests report it
    found = set()
    for node in ast.walk(tree):
        mentioned: list[str] = []
        if isinstance(node, ast.Import):
            mentioned = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            mentioned = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        elif isinstance(node, (ast.Name, ast.Attribute)):
            dotted = _dotted(node)
            mentioned = [dotted] if dotted else []
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # getattr(helpers, "reference"), __import__("torch"): a name spelled as a string
            mentioned = [node.value] if node.value.replace(".", "").isidentifier() else []
        for name in mentioned:
            hit = next((f for f in names if _mentions(name, f)), None)
            if hit:
                found.add((node.lineno, hit))
    return [f"line {line}: {name}" for line, name in sorted(found)]


def defined_names(source: str) -> set[str]:
    """Top-level names a cell defines (def, class, assignment, import)."""
    try:
        tree = ast.parse(_python_only(source))
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def used_names(source: str) -> set[str]:
    """Every plain name a cell reads."""
    try:
        tree = ast.parse(_python_only(source))
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def top_level_reads(source: str) -> set[str]:
    """Names a cell reads when it runs: not those read only inside the functions and classes it defines."""
    try:
        tree = ast.parse(_python_only(source))
    except SyntaxError:
        return set()
    names, stack = set(), list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return names


def _python_only(source: str) -> str:
    """The cell with IPython's magics and shell escapes (%timeit, !pip) blanked, so it parses."""
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        lines.append(line[:len(line) - len(stripped)] + "pass" if stripped[:1] in ("%", "!") else line)
    return "\n".join(lines)
