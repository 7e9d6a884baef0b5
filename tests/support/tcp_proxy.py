"""A TCP proxy that holds every byte a fixed time in each direction (a distant annotator), and can stall.

`DelayProxy(upstream_port, delay=0.075)` listens on a port of its own and forwards each connection to the app
server on `upstream_port`, every chunk delivered `delay` seconds after it was read, in order (a 150 ms round trip
at 75 ms each way). `pause()` holds everything in both directions (a network that stalls; the connections stay
open and the bytes wait) until `resume()`. Threads, no event loop: it runs beside Playwright's sync API.
"""

from __future__ import annotations

import collections
import socket
import threading
import time


class _Pipe:
    """One direction of one connection: read as it comes, write each chunk `delay` later, in order."""

    def __init__(self, proxy: DelayProxy, source: socket.socket, target: socket.socket) -> None:
        self.proxy, self.source, self.target = proxy, source, target
        self.chunks: collections.deque[tuple[float, bytes]] = collections.deque()
        self.ready = threading.Condition()
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._write, daemon=True).start()

    def _read(self) -> None:
        try:
            while data := self.source.recv(65536):
                with self.ready:
                    self.chunks.append((time.monotonic() + self.proxy.delay, data))
                    self.ready.notify()
        except OSError:
            pass
        with self.ready:
            self.closed = True
            self.ready.notify()

    def _write(self) -> None:
        try:
            while True:
                with self.ready:
                    while not self.chunks and not self.closed:
                        self.ready.wait()
                    if not self.chunks:
                        break
                    due, data = self.chunks.popleft()
                while (wait := due - time.monotonic()) > 0:
                    time.sleep(wait)
                self.proxy.running.wait()  # paused: the bytes wait here
                self.target.sendall(data)
        except OSError:
            pass
        for end in (self.target, self.source):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class DelayProxy:
    """See the module's docstring. Use as a context manager, or `close()`."""

    def __init__(self, upstream_port: int, *, delay: float = 0.075, host: str = "127.0.0.1") -> None:
        self.upstream = (host, upstream_port)
        self.delay = delay
        self.running = threading.Event()
        self.running.set()
        self.listener = socket.create_server((host, 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://{host}:{self.port}"
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            for end in (client, server):
                end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sockets += [client, server]
            _Pipe(self, client, server)
            _Pipe(self, server, client)

    def pause(self) -> None:
        self.running.clear()

    def resume(self) -> None:
        self.running.set()

    def close(self) -> None:
        self.running.set()
        self.listener.close()
        for end in self._sockets:
            try:
                end.close()
            except OSError:
                pass

    def __enter__(self) -> DelayProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
