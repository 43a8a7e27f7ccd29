"""What a notebook's code writes into, traced back to what it imported (never run): the writes the
scan names (autograder/engine/scan.py holds the attacks and the right answers that stay unflagged)."""

from __future__ import annotations

import ast

from autograder.engine.writes import MORE, Write, dotted, read, stands_for


def found(*cells: str, modules=frozenset()) -> set[tuple[int, str, frozenset, bool]]:
    writes, _ = read(tuple(cells), frozenset(modules))
    return {(w.cell, w.what, w.into, w.alias) for w in writes}


def test_a_write_into_a_module_by_its_name_or_another_is_traced_to_the_module():
    assert found("import numpy as np\nnp.testing.assert_allclose = None\n") == {
        (0, "np.testing.assert_allclose = ...", frozenset({"numpy.testing.assert_allclose"}), False)}
    assert found("import numpy as np", "m = np\nm.allclose = lambda *a, **k: True\n") == {
        (1, "m.allclose = ...", frozenset({"numpy.allclose"}), True)}


def test_every_kind_of_write_is_one():
    cells = ("import torch\nfrom helpers import checks\n",
             "setattr(checks, 'check_close', print)\ndelattr(torch, 'testing')\nvars(torch)['x'] = 1\n"
             "torch.__dict__\nobject.__setattr__(checks, 'passed', None)\ndel torch.nn\n")
    assert {(what, into) for _, what, into, _ in found(*cells)} == {
        ("setattr(checks, ...)", frozenset({"helpers.checks"})), ("delattr(torch, ...)", frozenset({"torch"})),
        ("vars(torch, ...)", frozenset({"torch"})), ("torch.__dict__", frozenset({"torch"})),
        ("object.__setattr__(checks, ...)", frozenset({"helpers.checks"})), ("del torch.nn", frozenset({"torch.nn"}))}


def test_an_imported_object_handed_to_a_function_that_writes_into_it_is_named_at_the_call():
    writes = found("import torch\n", "def patch(mod):\n    setattr(mod, 'isclose', None)\n\npatch(torch)\n")
    assert (1, "setattr(mod, ...)", frozenset({"torch"}), True) in writes
    assert (1, "patch(torch)", frozenset({"torch"}), True) in writes


def test_a_loop_variable_is_what_its_loop_draws():
    assert found("import numpy as np\nimport torch\nfor m in (np, torch):\n    del m.linalg\n") == {
        (0, "del m.linalg", frozenset({"numpy.linalg", "torch.linalg"}), True)}


def test_what_a_call_returns_is_new_and_a_students_own_objects_are_no_imports():
    assert found("import numpy as np\nimport torch.nn as nn\n",
                 "x = np.zeros(3)\nx[0] = 1\nnet = nn.Linear(2, 3)\nnet.weight = None\nd = {}\nd['k'] = 2\n") == set()


def test_names_imported_in_cells_not_shown_count_and_read_names_say_what_they_stand_for():
    assert found("np.linalg = None\n", modules={"np"}) == {
        (0, "np.linalg = ...", frozenset({"np.linalg"}), False)}
    cells = ("import numpy as np\nalias = np\n", "alias.sum\n")
    _, names = read(cells)
    node = next(n for n in ast.walk(ast.parse(cells[1])) if isinstance(n, ast.Name) and n.id == "alias")
    assert stands_for(names, 1, node) == frozenset({"numpy"})
    assert dotted(ast.parse("a.b.c").body[0].value) == "a.b.c" and dotted(ast.parse("f().b").body[0].value) is None
    assert MORE.startswith("(") and Write(0, 1, "x", frozenset(), False).alias is False
