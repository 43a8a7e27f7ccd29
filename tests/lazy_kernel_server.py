"""A kernel server that starts when its first kernel is asked for (tests/conftest.py).

    python -I -S tests/lazy_kernel_server.py SOCKET -- COMMAND...

Listens on SOCKET at once and costs nothing more until a launcher connects
(autograder/engine/kernel_server.py's `launch`); then it runs COMMAND, the real server (`serve`
on a socket of its own, which it prints "listening" for), and relays every connection to it as it
is, the descriptors a launcher passes included: the server cannot tell. A connection that closes
on one side is closed on the other (the server then kills that launcher's kernel, as it does for
a launcher that died). A test file that grades nothing never starts the server: its preloading
(torch among it) costs about 5 CPU-seconds.

Ends, stopping the server (and with it every kernel it forked), on SIGTERM or when its standard
input closes (the test process that started it is gone). Standard library only.
"""

from __future__ import annotations

import array
import os
import selectors
import signal
import socket
import subprocess
import sys

_MAX_FDS = 16  # as many as a launcher passes (kernel_server._MAX_FDS)
_START_TIMEOUT = 60.0


def _receive(conn: socket.socket) -> tuple[bytes, list[int]]:
    """What `conn` has, with the descriptors that came with it."""
    fds = array.array("i")
    data, ancillary, _, _ = conn.recvmsg(65536, socket.CMSG_SPACE(_MAX_FDS * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
    return data, list(fds)


def _send(conn: socket.socket, data: bytes, fds: list[int]) -> None:
    if fds:
        sent = conn.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        data = data[sent:]
    conn.sendall(data)


class Relay:
    def __init__(self, path: str, command: list[str]):
        self.command = command
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(128)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.selector.register(sys.stdin, selectors.EVENT_READ)
        self.server: subprocess.Popen | None = None
        self.address: str | None = None
        self.peer: dict[socket.socket, socket.socket] = {}

    def start_server(self) -> bool:
        """Run the real server and wait until it listens; False when it cannot."""
        if self.server is None:
            self.server = subprocess.Popen(self.command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                           text=True)
            with selectors.DefaultSelector() as waiting:
                waiting.register(self.server.stdout, selectors.EVENT_READ)
                if waiting.select(_START_TIMEOUT) and self.server.stdout.readline().strip() == "listening":
                    self.address = self.command[-1]
        return self.address is not None

    def accept(self) -> None:
        client, _ = self.listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if not self.start_server():
                raise OSError("the kernel server did not start")
            upstream.connect(self.address)
        except OSError:  # the launcher sees the connection close and starts a cold kernel
            client.close()
            upstream.close()
            return
        self.peer[client], self.peer[upstream] = upstream, client
        self.selector.register(client, selectors.EVENT_READ)
        self.selector.register(upstream, selectors.EVENT_READ)

    def forward(self, conn: socket.socket) -> None:
        other = self.peer[conn]
        try:
            data, fds = _receive(conn)
        except OSError:
            data, fds = b"", []
        try:
            if data:
                _send(other, data, fds)
        except OSError:
            data = b""
        finally:
            for fd in fds:
                os.close(fd)
        if not data:  # one side went away: so does the other
            for side in (conn, other):
                self.selector.unregister(side)
                self.peer.pop(side, None)
                side.close()

    def run(self) -> None:
        while True:
            for key, _ in self.selector.select():
                if key.fileobj is sys.stdin:
                    if not os.read(sys.stdin.fileno(), 4096):
                        return
                elif key.fileobj is self.listener:
                    self.accept()
                elif key.fileobj in self.peer:
                    self.forward(key.fileobj)

    def stop(self) -> None:
        if self.server is not None:
            self.server.terminate()
            try:
                self.server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    relay = Relay(argv[0], argv[2:])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("listening", flush=True)
    try:
        relay.run()
    except SystemExit:
        pass
    finally:
        relay.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
