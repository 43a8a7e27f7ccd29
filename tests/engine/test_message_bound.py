"""A kernel's message is bounded before the grader reads it (threat model: what it hands back is bounded).

jupyter_client deserializes a kernel's message whole (JSON of every frame) before GradingExecute's output
caps look at it: one print of 300 MB made the grader's process reach 1,014 MiB. The grader's sockets now
refuse any message over warm_kernel.MAX_MESSAGE_BYTES (ZeroMQ's MAXMSGSIZE): it is dropped unread, and the
notebook goes on.

The peak is the process's own VmHWM (/proc/self/status), not getrusage's ru_maxrss: Linux carries the
forking process's high-water mark across exec into ru_maxrss, so a test worker that had grown to 600 MiB
made every child it started report 600 MiB before it had read a byte.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

RUN = textwrap.dedent('''
    import json, sys
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
    with open("/proc/self/status") as status:  # this process's own peak (VmHWM, kB)
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    print(json.dumps({"peak_mib": peak // 1024, "after": open(sys.argv[2] + "/after.txt").read(),
                      "received": sum(len(str(o.get("text", ""))) for o in nb.cells[0].get("outputs", []))}))
''')


def run(how: str, folder) -> dict:
    done = subprocess.run([sys.executable, "-c", RUN, how, str(folder)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_300_mb_message_is_dropped_before_the_grader_reads_it(tmp_path):
    bounded = run("bounded", tmp_path)
    assert bounded["after"] == "the next cell ran"  # the notebook went on
    assert bounded["received"] < 1 << 20, bounded  # the flood's text never reached the notebook
    assert bounded["peak_mib"] < 400, bounded  # unbounded: 1,014 MiB here (the message, its JSON, its text)
