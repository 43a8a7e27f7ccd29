"""A mutant family's kernel side (autograder/probes/forked_cells.py), outside a kernel: cells run in a fork
that holds the parent's state, each outcome reported, a child past its time killed (families in
`check`: tests/authoring/test_families.py)."""

from __future__ import annotations

import json


def test_forked_cells_report_each_cell_and_leave_the_parent_alone(tmp_path):
    """autograder/probes/forked_cells.py outside a kernel: state is the parent's, changes stay in the child,
    a value is reported as text, an error by its type, a death by how the child ended."""
    import subprocess
    import sys

    script = tmp_path / "run.py"
    script.write_text(
        "import json\nfrom autograder.probes.forked_cells import run\n"
        "x = 2\n"
        "said = json.loads(run(['x = x * 10\\nx', 'raise ValueError(\"no\")', 'x + 1', "
        "'import os\\nos._exit(3)', 'x'], 5, 'demo'))['autograder_forked']\n"
        "print(json.dumps({'said': said, 'x': x}))\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True)
    result = json.loads(out.stdout.splitlines()[-1])
    said = result["said"]
    assert result["x"] == 2  # the parent's x
    assert [r.get("text") for r in said["ran"]] == ["20", None, "21"]
    assert said["ran"][1]["error"] == "ValueError: no"
    assert said["ended"] == "exited with status 3" and said["cells"] == 5 and said["label"] == "demo"


def test_a_child_that_ignores_the_interrupt_is_killed(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "run.py"
    script.write_text(
        "import json\nfrom autograder.probes import forked_cells\nforked_cells._GRACE = 1\n"
        "code = 'import time\\nwhile True:\\n    try:\\n        time.sleep(5)\\n    except BaseException:\\n        pass'\n"
        "print(forked_cells.run(['1', code, '2'], 1, 'stubborn'))\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True)
    said = json.loads(out.stdout.splitlines()[-1])["autograder_forked"]
    assert said["ended"] == "killed after 4 s" and [r["index"] for r in said["ran"]] == [0]
    assert said["seconds"] < 15
