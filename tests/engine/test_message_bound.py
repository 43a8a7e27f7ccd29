"""A kernel's message is bounded before the grader reads it (threat model: what it hands back is bounded).

jupyter_client deserializes a kernel's message whole (JSON of every frame) before GradingExecute's output
caps look at it: one print of 300 MB made the grader's process reach 1,014 MiB. The grader's sockets now
refuse any message over warm_kernel.MAX_MESSAGE_BYTES (ZeroMQ's MAXMSGSIZE): it is dropped unread, and the
notebook goes on.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

RUN = textwrap.dedent('''
    import json, resource, sys
    import nbformat
    from autograder.engine import warm_kernel
    from autograder.engine.execute import GradingExecute
    if sys.argv[1] == "unbounded":  # as before the bound
        warm_kernel.MAX_MESSAGE_BYTES = -1
    flood = "import sys\\nsys.stdout.write('x' * (300 << 20))\\nsys.stdout.flush()"
    after = "open('after.txt', 'w').write('the next cell ran')"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(flood), nbformat.v4.new_code_cell(after)])
    executor = GradingExecute(kernel_name="python3", timeout=60, sandbox=False, raise_on_iopub_timeout=False,
                              iopub_timeout=2)
    executor.preprocess(nb, {"metadata": {"path": sys.argv[2]}})
    print(json.dumps({"peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
                      "after": open(sys.argv[2] + "/after.txt").read()}))
''')


def run(how: str, folder) -> dict:
    done = subprocess.run([sys.executable, "-c", RUN, how, str(folder)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_300_mb_message_is_dropped_before_the_grader_reads_it(tmp_path):
    bounded = run("bounded", tmp_path)
    assert bounded["after"] == "the next cell ran"  # the notebook went on
    assert bounded["peak_mib"] < 400, bounded  # unbounded: 1,014 MiB here (the message, its JSON, its text)
