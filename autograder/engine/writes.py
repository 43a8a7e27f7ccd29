"""What the student's code writes into, traced back to what was imported: read from the text alone,
never run. The scan (autograder/engine/scan.py) names every write into an imported object (a module,
a check, a class) and decides which are settings.

A notebook is one namespace, so its cells are read together. A write is an assignment or `del` of
an attribute or item (`np.allclose = ...`, `del torch.testing`, `d["x"] = ...`), `setattr`/`delattr`,
`vars(x)`, any use of `x.__dict__`, and `__setattr__`/`__delattr__` called by hand. What it writes
into is the name its target starts from, and a name stands for an imported object when:

- it is one (`import numpy as np`, or a name the notebook's other cells imported: `modules`);
- it is bound to one, in any scope: `m = np`, `m = getattr(np, "testing")`, `for m in (np, torch)`,
  `def f(m=np)`, `(m := np)`, `with ... as m`;
- it is a parameter and a call hands it one: `f(np)`, `f(m=np)`, `Patch(np)` (its `__init__`),
  `obj.patch(np)` (a method of the notebook's classes, by its name), a lambda, a function renamed
  (`g = f`), or a function handed on with one (`map(f, [np])`, `partial(f, np)`). The call is then
  a write too, named where the call is.

Flow is not followed (a name that stands for an imported object somewhere in its scope does so
everywhere in it), except that a loop's variable, inside the loop, is what that loop draws. What a
call returns is a new object (`np.zeros(3)`, `nn.Linear(2, 3)`), never an imported one.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from autograder.course.cell_code import parse

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
SCOPES = (*FUNCTIONS, ast.ClassDef, *COMPREHENSIONS)
LOOPS = (ast.For, ast.AsyncFor)
WRITERS = ("setattr", "delattr", "vars")  # builtins that write into their first argument (vars: its dict)
BY_HAND = {"__setattr__": 3, "__delattr__": 2}  # arguments when called on the class: (object, name[, value])
HANDED = ("args", "kwargs")  # keywords that hand a function its arguments: Thread(target=f, args=(np,))
MAX_ORIGINS = 32  # imported objects kept per name: enough to say which; past it, MORE stands for the rest
MORE = "(more)"  # an origin that is no setting: a name that stands for too many objects is written for real
BUDGET = 2_000_000  # origins added in all, past which the notebook is not read (TooLarge)
MAX_DEPTH = 8  # attributes an origin keeps (`a = a.next` in a loop would otherwise grow without end)
TEXT = 80  # characters of a call quoted in a finding


@dataclass(frozen=True)
class Write:
    """One write into an imported object: where, what the code does, and what it writes into."""

    cell: int
    line: int
    what: str  # as the scan names it: `np.allclose = ...`, `setattr(m, ...)`, `f(np)`
    into: frozenset[str]  # the imported objects written into, by their imported names: `numpy.testing`
    alias: bool  # reached through another name (`m = np`) or a call, not the import's own name


@dataclass(frozen=True)
class _Param:
    function: ast.AST
    name: str


@dataclass(frozen=True)
class _Function:
    node: ast.AST  # a def, a lambda or a class


class TooLarge(Exception):
    """A notebook whose names this reader will not follow to the end (far past any answer's)."""


class _Scope:
    """The notebook's top level: the scope all cells share."""


NOTEBOOK = _Scope()


@functools.lru_cache(maxsize=64)
def read(texts: tuple[str, ...], modules: frozenset[str] = frozenset()) -> tuple[tuple[Write, ...], dict]:
    """Every write into an imported object in the cells `texts` (in the notebook's order), and the
    imported objects each read name may stand for: {(cell, line, column): names}. modules: names
    imported where these cells do not show it."""
    reader = _Reader([parse(text) for text in texts], modules)
    return reader.writes(), reader.names()


def stands_for(names: dict, cell: int, node: ast.Name) -> frozenset[str]:
    """The imported objects a name read in `cell` may be (empty: none)."""
    return names.get((cell, node.lineno, node.col_offset), frozenset())


def _root(node: ast.AST) -> ast.Name | None:
    """The name at the bottom of an attribute, subscript or call chain: `np` in `np.a[0].b`."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call, ast.Starred)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node if isinstance(node, ast.Name) else None


def dotted(node: ast.AST) -> str | None:
    """'a.b.c' for a Name or an Attribute chain on a Name; None otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _quoted(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= TEXT else text[:TEXT - 3] + "..."


class _Reader:
    """The notebook's names and what each may stand for (`env`), computed to a fixed point."""

    def __init__(self, trees: list[ast.Module | None], modules: Iterable[str]):
        self.trees = trees
        self.owner: dict[ast.AST, object] = {}  # node -> the scope it is read in
        self.parent: dict[ast.AST, ast.AST] = {}
        self.bound: dict[object, set[str]] = defaultdict(set)  # scope -> names bound there
        self.skipped: dict[object, set[str]] = defaultdict(set)  # scope -> names declared global/nonlocal
        self.loop_bound: dict[ast.AST, set[str]] = {}  # loop -> names its body binds
        self.methods: dict[str, list[ast.AST]] = defaultdict(list)  # name -> the notebook's methods so named
        self.env: dict[tuple, set] = defaultdict(set)
        self.items: list[tuple] = []  # ("bind", keys, expr, at) or ("call", call) or ("origins", keys, set)
        self.added = 0  # origins added, against BUDGET
        self.flows: dict[_Param, set[_Param]] = defaultdict(set)  # a parameter -> those it is handed to
        for tree in trees:
            if tree is not None:
                self._walk(tree)
        self.imports = {(NOTEBOOK, name) for name in modules}  # names bound by an import
        for name in modules:
            self.items.append(("origins", [(NOTEBOOK, name)], {name}))
        for tree in trees:
            for node in ast.walk(tree) if tree is not None else ():
                self._collect(node)
        self._solve()

    # -- scopes ------------------------------------------------------------------------------------
    def _walk(self, tree: ast.Module) -> None:
        stack = [(statement, tree, NOTEBOOK) for statement in tree.body]
        while stack:
            node, parent, scope = stack.pop()
            self.owner[node], self.parent[node] = scope, parent
            inner = node if isinstance(node, SCOPES) else scope
            stack.extend((child, node, inner) for child in ast.iter_child_nodes(node))
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                self.bound[self._binding_scope(node, scope)].add(node.id)
            elif isinstance(node, ast.arg):
                self.bound[scope].add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bound[scope].add(node.name)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and isinstance(scope, ast.ClassDef):
                    self.methods[node.name].append(node)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.bound[scope].update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                self.skipped[scope].update(node.names)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self.bound[scope].add(node.name)

    def _binding_scope(self, name: ast.Name, scope: object) -> object:
        """`(m := np)` in a comprehension binds m in the scope around it."""
        if isinstance(self.parent.get(name), ast.NamedExpr):
            while isinstance(scope, COMPREHENSIONS):
                scope = self.owner[scope]
        return scope

    def key(self, name: str, at: ast.AST) -> tuple:
        """(scope or loop, name) that `name` read at node `at` refers to, as Python resolves it."""
        loop = self._loop(name, at)
        if loop is not None:
            return loop, name
        scope = self.owner.get(at, NOTEBOOK)
        first = True
        while scope is not NOTEBOOK:
            if (name in self.bound[scope] and name not in self.skipped[scope]  # global m: not this scope's
                    and (first or not isinstance(scope, ast.ClassDef))):  # a class body's names stay in it
                return scope, name
            first = False
            scope = self.owner[scope]
        return NOTEBOOK, name

    def _loop(self, name: str, at: ast.AST) -> ast.AST | None:
        """The loop whose variable `name` is at `at`, inside its body, when the body binds it nowhere else."""
        child, node = at, self.parent.get(at)
        while node is not None and not isinstance(node, SCOPES):
            if isinstance(node, LOOPS) and any(child is s for s in node.body) and name in _names(node.target):
                return node if self._owns(node, name) else None
            child, node = node, self.parent.get(node)
        return None

    def _owns(self, loop: ast.AST, name: str) -> bool:
        """Whether `name`, in the loop's body, is only ever what the loop draws."""
        if loop not in self.loop_bound:
            self.loop_bound[loop] = {n.id for statement in loop.body for n in _own_walk(statement)
                                     if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        return name not in self.loop_bound[loop]

    # -- bindings ----------------------------------------------------------------------------------
    def _collect(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._bind(target, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            self._bind(node.target, node.value)
        elif isinstance(node, (*LOOPS, ast.comprehension)):  # each item drawn: any of what is iterated
            for name in _names(node.target):  # in the scope (what it is after the loop) and in the loop's body
                keys = [self.key(name, node.target)] + ([(node, name)] if isinstance(node, LOOPS)
                                                        and self._owns(node, name) else [])
                self.items.append(("bind", keys, node.iter, node.iter))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            self._bind(node.optional_vars, node.context_expr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            base = "." * getattr(node, "level", 0) + (getattr(node, "module", None) or "")
            for alias in node.names:
                if alias.name == "*":
                    continue
                bound = alias.asname or alias.name.split(".")[0]
                real = (f"{base}.{alias.name}" if isinstance(node, ast.ImportFrom)
                        else alias.name if alias.asname else bound)
                self.imports.add(self.key(bound, node))
                self.items.append(("origins", [self.key(bound, node)], {real}))
        elif isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            if not isinstance(node, ast.Lambda):
                self.items.append(("origins", [self.key(node.name, node)], {_Function(node)}))
            if not isinstance(node, ast.ClassDef):
                self._parameters(node)
        elif isinstance(node, ast.Call):
            self.items.append(("call", node))

    def _bind(self, target: ast.AST, value: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in value.elts):
            for part, item in zip(target.elts, value.elts):
                self._bind(part, item)
            return
        names = [n for n in ast.walk(target) if isinstance(n, ast.Name)] if not isinstance(
            target, (ast.Attribute, ast.Subscript)) else []
        if names:
            self.items.append(("bind", [self.key(n.id, n) for n in names], value, value))

    def _parameters(self, function: ast.AST) -> None:
        args = function.args
        positional = [*args.posonlyargs, *args.args]
        for arg in [*positional, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                self.items.append(("origins", [(function, arg.arg)], {_Param(function, arg.arg)}))
        for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
            self.items.append(("bind", [(function, arg.arg)], default, function))
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            if default is not None:
                self.items.append(("bind", [(function, arg.arg)], default, function))

    # -- what an expression may be -----------------------------------------------------------------
    def origins(self, node: ast.AST, at: ast.AST | None = None) -> set:
        """What `node` may evaluate to, of what the notebook imported, defined or was handed; `at`:
        where its names are read when not where they are written (a default: in the scope around)."""
        attributes = []
        while isinstance(node, ast.Attribute) or self._constant_getattr(node):
            attributes.append(node.attr if isinstance(node, ast.Attribute) else node.args[1].value)
            node = node.value if isinstance(node, ast.Attribute) else node.args[0]
        found = self._origins(node, at)
        for attribute in reversed(attributes):
            found = self._attribute(found, attribute)
        return found

    def _origins(self, node: ast.AST, at: ast.AST | None) -> set:
        if isinstance(node, ast.Name):
            return set(self.env.get(self.key(node.id, node if at is None else at), ()))
        if isinstance(node, ast.Lambda):
            return {_Function(node)}
        if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.BoolOp)):
            return set().union(*(self.origins(e, at) for e in (node.values if isinstance(node, ast.BoolOp) else node.elts)))
        if isinstance(node, (ast.Starred, ast.Subscript, ast.NamedExpr)):
            return self.origins(node.value, at)  # an item of a tuple of modules stands for them all
        if isinstance(node, ast.IfExp):
            return self.origins(node.body, at) | self.origins(node.orelse, at)
        if self._builtin_call(node, "getattr") and node.args:
            return self.origins(node.args[0], at)  # a name that is not a constant: the object itself
        return set()

    def _attribute(self, found: set, attribute: str) -> set:
        out = set()
        for origin in found:
            if isinstance(origin, str):
                out.add(origin if origin.count(".") >= MAX_DEPTH else f"{origin}.{attribute}")
            elif isinstance(origin, _Param):
                out.add(origin)  # reached through the parameter: a write there is a write to it
            elif isinstance(origin, _Function) and isinstance(origin.node, ast.ClassDef):
                out.update(_Function(m) for m in origin.node.body
                           if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == attribute)
        return out

    def _constant_getattr(self, node: ast.AST) -> bool:
        return (self._builtin_call(node, "getattr") and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str))

    def _builtin_call(self, node: ast.AST, name: str) -> bool:
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
                and not self.env.get(self.key(name, node.func)))

    # -- the fixed point ---------------------------------------------------------------------------
    def _solve(self) -> None:
        readers: dict[tuple, list[int]] = defaultdict(list)
        for index, item in enumerate(self.items):
            for name in self._reads(item):
                readers[name].append(index)
        queue, queued = list(range(len(self.items))), set(range(len(self.items)))
        while queue:
            index = queue.pop()
            queued.discard(index)
            for changed in self._apply(self.items[index]):
                for reader in readers.get(changed, ()):
                    if reader not in queued:
                        queued.add(reader)
                        queue.append(reader)

    def _reads(self, item: tuple) -> set[tuple]:
        if item[0] == "origins":
            return set()
        nodes = [item[2]] if item[0] == "bind" else [item[1].func, *item[1].args, *item[1].keywords]
        at = item[3] if item[0] == "bind" and item[3] is not item[2] else None
        return {self.key(n.id, n if at is None else at) for node in nodes for n in ast.walk(node)
                if isinstance(n, ast.Name)}

    def _apply(self, item: tuple) -> list[tuple]:
        if item[0] == "origins":
            return self._add(item[1], item[2])
        if item[0] == "bind":
            at = item[3] if item[3] is not item[2] else None
            return self._add(item[1], self.origins(item[2], at))
        changed = []
        for function, param, value in self._handed(item[1]):
            found = self.origins(value)
            for origin in found:  # a parameter handed on: written if where it goes is
                if isinstance(origin, _Param):
                    self.flows[origin].add(_Param(function, param))
            changed += self._add([(function, param)], {o for o in found if not isinstance(o, _Param)})
        return changed

    def _add(self, keys: list[tuple], found: set) -> list[tuple]:
        """Adds what `found` may be to each key: every function and parameter (there are as many as the
        notebook defines), imported objects up to MAX_ORIGINS (then MORE)."""
        changed = []
        for key in keys:
            known = self.env[key]
            new = found - known
            strings = sorted(o for o in new if isinstance(o, str))
            room = MAX_ORIGINS - sum(isinstance(o, str) for o in known)
            if len(strings) > room:
                new = (new - set(strings)) | set(strings[:max(room, 0)]) | ({MORE} - known)
            if new:
                known.update(new)
                changed.append(key)
                self.added += len(new)
                if self.added > BUDGET:
                    raise TooLarge(f"more than {BUDGET} names to follow")
        return changed

    def _handed(self, call: ast.Call) -> list[tuple[ast.AST, str, ast.AST]]:
        """(function, parameter, argument) for what `call` hands the notebook's functions."""
        targets = []
        for origin in self.origins(call.func):
            if isinstance(origin, _Function) and isinstance(origin.node, ast.ClassDef):
                targets += [(m, 1) for m in origin.node.body
                            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == "__init__"]
            elif isinstance(origin, _Function):
                targets.append((origin.node, 0))
        if isinstance(call.func, ast.Attribute):  # obj.method(...): the notebook's methods of that name
            targets += [(method, 1) for method in self.methods.get(call.func.attr, ())]
        handed = [(function, param, value) for function, skip in targets
                  for param, value in _parameters_given(function, skip, call)]
        # a function handed on with what it will be given: map(f, [np]), partial(f, np), Thread(target=f, args=...)
        values = [*call.args, *(k.value for k in call.keywords if k.arg in HANDED)]
        for origin in set().union(*(self.origins(v) for v in [*call.args, *(k.value for k in call.keywords)])):
            if isinstance(origin, _Function):
                node = origin.node
                functions = ([(m, 1) for m in node.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"]
                             if isinstance(node, ast.ClassDef) else [(node, 0)])
                handed += [(function, param, value) for function, skip in functions
                           for param in _all_parameters(function, skip) for value in values]
        return handed

    # -- the writes --------------------------------------------------------------------------------
    def writes(self) -> tuple[Write, ...]:
        found, written = [], set()  # written: parameters some write goes through
        for cell, tree in enumerate(self.trees):
            for node in ast.walk(tree) if tree is not None else ():
                for what, target in self._written(node):
                    root = _root(target)
                    if root is None:
                        continue
                    origins = self.origins(root)
                    written.update(o for o in origins if isinstance(o, _Param))
                    into = {f"{o}{_rest(target, root)}" for o in origins if isinstance(o, str)}
                    if into:
                        alias = self.key(root.id, root) not in self.imports
                        found.append(Write(cell, node.lineno, what, frozenset(into), alias))
        handed_to: dict[_Param, set[_Param]] = defaultdict(set)
        for source, targets in self.flows.items():
            for target in targets:
                handed_to[target].add(source)
        stack = list(written)  # a parameter handed to a written one is written
        while stack:
            for source in handed_to.get(stack.pop(), ()):
                if source not in written:
                    written.add(source)
                    stack.append(source)
        for cell, tree in enumerate(self.trees):
            for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)) if tree is not None else ():
                into = {o for function, param, value in self._handed(call) if _Param(function, param) in written
                        for o in self.origins(value) if isinstance(o, str)}
                if into:
                    found.append(Write(cell, call.lineno, _quoted(call), frozenset(into), True))
        return tuple(found)

    def _written(self, node: ast.AST) -> list[tuple[str, ast.AST]]:
        """(what the code does, the expression whose root it writes into) for each write `node` is."""
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            parts = [p for t in targets for p in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])]
            out = []
            for part in parts:
                part = part.value if isinstance(part, ast.Starred) else part
                if isinstance(part, (ast.Attribute, ast.Subscript)):  # `np.x`, `d[...]`, `sys.modules['m'].x`
                    where = (f"{dotted(part.value) or _quoted(part.value)}[...]" if isinstance(part, ast.Subscript)
                             else dotted(part) or _quoted(part))
                    out.append((f"del {where}" if isinstance(node, ast.Delete) else f"{where} = ...", part))
            return out
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            return [(dotted(node) or "__dict__", node.value)]
        if not isinstance(node, ast.Call) or not node.args:
            return []
        first = node.args[0]
        if isinstance(node.func, ast.Name) and node.func.id in WRITERS and self._builtin_call(node, node.func.id):
            return [(f"{node.func.id}({dotted(first) or getattr(_root(first), 'id', '...')}, ...)", first)]
        if isinstance(node.func, ast.Attribute) and node.func.attr in BY_HAND:
            on_class = len(node.args) == BY_HAND[node.func.attr]  # object.__setattr__(np, "x", f)
            name = dotted(node.func) or node.func.attr
            return [(f"{name}({dotted(first) or '...'}, ...)" if on_class else f"{name}(...)",
                     first if on_class else node.func.value)]
        return []

    def names(self) -> dict:
        out = {}
        for cell, tree in enumerate(self.trees):
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    found = frozenset(o for o in self.env.get(self.key(node.id, node), ()) if isinstance(o, str))
                    if found:
                        out[cell, node.lineno, node.col_offset] = found
        return out


