"""botocore sessions and clients for the chosen target: the local cloud or AWS.

`--target local|aws` (or `FORMWRIGHT_TARGET`) picks the target; local is the default. AWS is
reached through ordinary boto3 configuration (profiles, AWS_REGION, AWS_ENDPOINT_URL); the local
cloud gets dummy credentials and its recorded endpoint. Retries are botocore's standard mode.

A Target may name a profile and a role to assume (with external id, session name and MFA); botocore
assumes it again before its credentials expire. On the local cloud the assumed role's account is where
the calls land, as moto keeps accounts apart by it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import botocore.session
from botocore.config import Config
from botocore.credentials import (
    AssumeRoleCredentialFetcher,
    CredentialProvider,
    CredentialResolver,
    Credentials,
    RefreshableCredentials,
)
from botocore.exceptions import BotoCoreError, ClientError, ProfileNotFound

from formwright.cloud import botocore_data, local, timestamps
from formwright.cloud.errors import remember_http_status, set_target_kind
from formwright.cloud.regions import is_region, nearest_regions
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
    profile: str | None = None
    role_arn: str | None = None
    external_id: str | None = None
    session_name: str | None = None
    mfa_serial: str | None = None
    session_duration: int | None = None  # seconds of the role session (STS's default: 3600)
    pinned_account: str | None = None  # the account the project names: checked before any write
    _core: Any = field(default=None, repr=False)
    _session: Any = field(default=None, repr=False)
    _clients: dict = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _account: str | None = field(default=None, repr=False)
    _account_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def core(self) -> botocore.session.Session:
        """The botocore session for this target (dummy credentials on the local cloud). botocore, not
        boto3: importing boto3 costs ~0.1 s more (s3transfer) for nothing the engine uses."""
        if self._core is None:
            base = self._base_core()
            self._core = self._assume(base) if self.role_arn else base
        return self._core

    def session(self) -> Any:
        """A boto3 session over `core`, for callers that want boto3's API (boto3 imported then)."""
        if self._session is None:
            import boto3

            self._session = boto3.session.Session(botocore_session=self.core(), region_name=self.region)
        return self._session

    def _base_core(self) -> botocore.session.Session:
        core = botocore.session.Session(profile=self.profile)
        botocore_data.install(core)
        try:
            core.get_scoped_config()  # a missing profile (here or in AWS_PROFILE) is refused now, as by boto3
        except ProfileNotFound as err:
            raise missing_profile(self.profile, err) from None
        if self.kind == "local":
            core.set_credentials("formwright-local", "formwright-local")
        core.set_config_variable("region", self.region)
        timestamps.install(core)
        return core

    def _assume(self, base: botocore.session.Session) -> botocore.session.Session:
        """A session whose credentials are the role's, assumed again before they expire."""
        source = base.get_credentials()
        if source is None:
            raise InputError(f"no credentials to assume role {self.role_arn} with",
                             hint="configure a profile or AWS_ACCESS_KEY_ID for the caller")

        def make_sts(**credentials: Any) -> Any:
            return base.create_client("sts", endpoint_url=self.endpoint, region_name=self.region,
                                      **credentials)

        creds = assume_role(make_sts, source, self.role_arn or "", external_id=self.external_id,
                            session_name=self.session_name, mfa_serial=self.mfa_serial,
                            duration=self.session_duration)
        core = botocore.session.Session()
        botocore_data.install(core)
        core.register_component("credential_provider", CredentialResolver([_Fixed(creds)]))
        core.set_config_variable("region", self.region)
        timestamps.install(core)
        return core

    def where(self) -> str:
        """`account/region` of this target, for plans and messages."""
        return f"{self.account_id()}/{self.region}"

    def check_account(self, what: str) -> None:
        """Refuse (exit 2) when the credentials' account is not the pinned one; both are named."""
        if self.pinned_account and self.account_id() != self.pinned_account:
            how = (f"role {self.role_arn} is" if self.role_arn
                   else f"profile {self.profile} is" if self.profile else "the default credentials are")
            raise InputError(f"{what}: {how} in account {self.account_id()}, but the project pins account "
                             f"{self.pinned_account}", hint="use the profile or role_arn of that account")

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
                existing = self.core().create_client(service, region_name=self.region,
                                                     endpoint_url=self.endpoint, config=config)
                remember_http_status(existing)
                self._clients[(service, max_attempts)] = existing
            return existing

    def account_id(self) -> str:
        """The account id of the caller (moto's fixed account on the local cloud), asked once."""
        with self._account_lock:
            if self._account is None:
                self._account = str(self.client("sts").get_caller_identity()["Account"])
            return self._account

    def prefetch_account(self) -> None:
        """Ask STS for the account id in the background (a round trip, and on AWS a TLS handshake)
        while the caller goes on to load and prepare; `account_id` waits for it, and raises what it
        met itself."""
        def ask() -> None:
            with contextlib.suppress(Exception):  # asked again, and reported, by whoever needs it
                self.account_id()

        threading.Thread(target=ask, name="account-id", daemon=True).start()


