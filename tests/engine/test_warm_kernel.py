"""WarmKernelManager: jupyter_client's manager whose kernel command goes through the kernel launcher,
with the kernel's limits and sandbox, only when there is something to do."""

from __future__ import annotations

import sys

from jupyter_client.manager import AsyncKernelManager

from autograder.engine.kernel_server import Options
from autograder.engine.warm_kernel import WarmKernelManager


def test_with_nothing_to_do_the_command_is_jupyters_own():
    command = WarmKernelManager(kernel_name="python3").format_kernel_cmd()
    assert command == AsyncKernelManager(kernel_name="python3").format_kernel_cmd()
    assert "ipykernel_launcher" in " ".join(command)


def test_a_server_or_a_limit_sends_the_command_through_the_launcher_with_every_option():
    manager = WarmKernelManager(kernel_name="python3", server="/run/grader/k.sock", memory_limit=2 << 30,
                                process_limit=64, cpu_limit=600, hide=["/course/grading", "/course/source"],
                                share=["/run/grader/k1"], sandbox=True)
    command = manager.format_kernel_cmd()
    kernel = WarmKernelManager(kernel_name="python3").format_kernel_cmd()
    assert command[:6] == [sys.executable, "-I", "-m", "autograder.engine.kernel_server", "launch",
                           "/run/grader/k.sock"]
    split = command.index("--")
    assert command[split + 1:] == kernel  # the kernel itself is jupyter's command, unchanged
    assert Options.parse(command[6:split]) == Options(
        memory=2 << 30, processes=64, cpu=600, hide=["/course/grading", "/course/source"],
        share=["/run/grader/k1"], sandbox=1)


def test_limits_without_a_server_start_the_kernel_cold_through_the_launcher():
    command = WarmKernelManager(kernel_name="python3", cpu_limit=30).format_kernel_cmd()
    assert command[4:8] == ["launch", "-", "--cpu", "30"]
