"""One DescribeStacks listing shared by every object in the steady state."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from formwright.engine.cfn import CloudFormation, StackInfo


class StackInventory:
    """One DescribeStacks listing per `max_age` seconds, shared by every object (steady state only)."""

    def __init__(
        self, cfn: CloudFormation, max_age: float = 1.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.cfn = cfn
        self.max_age = max_age
        self.clock = clock
        self._lock = threading.Lock()
        self._stacks: dict[str, StackInfo] = {}
        self._taken = float("-inf")

    def lookup(self, stack_name: str) -> StackInfo | None:
        """The stack as listed at most `max_age` seconds ago (None when it was not listed)."""
        with self._lock:
            if self.clock() - self._taken >= self.max_age:
                stacks: dict[str, StackInfo] = {}
                token = None
                while True:
                    page = self.cfn.call("describe_stacks", **({"NextToken": token} if token else {}))
                    for data in page.get("Stacks", []):
                        if data.get("StackStatus") != "DELETE_COMPLETE":
                            stacks[data["StackName"]] = StackInfo.from_api(data)
                    token = page.get("NextToken")
                    if not token:
                        break
                self._stacks, self._taken = stacks, self.clock()
            return self._stacks.get(stack_name)
