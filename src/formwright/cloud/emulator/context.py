"""What the HTTP layer knows of the request being answered and moto's backend signatures do not
(Capabilities, whether Tags were given, the ClientRequestToken): set per request by
`formwright.cloud.moto_server`, read by the emulator."""

from __future__ import annotations

import threading

request = threading.local()
