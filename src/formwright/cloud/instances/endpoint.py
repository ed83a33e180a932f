"""The local cloud as its booted instances reach it: a second listener on the bridge's host address.

The local cloud listens on 127.0.0.1, which inside an instance's network namespace is the instance itself.
Its helpers (cfn-init's DescribeStackResource, cfn-signal's SignalResource or its PUT to a WaitConditionHandle
URL) need the local cloud, so the same WSGI application (same backends, same state lock) also answers on
`HOST_ADDRESS` (the bridge `fwinst0`), at the local cloud's own port. Only the bridge carries that address:
the host's other networks never see this listener, and the instances see nothing else of the host.
"""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import urlsplit

from formwright.cloud.instances import boot

_server: dict[str, Any] = {}
_lock = threading.Lock()


def local_endpoint() -> str:
    """The local cloud's own endpoint (http://127.0.0.1:PORT), as its server was started."""
    from formwright.cloud.lambda_runtime import invoke

    return invoke.endpoint()


def instance_endpoint() -> str:
    """The local cloud's endpoint as an instance reaches it: the bridge's host address, the same port."""
    return f"http://{boot.HOST_ADDRESS}:{urlsplit(local_endpoint()).port}"


def ensure_listening() -> str:
    """Listen on the bridge address (made first when missing), once per local cloud; the instance endpoint."""
    with _lock:
        if "server" not in _server:
            from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
            from moto.server import MotoRequestHandler
            from werkzeug.serving import make_server

            boot.ensure_bridge()
            port = urlsplit(local_endpoint()).port or 80
            try:
                server = make_server(boot.HOST_ADDRESS, port, DomainDispatcherApplication(create_backend_app),
                                     threaded=True, request_handler=MotoRequestHandler)
            except OSError as err:
                raise boot.BootRefused(f"the local cloud cannot listen on the instance network at "
                                       f"{boot.HOST_ADDRESS}:{port} ({err}): its instances could not reach "
                                       "it") from None
            threading.Thread(target=server.serve_forever, name="formwright-instance-endpoint",
                             daemon=True).start()
            _server["server"] = server
    return instance_endpoint()
