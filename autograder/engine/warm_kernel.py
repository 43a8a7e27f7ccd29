"""The grading kernels' manager: forked warm from a kernel server, limited, sandboxed.

WarmKernelManager is jupyter_client's kernel manager with one change: the kernel command it
would run is handed to the launcher of autograder/engine/kernel_server.py, which has the kernel forked
from the server (`server`, a socket) or, without one, started cold; either way the kernel
process gets its cgroup, its sandbox (autograder/engine/sandbox.py) and its limits before it runs a
line. Connection files, ports, signals and shutdown stay jupyter_client's. With nothing to do
(no server, no limit, no sandbox) the command is left as it is.
autograder/engine/execute.py's GradingExecute configures it.
"""

from __future__ import annotations

import sys

import zmq
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import Bool, DottedObjectName, Integer, List, Type, Unicode

# The largest message the grader takes from a kernel, on any channel: a larger one is dropped by ZeroMQ
# before anything reads it (its peer disconnected) instead of being deserialized whole in the grader's
# process. The trusted run's replies are bounded at 96 MiB of text (autograder/probes/session.py), a
# notebook's outputs at 8 MiB (execute.GradingExecute); a message past this is neither.
MAX_MESSAGE_BYTES = 128 << 20


class BoundedKernelClient(AsyncKernelClient):
    """jupyter_client's client, its sockets refusing messages larger than MAX_MESSAGE_BYTES."""

    def _context_default(self) -> zmq.asyncio.Context:
        self._created_context = True  # the client terminates it, as it does its own
        context = zmq.asyncio.Context()
        context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        return context


class WarmKernelManager(AsyncKernelManager):
    """AsyncKernelManager whose kernels are forked from a warm kernel server, limited, sandboxed."""

    server = Unicode("", help="Unix socket of the kernel server; empty: ordinary kernels").tag(
        config=True)
    memory_limit = Integer(0, help="bytes: each process's data segment (RLIMIT_DATA) and the "
                           "kernel's processes together (its cgroup); 0: none").tag(config=True)
    process_limit = Integer(0, help="tasks of the kernel, its threads included (its cgroup); "
                            "0: none").tag(config=True)
    cpu_limit = Integer(0, help="the kernel's CPU seconds (RLIMIT_CPU); 0: none").tag(config=True)
    write_limit = Integer(0, help="bytes the kernel may write into its job folder, and the "
                          "largest file it may write (RLIMIT_FSIZE); 0: the sandbox's default").tag(
        config=True)
    tmp_size = Integer(0, help="bytes of the kernel's private /tmp and /dev/shm, each; 0: the "
                       "sandbox's default").tag(config=True)
    hide = List(Unicode(), help="paths that look empty to the kernel (autograder/engine/sandbox.py)").tag(
        config=True)
    share = List(Unicode(), help="the kernel's socket folders: in the sandbox a capped folder of its "
                 "own at each path, whose sockets the launcher links into the grader's").tag(config=True)
    sandbox = Bool(False, help="run the kernel in the sandbox (autograder/engine/sandbox.py)").tag(config=True)
    # What client() makes, both ways jupyter_client names it (a later client_class would reset the factory).
    client_class = DottedObjectName(f"{__name__}.BoundedKernelClient")
    client_factory = Type(BoundedKernelClient, klass=AsyncKernelClient)

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        from autograder.engine.kernel_server import Options

        command = super().format_kernel_cmd(extra_arguments)
        options = Options(memory=self.memory_limit, processes=self.process_limit, cpu=self.cpu_limit,
                          writes=self.write_limit, tmp=self.tmp_size, hide=list(self.hide),
                          share=list(self.share), sandbox=int(self.sandbox))
        if not self.server and options == Options():
            return command
        # -I: the launcher runs in the kernel's job folder; that folder is never on its path.
        return [sys.executable, "-I", "-m", "autograder.engine.kernel_server", "launch", self.server or "-",
                *options.arguments(), "--", *command]
