"""What a cell's code defines and reads, from its text alone (never run): the names the exercise
model (autograder/course/exercises.py), the trusted run and the scan (autograder/engine/) go by.

Magics and shell escapes are read as the kernel runs them (`python_only`); a cell that does not
parse defines and reads nothing.
"""

from __future__ import annotations

import ast


def parse(source: str) -> ast.Module | None:
    """The cell's syntax tree as the kernel reads it (magics as calls); None when it does not parse."""
    try:
        return ast.parse(python_only(source))
    except SyntaxError:
        return None


def defined_names(source: str) -> set[str]:
    """Top-level names a cell defines (def, class, assignment, import)."""
    tree = parse(source)
    if tree is None:
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
            names |= _bound_by_import(node)
    return names


def _bound_by_import(node: ast.Import | ast.ImportFrom) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for a in node.names}


def imported_names(source: str) -> set[str]:
    """Names a cell binds by importing (`np` for `import numpy as np`, `nn` for `from torch import nn`)."""
    tree = parse(source)
    if tree is None:
        return set()
    return {name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            for name in _bound_by_import(node)}


def used_names(source: str) -> set[str]:
    """Every plain name a cell reads."""
    tree = parse(source)
    if tree is None:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def top_level_reads(source: str) -> set[str]:
    """Names a cell reads when it runs: not those read only inside the functions and classes it defines."""
    tree = parse(source)
    if tree is None:
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


def python_only(source: str) -> str:
    """The cell as the kernel runs it: IPython's own input transformer turns magics and shell
    escapes (`%timeit f()`, `x = !ls`, `%%time`) into the calls they are, so that nothing else in
    the cell goes unread. The calls it writes go to a name no check flags; `get_ipython` that the
    student wrote stays what it is."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # no IPython: blank the magic lines
        return "\n".join("pass" if line.lstrip()[:1] in ("%", "!") else line for line in source.splitlines())
    try:
        python = TransformerManager().transform_cell(source)
    except Exception:  # IPython could not read it either: the cell cannot run
        return source
    if "get_ipython" not in source:
        python = python.replace("get_ipython()", "__ipython_magic__()")
    return python
