"""The grader's layers (autograder/layers.py, docs/design.md "Layers"), read from every import.

Every import of every module counts: top level or inside a function (lazy), absolute or relative
(`from . import x`), in subpackages too, and an import by a constant name
(`importlib.import_module("autograder.batch.grade")`, `__import__(...)`). An import runs upward (a lower layer importing a higher
one) or sideways between sibling layers: a failure. A command (what `__main__` imports as a
module) imported by anything but `__main__`: a failure, unless it is one of the known
exceptions below, each with its reason; an exception that no longer occurs must leave the list.
A cycle anywhere in the import graph: a failure.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

from autograder import layers

PACKAGE = layers.PACKAGE
REPO = PACKAGE.parent

# Commands that another module may import, each with its reason: none (issue 21, item 7). What two
# commands share lives in a module that is no command.
KNOWN_COMMAND_IMPORTS: dict[tuple[str, str], str] = {}


def modules(package: Path) -> dict[str, Path]:
    """Every module of the package under `package` (subpackages included): dotted name -> file."""
    return {layers.module_name(path, package): path for path in sorted(package.rglob("*.py"))
            if "__pycache__" not in path.parts}


# What imports a module named by a string: importlib.import_module (or import_module imported from
# importlib) and __import__ (or builtins.__import__). Given the name as a constant, it is an edge.
DYNAMIC_IMPORTERS = ("import_module", "__import__")


def dynamic_import(node: ast.AST) -> str | None:
    """The module a call imports by a constant name (`importlib.import_module("a.b")`,
    `import_module(".b", "a")`, `__import__("a.b")`), absolute; None for any other node."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    first = node.args[0]
    if name not in DYNAMIC_IMPORTERS or not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None
    if not first.value.startswith("."):
        return first.value
    package = node.args[1] if len(node.args) > 1 and name == "import_module" else next(
        (k.value for k in node.keywords if k.arg == "package"), None)
    if isinstance(package, ast.Constant) and isinstance(package.value, str):
        return importlib.util.resolve_name(first.value, package.value)
    return None


