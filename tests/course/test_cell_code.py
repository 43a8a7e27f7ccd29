"""What a cell's code defines and reads, read as the kernel runs it (magics and all), never run."""

from __future__ import annotations

import ast

from autograder.course.cell_code import (
    NESTED,
    defined_names,
    imported_names,
    magic,
    nested_magics,
    parse,
    python_only,
    top_level_reads,
    used_names,
)


def test_defined_names_are_the_top_levels_defs_classes_assignments_and_imports():
    source = ("import numpy as np\nfrom torch import nn\nimport os.path\n\ndef f(x):\n    inner = 1\n"
              "class Net(nn.Module):\n    pass\nw1, (w2, b) = 1, (2, 3)\nlosses: list = []\ncount += 1\n")
    assert defined_names(source) == {"np", "nn", "os", "f", "Net", "w1", "w2", "b", "losses", "count"}
    assert defined_names("def broken(:\n") == set()  # a cell that does not parse defines nothing


def test_imported_names_include_imports_inside_functions():
    assert imported_names("def f():\n    import torch.nn.functional as F\n    from math import pi\n") == {"F", "pi"}


def test_reads_at_the_top_leave_out_what_functions_read_when_called():
    source = "def f(x):\n    return helper(x)\ny = f(data) + offset\nlam = lambda: hidden\n"
    assert top_level_reads(source) == {"f", "data", "offset"}
    assert {"helper", "data", "offset", "hidden", "x"} <= used_names(source)


def test_a_magics_code_is_code_of_the_cell_as_ipython_runs_it():
    assert "answer" in defined_names("%%time\nanswer = compute(x)\n")
    assert "x" in used_names("%timeit -n1 -r1 f(x)\n")
    assert "secret" in used_names("%%capture out\n%%time\nprint(secret)\n")  # nested cell magics
    assert defined_names("!ls\nfiles = !ls\n") == {"files"}  # a shell escape is a call, not a syntax error


def test_the_calls_ipython_writes_for_magics_are_read_as_magics():
    tree = parse("%run helper.py\n")
    calls = [magic(node) for node in ast.walk(tree) if magic(node)]
    assert calls == [("run", "helper.py", None)]
    assert "__ipython_magic__()" in python_only("%time f()\n")  # not a name the student wrote
    assert "get_ipython()" in python_only("get_ipython().run_line_magic('time', 'f()')\n")
    assert magic(ast.parse("obj.run_line_magic('time', 'f()')").body[0].value) is None


def test_lines_are_numbered_as_the_student_sees_them():
    tree = parse("\n\n%%time\nx = 1\n")
    assert [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assign)] == [4]


def test_how_deep_cell_magics_are_nested_and_beyond_nested_nothing_is_read():
    deep = "".join("%%capture\n" for _ in range(NESTED + 1)) + "hidden = 1\n"
    assert nested_magics(deep) == NESTED + 1
    assert "hidden" not in defined_names(deep)
    shallow = "".join("%%capture\n" for _ in range(NESTED - 1)) + "seen = 1\n"
    assert "seen" in defined_names(shallow)
    assert nested_magics("x = 1\n%%time\n") == 0
