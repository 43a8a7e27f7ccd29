"""Kernels forked from a kernel server, wired into nbgrader's Execute preprocessor.

WarmKernelManager is jupyter_client's kernel manager with one change: the kernel command it
would run is handed to a launcher that has the kernel forked from the server
(autograder/kernel_server.py). Connection files, ports, signals and shutdown stay
jupyter_client's. WarmExecute is nbgrader's Execute using that manager when
`WarmExecute.kernel_server` names a socket (nbgrader's Execute passes its own manager class
as an argument, so configuring `Execute.kernel_manager_class` alone has no effect).
autograder/config.py puts WarmExecute in Autograde's pipeline when a server runs.
"""

from __future__ import annotations

import sys

from jupyter_client.manager import AsyncKernelManager
from nbgrader.preprocessors import Execute
from traitlets import Unicode


class WarmKernelManager(AsyncKernelManager):
    """AsyncKernelManager whose kernels are forked from a warm kernel server."""

    server = Unicode("", help="Unix socket of the kernel server; empty: ordinary kernels").tag(
        config=True)

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        command = super().format_kernel_cmd(extra_arguments)
        if not self.server:
            return command
        return [sys.executable, "-m", "autograder.kernel_server", "launch", self.server, "--",
                *command]


class WarmExecute(Execute):
    """nbgrader's Execute, with kernels from the kernel server at `kernel_server`."""

    kernel_server = Unicode("", help="Unix socket of the kernel server; empty: ordinary kernels"
                            ).tag(config=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.kernel_server:
            self.kernel_manager_class = WarmKernelManager

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        if isinstance(km, WarmKernelManager):
            km.server = self.kernel_server
        return km
