"""What a cell's code defines and reads, from its text alone (never run): the names the exercise
model (autograder/course/exercises.py), the trusted run and the scan (autograder/engine/) go by.

Magics and shell escapes are read as the kernel runs them (`python_only`), and the code a magic
runs is code of the cell (`parse`): the body of a cell magic (`%%time`, `%%capture`, any other),
the statement of `%time`, `%timeit` and `%prun`. A cell that does not parse defines and reads nothing.
"""

from __future__ import annotations

import ast
import builtins
import functools
import keyword

# What IPython's input transformer writes for a magic: <shell>.run_line_magic(name, argument) and
# <shell>.run_cell_magic(name, line, body); the shell is `__ipython_magic__()` (see python_only).
LINE_MAGIC, CELL_MAGIC = "run_line_magic", "run_cell_magic"
# Line magics whose argument is a statement they run in the notebook's namespace, after options
# (`%timeit -n1 -r1 f(x)`); %%timeit's line is its setup statement.
RUNS_ITS_ARGUMENT = ("time", "timeit", "prun")
# Names IPython gives magics beside their classes' own (InteractiveShell.init_magics)
MAGIC_ALIASES = ("ed", "hist", "rep")
NESTED = 8  # cell magics in cell magics whose code is read; the scan names a cell nested deeper
WORDS = 16  # where a magic's argument may start its statement, after its options: no magic has more
# What Python's parser raises on text it cannot read: bad syntax, a NUL byte, nesting past its stack
# (RecursionError), a long run of words that are no syntax (MemoryError, from its error pass)
UNPARSED = (SyntaxError, ValueError, RecursionError, MemoryError)


def parse(source: str) -> ast.Module | None:
    """The cell's syntax tree as the kernel runs it: magics as the calls IPython makes, each followed
    by the code it runs when that code parses (a cell magic's body is Python or not: `%%bash` is read
    as code only if it parses as such); lines numbered as in the cell. None when the cell does not parse
    (nested deeper than Python parses included: UNPARSED)."""
    try:
        tree = ast.parse(python_only(source))
    except UNPARSED:
        return None
    ast.increment_lineno(tree, _blank_lines_dropped(source))
    _read_magic_code(tree)
    return tree


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


def magic(node: ast.AST) -> tuple[str, str, str | None] | None:
    """(name, argument, body) of a magic IPython wrote as a call (`%run x.py`: ('run', 'x.py', None);
    `%%time` over a body: ('time', '', body)); None for any other node."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in (LINE_MAGIC, CELL_MAGIC) and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id in ("__ipython_magic__", "get_ipython")):
        return None
    texts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if len(texts) != len(node.args) or len(texts) != (2 if node.func.attr == LINE_MAGIC else 3):
        return None
    return texts[0], texts[1], texts[2] if node.func.attr == CELL_MAGIC else None


def nested_magics(source: str) -> int:
    """How many cell magics a cell opens with, each the body of the one before (`%%capture` over
    `%%time` over code: 2). Past NESTED, their code is not read (`parse`)."""
    depth = 0
    for line in source.splitlines():
        if line.startswith("%%"):
            depth += 1
        elif line.strip():
            break
    return depth


def _blank_lines_dropped(source: str) -> int:
    """IPython drops a cell's leading blank lines before it runs it; the scan numbers lines as the student sees them."""
    lines = source.splitlines(keepends=True)
    return len(lines) - len(_leading_empty_lines(lines))


def _leading_empty_lines(lines: list[str]) -> list[str]:
    try:
        from IPython.core.inputtransformer2 import leading_empty_lines
    except ImportError:  # no IPython: nothing is dropped (python_only blanks magic lines instead)
        return lines
    return leading_empty_lines(lines)


def _read_magic_code(tree: ast.Module) -> None:
    """Puts after each statement that runs a magic the code that magic runs, at its lines; that code's
    own magics too, NESTED deep at most. A loop over statement lists, not a recursion: a cell nested
    deeper than Python's stack is still read."""
    lists = [(tree.body, 0)]  # (a list of statements, how deep in cell magics it is)
    while lists:
        statements, depth = lists.pop()
        deeper: dict[ast.stmt, int] = {}  # statements a cell magic's body put in this list -> their depth
        index = 0
        while index < len(statements):  # what is put after a statement is read next, magics and all
            statement = statements[index]
            level = deeper.get(statement, depth)
            for node in list(_own_expressions(statement)):
                found = magic(node)
                if found is not None and (found[2] is None or level < NESTED):
                    code = _code_of(node, *found)
                    deeper.update((inserted, level + (found[2] is not None)) for inserted in code)
                    statements[index + 1:index + 1] = code
            lists += [(body, level) for body in _statement_lists(statement)]
            index += 1


