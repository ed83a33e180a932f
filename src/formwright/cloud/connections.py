"""The local cloud's HTTP connections: kept open between requests (HTTP/1.1 keep-alive), and one plain log
line per request.

werkzeug's development server, which moto's server runs, closes every connection after one answer ("they
aren't handled well by Python's http.server because it doesn't know how to drain the stream before the
next request line"), so every SDK call paid a TCP connect, a close, a name lookup and a new server thread
on both sides: about a sixth of a CLI's CPU in a no-op deploy, more in the local cloud. Here a request's
sized body is read whole before the application runs, so the stream is at the next request line when the
answer is sent, and the connection stays open: werkzeug's drain after the answer (which would read into
the next request) is skipped for it. A request with a chunked body, or a client asking to close, is
answered as werkzeug answers it and the connection closed.

The request log keeps werkzeug's line (`address - - [date] "request line" status size`) without the
logging module and the colour wrapper on stderr, which cost the local cloud about a tenth of its CPU.
"""

from __future__ import annotations

import io
import selectors
import socket
import sys
import threading
from typing import Any

from moto.moto_server.werkzeug_app import MotoRequestHandler

IDLE_TIMEOUT = 300.0  # seconds an idle kept-open connection holds its server thread

_state = threading.local()  # per server thread: whether werkzeug's drain is skipped for this request


class _NothingToDrain:
    """A selector that reports nothing ready: werkzeug's drain loop ends at once."""

    def register(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to watch."""

    def select(self, timeout: float | None = None) -> list[Any]:
        """Nothing ready."""
        return []

    def close(self) -> None:
        """Nothing to close."""


class _Selectors:
    """werkzeug.serving's `selectors`, with DefaultSelector skipping the drain of a kept-open
    connection (its only use in werkzeug.serving is that drain)."""

    EVENT_READ = selectors.EVENT_READ

    @staticmethod
    def DefaultSelector() -> Any:  # noqa: N802 - the name werkzeug calls
        """The platform's selector, or none for a request whose connection stays open."""
        return _NothingToDrain() if getattr(_state, "keep_open", False) else selectors.DefaultSelector()


class KeepAliveHandler(MotoRequestHandler):
    """moto's request handler, keeping a connection open when its next request can be read safely."""

    timeout = IDLE_TIMEOUT

    def setup(self) -> None:
        """The connection's socket set up, sending each write at once: werkzeug writes an answer's headers
        and body separately, and on a kept-open connection Nagle's algorithm held the body back until the
        client's delayed ACK (~40 ms a request)."""
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def make_environ(self) -> dict[str, Any]:
        """moto's environ, with a sized body already read (the stream is then at the next request)."""
        environ = super().make_environ()
        length = self.headers.get("Content-Length", "")
        chunked = "chunked" in self.headers.get("Transfer-Encoding", "").lower()
        self.keep_open = not self.close_connection and not chunked and self.request_version == "HTTP/1.1"
        if self.keep_open and length:
            if not length.isdigit():
                self.keep_open = False
            else:
                environ["wsgi.input"] = io.BytesIO(self.rfile.read(int(length)))
        _state.keep_open = self.keep_open
        return environ

    def run_wsgi(self) -> None:
        """werkzeug's request handling; the connection closed after it unless kept open."""
        self.keep_open = False
        try:
            super().run_wsgi()
        finally:
            _state.keep_open = False
        if not self.keep_open:
            self.close_connection = True

    def send_header(self, keyword: str, value: str) -> None:
        """werkzeug's headers, without its `Connection: close` on a connection kept open."""
        if getattr(self, "keep_open", False) and keyword.lower() == "connection" and value.lower() == "close":
            return
        super().send_header(keyword, value)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """werkzeug's request line, written plainly."""
        if sys.__stderr__ is not None:
            sys.__stderr__.write(f'{self.address_string()} - - [{self.log_date_time_string()}] '
                                 f'"{self.requestline}" {getattr(code, "value", code)} {size}\n')


def install() -> None:
    """Serve moto's application with KeepAliveHandler (moto.server.main passes this name to werkzeug)."""
    import moto.server
    import werkzeug.serving

    werkzeug.serving.selectors = _Selectors  # type: ignore[assignment]  # werkzeug has no hook for its drain
    moto.server.MotoRequestHandler = KeepAliveHandler  # type: ignore[misc]  # moto has no hook for this