def _rest(target: ast.AST, root: ast.Name) -> str:
    """`.a.b` of `root.a.b[...]`: the attributes between the root and the first item or call."""
    text = dotted(target.value if isinstance(target, ast.Subscript) else target) or root.id
    return text[len(root.id):] if text.startswith(root.id) else ""


def _names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _own_walk(statement: ast.AST):
    """The nodes of a statement, not entering the functions, classes and comprehensions it defines."""
    stack = [statement]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, SCOPES))


def _all_parameters(function: ast.AST, skip: int) -> list[str]:
    args = function.args
    names = [a.arg for a in [*args.posonlyargs, *args.args][skip:]]
    return names + [a.arg for a in [*args.kwonlyargs, args.vararg, args.kwarg] if a is not None]


def _parameters_given(function: ast.AST, skip: int, call: ast.Call) -> list[tuple[str, ast.AST]]:
    """(parameter, argument) as Python matches a call's arguments to a function's parameters."""
    args = function.args
    positional = [a.arg for a in [*args.posonlyargs, *args.args][skip:]]
    keywords = {a.arg for a in [*args.args, *args.kwonlyargs]}
    given = []
    for index, value in enumerate(call.args):
        if isinstance(value, ast.Starred):  # f(*xs): any parameter from here on
            given += [(p, value) for p in positional[index:]] + ([(args.vararg.arg, value)] if args.vararg else [])
        elif index < len(positional):
            given.append((positional[index], value))
        elif args.vararg:
            given.append((args.vararg.arg, value))
    for keyword in call.keywords:
        if keyword.arg is None:  # f(**d)
            given += [(p, keyword.value) for p in _all_parameters(function, skip)]
        elif keyword.arg in keywords:
            given.append((keyword.arg, keyword.value))
        elif args.kwarg:
            given.append((args.kwarg.arg, keyword.value))
    return given
