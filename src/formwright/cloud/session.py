"""boto3 sessions and clients for the chosen target: the local cloud or AWS.

`--target local|aws` (or `FORMWRIGHT_TARGET`) picks the target; local is the default. AWS is
reached through ordinary boto3 configuration (profiles, AWS_REGION, AWS_ENDPOINT_URL); the local
cloud gets dummy credentials and its recorded endpoint. Retries are botocore's standard mode.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.config import Config

from formwright.cloud import local
from formwright.cloud.errors import remember_http_status, set_target_kind
from formwright.errors import InputError

TARGETS = ("local", "aws")
DEFAULT_REGION = "us-east-1"


@dataclass
class Target:
    """Where stacks go: its kind, region and (for local) endpoint; makes clients on demand."""

    kind: str
    region: str
    endpoint: str | None = None
    max_pool: int = 32
    _session: Any = field(default=None, repr=False)
    _clients: dict = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _account: str | None = field(default=None, repr=False)

    def session(self) -> boto3.session.Session:
        """The boto3 session for this target (dummy credentials on the local cloud)."""
        if self._session is None:
            if self.kind == "local":
                self._session = boto3.session.Session(
                    aws_access_key_id="formwright-local",
                    aws_secret_access_key="formwright-local",
                    region_name=self.region,
                )
            else:
                self._session = boto3.session.Session(region_name=self.region)
        return self._session

    def client(self, service: str, *, max_attempts: int = 8) -> Any:
        """A shared, thread-safe boto3 client for `service` (clients are thread-safe; sessions are not).

        `max_attempts` bounds botocore's own retries; the engine's polls use 1 and retry in their wait
        loop, which keeps its cadence and its deadline.
        """
        with self._lock:
            existing = self._clients.get((service, max_attempts))
            if existing is None:
                config = Config(
                    retries={"mode": "standard", "max_attempts": max_attempts},
                    max_pool_connections=self.max_pool,
                    connect_timeout=5,
                    read_timeout=60,
                )
                existing = self.session().client(service, endpoint_url=self.endpoint, config=config)
                remember_http_status(existing)
                self._clients[(service, max_attempts)] = existing
            return existing

    def account_id(self) -> str:
        """The account id of the caller (moto's fixed account on the local cloud), asked once."""
        if self._account is None:
            self._account = str(self.client("sts").get_caller_identity()["Account"])
        return self._account


def resolve_target(kind: str | None = None, region: str | None = None) -> Target:
    """The target from the flag, then FORMWRIGHT_TARGET, then local; errors name the fix."""
    kind = (kind or os.environ.get("FORMWRIGHT_TARGET") or "local").lower()
    if kind not in TARGETS:
        raise InputError(f"unknown target '{kind}'", hint="use --target local or --target aws")
    set_target_kind(kind)
    if kind == "local":
        cloud = local.require()
        return Target("local", region or DEFAULT_REGION, cloud.endpoint)
    region = region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if not region:
        region = boto3.session.Session().region_name or DEFAULT_REGION
    return Target("aws", region)  # boto3 itself honours AWS_ENDPOINT_URL and per-service endpoints