class LazyClient:
    """A boto3 client made on first use by `make()` (thread-safe): making one costs ~0.05 s (its
    service model loaded and checked), which a command that may never call it should not pay up front."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._client: Any = None
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        client = self._client
        if client is None:
            with self._lock:
                if self._client is None:
                    self._client = self._make()
                client = self._client
        return getattr(client, name)


def assume_role(make_sts: Callable[..., Any], source: Credentials, role_arn: str, *,
                external_id: str | None = None, session_name: str | None = None,
                mfa_serial: str | None = None, duration: int | None = None) -> RefreshableCredentials:
    """Credentials of `role_arn` that botocore assumes again before they expire (a deploy may outlast the
    role session, one hour by default); a role that cannot be assumed is bad input (exit 2), named with why.

    `make_sts(**credentials)` makes the STS client for the `source` credentials, as botocore's
    AssumeRoleCredentialFetcher asks; an MFA code is asked at each assume, as the AWS CLI does.
    """
    extra: dict[str, Any] = {"RoleSessionName": session_name or "formwright"}
    if external_id:
        extra["ExternalId"] = external_id
    if mfa_serial:
        extra["SerialNumber"] = mfa_serial
    if duration:
        extra["DurationSeconds"] = duration
    fetcher = AssumeRoleCredentialFetcher(
        lambda _service, **credentials: make_sts(**credentials), source, role_arn, extra_args=extra,
        mfa_prompter=lambda _prompt: _mfa_code(mfa_serial or "", role_arn))

    def fetch() -> dict[str, Any]:
        try:
            return fetcher.fetch_credentials()
        except ClientError as err:
            error = err.response.get("Error", {})
            reason = f"{error.get('Code', 'error')}: {error.get('Message', '')}".strip()
        except BotoCoreError as err:
            reason = str(err).replace("\n", " ")
        raise InputError(f"cannot assume role {role_arn}: {reason}",
                         hint="check the role's trust policy, external_id and your credentials' permissions; "
                              "`role_arn` is the role formwright assumes (sceptre's sceptre_role), "
                              "CloudFormation's own service role is `service_role`")

    # the first assume now, so that a role that cannot be assumed is refused before any write
    return RefreshableCredentials.create_from_metadata(fetch(), fetch, "assume-role")


class _Fixed(CredentialProvider):
    """A credential provider that gives the credentials it holds (an assumed role's, refreshable)."""

    METHOD = "assume-role"

    def __init__(self, credentials: Credentials) -> None:
        super().__init__()
        self.credentials = credentials

    def load(self) -> Credentials:
        """The held credentials."""
        return self.credentials


def _mfa_code(serial: str, role_arn: str) -> str:
    if not sys.stdin.isatty():
        raise InputError(f"role {role_arn} needs an MFA code from {serial}, and nobody can type it here",
                         hint="run at a terminal, or use credentials that need no MFA")
    sys.stderr.write(f"MFA code for {serial}: ")
    sys.stderr.flush()
    return sys.stdin.readline().strip()


def default_region(profile: str | None = None) -> str:
    """The region when the project names none: AWS_REGION, AWS_DEFAULT_REGION, the profile's, us-east-1."""
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        return region
    try:
        return botocore.session.Session(profile=profile).get_config_variable("region") or DEFAULT_REGION
    except ProfileNotFound as err:  # never a default region for a profile that is not there
        raise missing_profile(profile, err) from None


def missing_profile(profile: str | None, err: ProfileNotFound) -> InputError:
    """The error for a profile that is not configured (named by the project, --profile or AWS_PROFILE)."""
    name = profile or err.kwargs.get("profile")  # AWS_PROFILE names it when the project does not
    return InputError(f"AWS profile '{name}' not found",
                      hint=f"add it to ~/.aws/config (aws configure --profile {name}), "
                           "or fix `profile:`, --profile or AWS_PROFILE")


def region_note(chosen: str, flag: str | None, whose: str = "the project's region") -> str | None:
    """What to say when a region the user configured (`chosen`, not from --region) wins over AWS_REGION or
    AWS_DEFAULT_REGION: once per command, so that a silently ignored variable is not a surprise."""
    name = "AWS_REGION" if os.environ.get("AWS_REGION") else "AWS_DEFAULT_REGION"
    env = os.environ.get(name)
    if flag or not env or env == chosen:
        return None
    return f"{whose} {chosen} is used, not {name} {env}"


def target_kind(kind: str | None) -> str:
    """The kind from the flag, then FORMWRIGHT_TARGET, then local."""
    kind = (kind or os.environ.get("FORMWRIGHT_TARGET") or "local").lower()
    if kind not in TARGETS:
        raise InputError(f"unknown target '{kind}'", hint="use --target local or --target aws")
    set_target_kind(kind)
    return kind


def resolve_target(kind: str | None = None, region: str | None = None, **credentials: Any) -> Target:
    """The target from the flag, then FORMWRIGHT_TARGET, then local; errors name the fix.

    `credentials` are Target fields: profile, role_arn, external_id, session_name, mfa_serial,
    session_duration, pinned_account.
    """
    kind = target_kind(kind)
    region = region or default_region(credentials.get("profile"))
    if not is_region(region):
        raise InputError(f"unknown region '{region}' (from --region, the project's `region:`, AWS_REGION or "
                         "the profile)", hint=nearest_regions(region))
    if kind == "local":
        return Target("local", region, local.require().endpoint, **credentials)
    return Target("aws", region, **credentials)  # boto3 honours AWS_ENDPOINT_URL and per-service endpoints


class Targets:
    """One Target per distinct place and credentials among a project's stacks, made once each."""

    def __init__(self, kind: str | None) -> None:
        self.kind = target_kind(kind)
        self._made: dict[tuple, Target] = {}
        self._regions: dict[str | None, str] = {}  # profile -> default region (a session costs ~70 ms)
        self._lock = threading.Lock()

    def get(self, spec: Any) -> Target:
        """The Target of a spec (a model.targets.TargetSpec: region, account, credentials)."""
        region = spec.region or self._regions.get(spec.profile)
        if region is None:
            region = self._regions.setdefault(spec.profile, default_region(spec.profile))
        credentials = {"profile": spec.profile, "role_arn": spec.role_arn, "external_id": spec.external_id,
                       "session_name": spec.session_name, "mfa_serial": spec.mfa_serial,
                       "session_duration": int(spec.session_duration) if spec.session_duration else None,
                       "pinned_account": spec.account}
        key = (region, *credentials.values())
        with self._lock:
            if key not in self._made:
                self._made[key] = resolve_target(self.kind, region, **credentials)
            return self._made[key]

    def all(self) -> list[Target]:
        """Every Target made so far."""
        return list(self._made.values())
