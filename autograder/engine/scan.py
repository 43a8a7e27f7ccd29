"""Read the student's code (never run it) for what can tamper with grading and no answer needs.

Runs in the trusted grading process on the submitted notebook's text, each cell read as IPython runs
it (autograder/course/cell_code.py: magics are the calls they make, and the code a magic runs, a cell
magic's body included, is code of the cell). What it reports, and nothing else (a word in a string,
`setattr(self, ...)` on the student's own object, a method that happens to be called `eval` or
`compile` are answers' business):
- naming the reference answers (`helpers.reference`) or what reaches around an import, runs another
  file or code from a string, or reaches IPython's shell: `importlib`, `runpy`, `pkgutil`, `zipimport`,
  `marshal`, `codeop`, `ctypes`, `builtins`/`__builtins__`, `sys.modules`, `sys.path`, `IPython` (its
  `display` aside), `ipykernel`, also as part of another name (`os.sys.modules`) or through another
  name (`s = sys` then `s.modules`); importing `code` or `imp`;
- what switches off the trusted run's watches (WATCHES: `torch._C.DisableTorchFunction`, the dispatch
  modes' `_disable_current_modes`, `disable_saved_tensors_hooks`...), also as part of another name;
- attributes that reach a namespace, a frame or IPython from any object: `get_ipython`, `__globals__`,
  `f_globals`, `__subclasses__`, `__loader__`...;
- the builtins that run or reach code around a plain import: exec, eval, compile, __import__, open,
  globals, locals, `vars()`, breakpoint, and get_ipython (IPython hooks: AST and input transformers,
  events), when the name is the builtin (not one the notebook defines);
- magics no answer needs (any but MAGICS): `%run` (another file), `%load_ext` (IPython's hooks),
  `%%code_wrap` (wraps every later cell), `%autocall` (reads later cells otherwise); cell magics nested
  past what is read;
- writes to what was imported (a module, a check, a class; autograder/engine/writes.py): `np.allclose =
  ...`, `del torch.testing`, `setattr(helpers.checks, ...)`, `vars(np)[...] = ...`, any `np.__dict__`,
  the same through another name (`m = np`, a loop over modules) or a parameter (`def f(m): m.x = ...`
  then `f(np)`, named at the call too), and rebinding a name imported from `helpers` (the checks) at
  the top of a cell; writes to SETTINGS are an answer's business;
- `getattr`/`hasattr` with a constant name, read as the dotted name it spells
  (`getattr(sys, "modules")`); a constant module name given to `__import__`/`import_module`;
- per assignment: the probe's `forbidden` names (Probe.forbidden), wherever named (01: `torch` and
  `helpers`, NumPy only).
A finding fails the exercises whose code it is in (autograder/engine/verify.py says which) and is named
in the feedback; nothing here is a guess about intent, only about what the code does.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

from autograder.course.cell_code import (
    NESTED,
    imported_names,
    magic,
    nested_magics,
    parse,
    python_only,
)
from autograder.engine import writes
from autograder.engine.writes import dotted

# Named at all, also inside a longer name (`os.sys.modules`): the reference answers, what reaches
# around an import or runs another file or code from bytes, IPython's shell and kernel.
ALWAYS = ("helpers.reference", "importlib", "ctypes", "sys.modules", "sys.path", "sys.meta_path",
          "sys.path_hooks", "builtins", "__builtins__", "runpy", "pkgutil", "zipimport", "marshal", "codeop",
          "IPython", "ipykernel")
# What switches off the stand-ins the trusted run watches an answer with (grading/*/given.py: PyTorch's
# function and dispatch modes, saved-tensor hooks) or runs autograd's engine by hand: no answer needs any of
# it. (Not `saved_tensors_hooks` itself: 08's activation_bytes may measure with it. A backward that pushes
# hooks of its own over the grader's is seen by the derivation watch: it runs operators with grad mode on.)
WATCHES = ("DisableTorchFunction", "DisableTorchFunctionSubclass", "_disable_current_modes", "_DisableTorchDispatch",
           "disable_saved_tensors_hooks", "_saved_tensors_hooks_disable", "_saved_tensors_hooks_enable",
           "_pop_mode", "_pop_mode_temporarily", "_pop_torch_function_stack", "_push_on_torch_function_stack",
           "_set_torch_function_mode", "_unset_mode", "_set_dispatch_mode", "_unset_dispatch_mode",
           "_get_dispatch_mode", "_pop_torch_dispatch_stack", "_push_saved_tensors_default_hooks", "_execution_engine", "run_backward", "_engine_run_backward",
           "ExcludeDispatchKeyGuard", "_ExcludeDispatchKeyGuard", "_SetExcludeDispatchKeyGuard",
           "_IncludeDispatchKeyGuard", "_ForceDispatchKeyGuard", "_AutoDispatchBelowAutograd")
ALWAYS += WATCHES
# Of those, what an answer may name: IPython's display (`from IPython.display import clear_output`).
EXCEPT = ("IPython.display",)
# Modules named only where imported: their names are words an answer uses for its own (`code = ...`).
IMPORTED = ("code", "imp")
# Attributes, of any object, that reach a namespace, a frame or IPython's shell.
ATTRIBUTES = ("get_ipython", "__globals__", "__subclasses__", "f_globals", "f_locals", "f_builtins",
              "__loader__", "__spec__")
# Builtins that no answer here needs, flagged where the name is Python's own.
BUILTINS = ("exec", "eval", "compile", "__import__", "open", "globals", "locals", "breakpoint", "get_ipython")
READERS = ("getattr", "hasattr")  # a constant attribute name is read as part of a dotted name
IMPORTERS = ("__import__", "import_module")  # a constant module name is read as an import
CHECKS = "helpers.checks"  # the check_* names imported from here must not be rebound
# Writes to these are settings an answer may change (speed, precision, plot size), not the
# grader's tools; by the name imported (`matplotlib.pyplot`) or the setup's (`plt`).
SETTINGS = ("torch.backends", "matplotlib.rcParams", "matplotlib.pyplot.rcParams", "os.environ",
            "pandas.options", "plt.rcParams", "mpl.rcParams", "pd.options")
# Magics an answer may use: they time or profile code (read as code), show or print things, or do
# what a shell escape (`!ls`) does. Any other runs code from elsewhere (`%run`, `%load_ext`, `%macro`)
# or changes how IPython runs later cells (`%%code_wrap`, `%autocall`, `%config`).
MAGICS = frozenset((
    "time", "timeit", "prun", "capture", "matplotlib", "precision", "pprint", "who", "whos", "who_ls",
    "lsmagic", "magic", "quickref", "pinfo", "pinfo2", "pdoc", "pdef", "psource", "pfile", "psearch", "pycat",
    "history", "hist", "page", "xmode", "colors", "tb", "autoreload", "killbgscripts",
    "autosave", "clear", "less", "man", "connect_info",  # ipykernel's own
    "html", "HTML", "markdown", "latex", "svg", "SVG", "javascript", "js", "writefile", "file",
    "pwd", "cd", "pushd", "popd", "dirs", "dhist", "bookmark", "ls", "ll", "lf", "lk", "lx", "ldir", "cat",
    "mkdir", "cp", "mv", "rm", "rmdir", "env", "set_env", "system", "sx", "!", "bash", "sh", "script",
    "python", "python2", "python3", "pypy", "perl", "ruby", "pip", "conda", "mamba", "micromamba", "uv",
))
# Magics an answer may use with this argument only: plots' settings, reloading edited modules.
MAGIC_ARGUMENTS = {"config": "InlineBackend.", "load_ext": "autoreload", "reload_ext": "autoreload"}


def _parts(name: str) -> list[str]:
    return name.split(".")


def _mentions(name: str, flagged: str) -> int | None:
    """Where `flagged` starts among the parts of `name`: `os.sys.modules` mentions `sys.modules` at 1,
    `sys.modules.get` at 0; `openai` does not mention `open`."""
    parts, wanted = _parts(name), _parts(flagged)
    return next((i for i in range(len(parts) - len(wanted) + 1) if parts[i:i + len(wanted)] == wanted), None)


def _hit(name: str, flagged: Iterable[str]) -> str | None:
    """The first of `flagged` that `name` mentions, unless the rest is in EXCEPT (or on its way there:
    `IPython` of `import IPython.display`)."""
    for candidate in flagged:
        at = _mentions(name, candidate)
        if at is None:
            continue
        rest = _parts(name)[at:]
        if not any(rest[:len(e)] == e or e[:len(rest)] == rest for e in map(_parts, EXCEPT)):
            return candidate
    return None


def check_names(source: str) -> set[str]:
    """The checks a cell imports: `check_*` names bound by `from helpers.checks import ...`."""
    tree = parse(source)
    if tree is None:
        return set()
    return {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and _mentions(node.module or "", CHECKS) == 0 for a in node.names
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
             checks: Iterable[str] = (), notebook: Sequence[str] = ()) -> list[str]:
    """What the code does of the above, as 'line N: what' (sorted, unique).

    forbidden: the assignment's forbidden names (Probe.forbidden); modules: names imported by the notebook's other
    cells (the setup's `np`, `torch`, `check_close`): writes to them count like writes to the
    cell's own imports; checks: the other cells' check names (`check_names`); notebook: the texts of
    the notebook's code cells, in order (this one among them or not): a name bound or a function
    defined in one cell is what it is in every other.
    """
    tree = parse(source)
    if tree is None:  # it cannot run either (nbgrader's tests report it), unless only too deep for this process
        return [] if _cannot_run(source) else ["line 1: code nested too deep to read"]
    cells = tuple(notebook) if source in notebook else (*notebook, source)
    try:
        return _findings(tree, cells, cells.index(source), tuple(forbidden),
                         {*modules, "builtins", "__builtins__"}, {*checks, *check_names(source)})
    except RecursionError:  # deeper than any answer, and than the scan can read: not read, not trusted
        return ["line 1: code nested too deep to read"]
    except writes.TooLarge as error:  # larger than any answer: not read, not trusted
        return [f"line 1: a notebook too large to read ({error})"]


def _findings(tree: ast.Module, cells: tuple[str, ...], cell: int, forbidden: tuple[str, ...],
              modules: set[str], checks: set[str]) -> list[str]:
    names = (*ALWAYS, *forbidden)
    imported = modules | imported_names(cells[cell])
    own = _bound(tree) - imported
    written, stands = writes.read(cells, frozenset(modules))
    found: set[tuple[int, str]] = set()

    def named(node: ast.AST, name: str | None, among: Iterable[str] = names) -> bool:
        """Flag what `name` names, as written and, through the notebook's names, as what it stands for
        (`s.modules` after `s = sys`); the assignment's forbidden names only as written (01's tests
        import from `helpers` the checks a student may call)."""
        if not name:
            return False
        root = node if isinstance(node, ast.Name) else _root_name(node)
        seen = [origin + name[len(root.id):] for origin in sorted(writes.stands_for(stands, cell, root))
                if name.startswith(root.id)] if root is not None else []
        hit = _hit(name, among) or next((h for h in (_hit(n, [a for a in among if a not in forbidden])
                                                     for n in seen) if h), None)
        if hit:
            found.add((node.lineno, hit))
        return hit is not None

    def imports(node: ast.AST, module: str) -> None:
        if module.split(".")[0] in IMPORTED:
            found.add((node.lineno, module.split(".")[0]))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                named(node, alias.name)
                imports(node, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            imports(node, base)
            for name in (base, *(f"{base}.{alias.name}" for alias in node.names)):
                named(node, name)
                named(node, name, ATTRIBUTES)
        elif isinstance(node, ast.Attribute):
            if node.attr in ATTRIBUTES:
                found.add((node.lineno, node.attr))
            if isinstance(node.ctx, ast.Load):
                named(node, dotted(node))
        elif isinstance(node, ast.Name):
            if not named(node, node.id) and node.id in BUILTINS and node.id not in own:
                found.add((node.lineno, node.id))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = (node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target])
            for target in targets:
                for part in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]):
                    if isinstance(part, ast.Attribute):
                        named(part, dotted(part))
        if isinstance(node, ast.Call):
            _call(node, own, named, found)
            if (spoken := magic(node)) is not None and not _answer_magic(*spoken):
                found.add((node.lineno, f"%%{spoken[0]}" if spoken[2] is not None else f"%{spoken[0]}"))
    if nested_magics(cells[cell]) > NESTED:
        found.add((1, f"cell magics nested more than {NESTED} deep"))
    for write in written:
        if write.cell == cell and not all(any(_mentions(into, s) == 0 for s in SETTINGS) for into in write.into):
            into = min(write.into, key=lambda name: (name.startswith(writes.MORE), name))
            found.add((write.line, write.what + (f", a write to {into}" if write.alias else "")))
    for node in tree.body:  # the checks rebound where the tests would call them
        for name in _top_level_bindings(node) & checks:
            found.add((node.lineno, f"{name} = ..."))
    return [f"line {line}: {name}" for line, name in sorted(found)]


def _cannot_run(source: str) -> bool:
    """Whether a cell `parse` cannot read has bad syntax, rather than nesting deeper than this
    process parses (a kernel whose recursion limit was raised may run it)."""
    try:
        ast.parse(python_only(source))
    except (RecursionError, MemoryError):
        return False
    except (SyntaxError, ValueError):
        return True
    return False


def _root_name(node: ast.AST) -> ast.Name | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _answer_magic(name: str, argument: str, body: str | None) -> bool:
    """Whether an answer may use this magic (MAGICS, MAGIC_ARGUMENTS)."""
    wanted = MAGIC_ARGUMENTS.get(name)
    return name in MAGICS or (wanted is not None and argument.strip().startswith(wanted)
                              and (name == "config" or argument.split() == [wanted]))


def _call(node: ast.Call, own: set[str], named, found: set) -> None:
    """vars() (the namespace itself); getattr's and __import__'s constant names."""
    func = node.func.id if isinstance(node.func, ast.Name) else (
        node.func.attr if isinstance(node.func, ast.Attribute) else None)
    args = node.args
    if func in own:
        return
    if func == "vars" and isinstance(node.func, ast.Name) and not args:
        found.add((node.lineno, "vars()"))
    elif not args:
        return
    elif (func in READERS and isinstance(node.func, ast.Name) and len(args) > 1
          and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str)):
        base = dotted(args[0])
        if base and not named(args[0], base):
            spelled = f"{base}.{args[1].value}"
            named(args[0], spelled)
            if args[1].value in ATTRIBUTES:
                found.add((node.lineno, args[1].value))
    elif func in IMPORTERS and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
        named(node, args[0].value)
        if args[0].value.split(".")[0] in IMPORTED:
            found.add((node.lineno, args[0].value.split(".")[0]))


def _top_level_bindings(node: ast.stmt) -> set[str]:
    """Names a top-level statement rebinds (assignment, def, class, for, with, import as)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.Delete)):
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    return set()
