"""The grading kernels' manager: forked warm from a kernel server, limited, sandboxed.

WarmKernelManager is jupyter_client's kernel manager with one change: the kernel command it
would run is handed to the launcher of autograder/kernel_server.py, which has the kernel forked
from the server (`server`, a socket) or, without one, execs it cold; either way the kernel
process gets its memory and CPU limits and its hidden paths (autograder/sandbox.py) before it
runs a line. Connection files, ports, signals and shutdown stay jupyter_client's. With nothing
to do (no server, no limit, nothing hidden) the command is left as it is.
autograder/execute.py's GradingExecute configures it.
"""

from __future__ import annotations

import sys

from jupyter_client.manager import AsyncKernelManager
from traitlets import Integer, List, Unicode


class WarmKernelManager(AsyncKernelManager):
    """AsyncKernelManager whose kernels are forked from a warm kernel server, limited, sandboxed."""

    server = Unicode("", help="Unix socket of the kernel server; empty: ordinary kernels").tag(
        config=True)
    memory_limit = Integer(0, help="the kernel's data segment in bytes (RLIMIT_DATA); 0: none").tag(
        config=True)
    cpu_limit = Integer(0, help="the kernel's CPU seconds (RLIMIT_CPU); 0: none").tag(config=True)
    hide = List(Unicode(), help="paths that look empty to the kernel (autograder/sandbox.py)").tag(
        config=True)

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        command = super().format_kernel_cmd(extra_arguments)
        options = [arg for path in self.hide for arg in ("--hide", path)]
        if self.memory_limit:
            options += ["--memory", str(int(self.memory_limit))]
        if self.cpu_limit:
            options += ["--cpu", str(int(self.cpu_limit))]
        if not self.server and not options:
            return command
        return [sys.executable, "-m", "autograder.kernel_server", "launch", self.server or "-",
                *options, "--", *command]
