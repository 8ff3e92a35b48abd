"""A local HTTP server that answers some requests and holds the others for as long as it runs: a
remote store or corpus whose server accepts connections and then stalls."""

from __future__ import annotations

import contextlib
import socketserver
import threading
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def stalling_server(answer: Callable[[bytes], bytes | None] = lambda request: None) -> Iterator[str]:
    """Inside: "127.0.0.1:<port>" of a server that sends `answer(request head)` (the bytes of a whole
    HTTP answer) and closes the connection, or, where `answer` gives None, keeps it open unanswered."""
    stopped = threading.Event()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            head = b""
            while b"\r\n\r\n" not in head and (chunk := self.request.recv(65536)):
                head += chunk
            reply = answer(head) if head else None
            if reply is None:
                stopped.wait()  # held unanswered: the connection closes as the handler returns
            else:
                self.request.sendall(reply)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        stopped.set()
        server.shutdown()
        server.server_close()
        thread.join()