def _statement_lists(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The lists of statements a statement holds: bodies, else-branches, handlers', cases'."""
    holders = [statement, *getattr(statement, "handlers", ()), *getattr(statement, "cases", ())]
    return [value for node in holders for field in ("body", "orelse", "finalbody")
            if isinstance(value := getattr(node, field, None), list) and value and isinstance(value[0], ast.stmt)]


def _own_expressions(statement: ast.stmt):
    """The nodes of a statement that are not inside a statement it holds (a `for`'s body is its own)."""
    stack = [c for c in ast.iter_child_nodes(statement) if not isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case))]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.stmt))


def _code_of(node: ast.Call, name: str, argument: str, body: str | None) -> list[ast.stmt]:
    """The statements a magic call runs: its body's (read as a cell of its own, not yet its magics')
    and, for the magics that run their argument, the statement its argument ends with."""
    code = []
    if name in RUNS_ITS_ARGUMENT and (body is None or name == "timeit"):
        code += _statements_in(argument, node.lineno)
    if body is not None:
        try:
            tree = ast.parse(python_only(body))
        except UNPARSED:
            return code
        ast.increment_lineno(tree, node.lineno + _blank_lines_dropped(body))  # the body starts after `%%name`
        code += tree.body
    return code


def _statements_in(argument: str, line: int) -> list[ast.stmt]:
    """What a magic's argument runs, its options (`-n1 -r 3 -o`) left out: whatever they are, the
    statement is the argument's end, so it is the longest end that starts a word and parses. IPython
    reads it as a cell (`%time run x.py` runs %run), and so is it read here."""
    at = 0
    for word in argument.split()[:WORDS]:
        at = argument.index(word, at)
        try:
            tree = ast.parse(python_only(argument[at:]))
        except UNPARSED:
            at += len(word)
            continue
        ast.increment_lineno(tree, line - 1)
        return tree.body
    return []


@functools.lru_cache(maxsize=4096)
def python_only(source: str) -> str:
    """The cell as the kernel runs it: IPython's own input transformer turns magics and shell
    escapes (`%timeit f()`, `x = !ls`, `%%time`) into the calls they are, so that nothing else in
    the cell goes unread, and a one-line cell that starts with a magic's name runs it (`run x.py`:
    IPython's automagic, on by default). The calls it writes go to a name no check flags;
    `get_ipython` that the student wrote stays what it is."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # no IPython: blank the magic lines
        return "\n".join("pass" if line.lstrip()[:1] in ("%", "!") else line for line in source.splitlines())
    try:
        python = TransformerManager().transform_cell(source)
    except Exception:  # IPython could not read it either: the cell cannot run
        return source
    if len(python.splitlines()) == 1:  # IPython reads a one-line cell once more (InteractiveShell.transform_cell)
        python = _automagic(python)
    if "get_ipython" not in source:
        python = python.replace("get_ipython()", "__ipython_magic__()")
    return python


def _automagic(line: str) -> str:
    """A one-line cell as IPython's prefilter reads it when its first word names a magic: `ls`,
    `run x.py`, `time(f())` are magics, `ls = 3` and `time.sleep(1)` are not. Whether the notebook
    defined that name is not known here: the magic is what IPython runs where it did not."""
    from IPython.core.splitinput import LineInfo
    info = LineInfo(line.rstrip("\n"))
    if (info.esc or info.ifun not in _line_magics() or info.the_rest[:1] in ("=", ",")
            or hasattr(builtins, info.ifun) or keyword.iskeyword(info.ifun)):
        return line
    return f"{info.pre}get_ipython().{LINE_MAGIC}({info.ifun!r}, {info.the_rest!r})\n"


@functools.cache
def _line_magics() -> frozenset[str]:
    """The line magics of IPython's own classes, with their aliases and the shell's (`ls`, `cat`)."""
    from IPython.core import magics
    from IPython.core.alias import default_aliases
    from IPython.core.magic import Magics
    classes = [getattr(magics, name) for name in dir(magics)]  # IPython loads them lazily, by name
    names = {name for value in classes if isinstance(value, type) and issubclass(value, Magics)
             for name in getattr(value, "magics", {}).get("line", {})}
    return frozenset(names | {alias for alias, _ in default_aliases()} | set(MAGIC_ALIASES))