def import_graph(package: Path) -> dict[str, set[str]]:
    """module -> the package's modules it imports, anywhere in its file: import statements and
    imports by a constant name (`dynamic_import`)."""
    found = modules(package)
    root = package.name

    def resolve(name: str) -> str | None:
        """The module `name` names, or the package or module that holds it (an imported class)."""
        while name and name not in found:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in found.items():
        is_package = path.name == "__init__.py"
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            dynamic = dynamic_import(node)
            if dynamic is not None and dynamic.split(".")[0] == root:
                targets.add(resolve(dynamic))
            elif isinstance(node, ast.Import):
                targets.update(resolve(alias.name) for alias in node.names
                               if alias.name.split(".")[0] == root)
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: from . import x, from ..course import layout
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[:len(base) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                if module.split(".")[0] != root:
                    continue
                for alias in node.names:  # a submodule by name, else the module holding the name
                    targets.add(resolve(f"{module}.{alias.name}"))
        graph[name] = {t for t in targets if t is not None} - {name}
    return graph


def command_tops(graph: dict[str, set[str]], package: Path) -> set[str]:
    """The modules `__main__` imports as modules, or names to import when their command runs: its
    COMMANDS."""
    main = package / "__main__.py"
    named = set()
    for node in ast.walk(ast.parse(main.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            named.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named.add(node.value)  # a module's name, imported by importlib
    return named & set(graph)


def _command_of(module: str, tops: set[str]) -> str | None:
    return next((t for t in tops if module == t or module.startswith(t + ".")), None)


def commands(graph: dict[str, set[str]], package: Path) -> set[str]:
    """The commands, and the modules inside them (a command that is a package: site)."""
    tops = command_tops(graph, package)
    return {m for m in graph if _command_of(m, tops)}


def placement_problems(graph: dict[str, set[str]]) -> list[str]:
    return [f"{m}: in no layer (autograder/layers.py)" for m in sorted(graph)
            if layers.layer_of(m) is None]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    problems = []
    for importer, targets in sorted(graph.items()):
        low = layers.layer_of(importer)
        for target in sorted(targets):
            high = layers.layer_of(target)
            if low is None or high is None or low == high:
                continue
            if layers.rank(high) > layers.rank(low):
                problems.append(f"{importer} ({low}) imports {target} ({high}): upward")
            elif layers.rank(high) == layers.rank(low):
                problems.append(f"{importer} ({low}) imports {target} ({high}): sibling layers")
    return problems


def command_imports(graph: dict[str, set[str]], package: Path) -> set[tuple[str, str]]:
    """(importer, command) for every command imported by anything but __main__ or the command itself."""
    tops = command_tops(graph, package)
    main = f"{package.name}.__main__"
    return {(importer, target) for importer, targets in graph.items() for target in targets
            if _command_of(target, tops) and importer != main
            and _command_of(importer, tops) != _command_of(target, tops)}  # a command's own parts may


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan), as a sorted list."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


@pytest.fixture(scope="module")
def graph():
    return import_graph(PACKAGE)


def test_every_module_sits_in_a_layer(graph):
    assert "autograder.engine.job" in graph and "autograder.authoring.site" in graph
    assert placement_problems(graph) == []


def test_no_import_runs_upward_or_between_sibling_layers(graph):
    assert "autograder.engine.job" in graph["autograder.batch.grade"]  # the walk sees imports
    assert "autograder.engine.verify" in graph["autograder.engine.job"]  # lazy ones too
    assert upward_imports(graph) == []


def test_commands_are_imported_by_the_command_line_alone(graph):
    found = commands(graph, PACKAGE)
    assert {"autograder.batch.grade", "autograder.authoring.check",
            "autograder.classroom.gradescope.results"} <= found
    assert "autograder.course.layout" not in found  # __main__ imports names from it, not it
    imports = command_imports(graph, PACKAGE)
    assert sorted(imports - set(KNOWN_COMMAND_IMPORTS)) == []
    assert sorted(set(KNOWN_COMMAND_IMPORTS) - imports) == [], "gone: remove it from the list"


def test_the_import_graph_has_no_cycle(graph):
    assert cycles(graph) == []


def test_a_probe_file_imports_nothing_of_the_grader_but_the_probe_contract():
    probes = sorted(REPO.glob("grading/*/probe.py")) + sorted(REPO.glob("tests/fixtures/*/grading/*/probe.py"))
    probes.append(PACKAGE / "authoring" / "scaffold" / "probe.py")
    assert len(probes) > 3
    for path in probes:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                if name.split(".")[0] == "autograder":
                    # the contract is the probes package (probes.caller: what runs in the kernel)
                    assert name == "autograder.probes" or name.startswith("autograder.probes."), \
                        f"{path}: imports {name}"


def test_the_checks_fail_on_a_tree_that_breaks_each_rule(tmp_path):
    """The walk is only as good as what it sees: an upward import inside a function, a relative
    one, a sibling one, a command imported by another, a cycle and a stray module, each found."""
    tree = tmp_path / "autograder"
    files = {
        "__init__.py": "",
        "__main__.py": "from autograder.authoring import check, release\nfrom autograder.course.layout import Course\n",
        "course/__init__.py": "",
        "course/layout.py": "def f():\n    from autograder.engine import job\n",
        "engine/__init__.py": "",
        "engine/job.py": "from . import scan\n",
        "engine/scan.py": "from .job import grade\n",
        "batch/__init__.py": "",
        "authoring/__init__.py": "",
        "authoring/check.py": "from autograder.authoring import release\n",
        "authoring/release.py": "from ..classroom.export import write\n",
        "classroom/__init__.py": "",
        "classroom/export.py": "",
        "stray.py": "",
    }
    for name, text in files.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    graph = import_graph(tree)
    assert placement_problems(graph) == ["autograder.stray: in no layer (autograder/layers.py)"]
    assert upward_imports(graph) == [
        "autograder.authoring.release (authoring) imports autograder.classroom.export (classroom): sibling layers",
        "autograder.course.layout (course) imports autograder.engine.job (engine): upward"]
    assert command_imports(graph, tree) == {("autograder.authoring.check", "autograder.authoring.release")}
    assert cycles(graph) == [["autograder.engine.job", "autograder.engine.scan"]]


def test_a_dynamic_import_by_a_constant_name_is_an_import(tmp_path):
    """A lower layer reaching a higher one through importlib or __import__ with the module's name
    written out: the same edge as an import statement (before, the walk saw only statements)."""
    tree = tmp_path / "autograder"
    files = {
        "__init__.py": "",
        "__main__.py": "COMMANDS = {'grade': ('autograder.batch.grade', 'main')}\n",
        "course/__init__.py": "",
        "course/layout.py": ("import importlib\n\n\ndef f():\n"
                             "    return importlib.import_module(\"autograder.batch.grade\")\n"),
        "course/term.py": "from importlib import import_module\n\nmodule = import_module('.verify', 'autograder.engine')\n",
        "engine/__init__.py": "",
        "engine/verify.py": "def g(name):\n    return __import__(name), __import__('autograder.authoring.check')\n",
        "batch/__init__.py": "",
        "batch/grade.py": "",
        "authoring/__init__.py": "",
        "authoring/check.py": "",
    }
    for name, text in files.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    graph = import_graph(tree)
    assert upward_imports(graph) == [
        "autograder.course.layout (course) imports autograder.batch.grade (batch): upward",
        "autograder.course.term (course) imports autograder.engine.verify (engine): upward",
        "autograder.engine.verify (engine) imports autograder.authoring.check (authoring): upward"]
    assert command_imports(graph, tree) == {("autograder.course.layout", "autograder.batch.grade")}


# -- tests mirror the layout (docs/design.md, "Layers") ------------------------------------------------

# Modules without a test file of their own, each with its reason. A name ending in ".*" stands for a
# subpackage and everything in it. An entry that names no module any more must go.
WITHOUT_TEST_FILE = {
    "autograder.__main__": "the command line: every command's tests run it; tests/test_package.py (a "
                           "command imports its own module alone) and tests/test_help.py (its help)",
    "autograder.authoring": "a docstring (the layer's rule)",
    "autograder.batch": "a docstring (the layer's rule)",
    "autograder.classroom": "a docstring (the layer's rule)",
    "autograder.course": "a docstring (the layer's rule)",
    "autograder.engine": "a docstring (the layer's rule)",
    "autograder.authoring.scaffold.*": "the files `new` copies into a new assignment (a notebook's cells, "
                                       "a reference, a probe, mutants, a variant): tested as the assignment "
                                       "they make, which passes `check` (tests/authoring/test_new.py)",
}


def mirrored_test(module: str) -> str:
    """Where a module's tests live: autograder.<sub>.<name> -> tests/<sub>/test_<name>.py (a package, by
    its __init__.py: tests/<parent>/test_<package>.py); the package itself: tests/test_package.py."""
    parts = module.split(".")[1:]
    if not parts:
        return "tests/test_package.py"
    return "/".join(["tests", *parts[:-1], f"test_{parts[-1]}.py"])


def excused(module: str, allowed: dict[str, str]) -> str | None:
    """The entry of `allowed` that excuses `module`, if any."""
    return next((entry for entry in allowed if module == entry or (
        entry.endswith(".*") and (module == entry[:-2] or module.startswith(entry[:-1])))), None)


def mirror_problems(package: Path, tests: Path, allowed: dict[str, str]) -> list[str]:
    """Every module of `package` without its test file (mirrored_test), and every entry of `allowed`
    that excuses nothing."""
    problems, used = [], set()
    for module in sorted(modules(package)):
        entry = excused(module, allowed)
        if entry is not None:
            used.add(entry)
        elif not (tests.parent / mirrored_test(module)).is_file():
            problems.append(f"{module}: no {mirrored_test(module)}")
    return problems + [f"{entry}: excused, but it names no module of the package"
                       for entry in sorted(set(allowed) - used)]


def test_every_module_has_a_test_file_of_its_own():
    """docs/design.md: tests mirror the layout (tests/engine/test_scan.py tests autograder/engine/scan.py)."""
    assert mirrored_test("autograder.engine.scan") == "tests/engine/test_scan.py"
    assert mirrored_test("autograder.authoring.site") == "tests/authoring/test_site.py"
    assert mirrored_test("autograder.classroom.gradescope.results") == "tests/classroom/gradescope/test_results.py"
    assert mirror_problems(PACKAGE, REPO / "tests", WITHOUT_TEST_FILE) == []


def test_a_module_without_its_test_file_is_found(tmp_path):
    """The rule fails on a module with no test file of its own and on an excuse that excuses nothing."""
    package, tests = tmp_path / "autograder", tmp_path / "tests"
    files = {"autograder/__init__.py": "", "autograder/course/__init__.py": "", "autograder/course/term.py": "",
             "autograder/course/layout.py": "", "autograder/engine/__init__.py": "",
             "autograder/engine/template.py": "", "autograder/nbgrader_config.py": "",
             "tests/test_package.py": "import autograder\n",
             "tests/course/test_term.py": "from autograder.course import term\n",
             "tests/test_nbgrader_config.py": "CONFIG = 'autograder/nbgrader_config.py'\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    allowed = {"autograder.course": "a docstring", "autograder.engine": "a docstring",
               "autograder.batch.*": "gone"}
    assert mirror_problems(package, tests, allowed) == [
        "autograder.course.layout: no tests/course/test_layout.py",
        "autograder.engine.template: no tests/engine/test_template.py",
        "autograder.batch.*: excused, but it names no module of the package"]


def test_the_design_draws_the_layers_that_the_code_declares():
    design = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    drawing = design.split("## Layers", 1)[1].split("\n## ", 1)[0]
    for names in layers.LAYERS:
        for name in names:
            assert re.search(rf"\b{re.escape(name)}\b", drawing), name


def checkout_defaults(package: Path) -> list[str]:
    """'file:line' of every parameter or command-line option of the package that defaults to
    REPO_ROOT (the folder this grader runs from)."""
    found = []
    for path in modules(package).values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
            elif isinstance(node, ast.keyword) and node.arg == "default":
                defaults = [node.value]
            else:
                continue
            if any(isinstance(n, ast.Name) and n.id == "REPO_ROOT" for d in defaults for n in ast.walk(d)):
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}")
    return found


def test_the_course_is_passed_not_defaulted_to_this_checkout():
    """One handle for the course: no parameter or option defaults to this checkout's folder, where
    a course named by --root (or AUTOGRADER_ROOT) would silently get this checkout's settings,
    links or packages (the site and the Gradescope zip did)."""
    assert checkout_defaults(PACKAGE) == []


def test_a_default_to_this_checkout_is_found(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "m.py").write_text("from x import REPO_ROOT\n\n\ndef f(root=REPO_ROOT):\n    pass\n\n\n"
                                  "def g(*, out=REPO_ROOT / 'build'):\n    pass\n\n\n"
                                  "parser.add_argument('--out', default=REPO_ROOT / 'dist')\n")
    assert checkout_defaults(package) == ["pkg/m.py:4", "pkg/m.py:8", "pkg/m.py:12"]
