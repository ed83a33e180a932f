"""Where a stack goes: region, account and credentials, set on the project, a group or a stack.

Each key flows down project → group → stack (the nearer one wins), as sceptre's stack-group config
and Paco's account/region contexts do. `--region` and `--profile` replace the project's own values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from typing import Any

from formwright.cloud.regions import is_region, nearest_regions
from formwright.errors import ProjectError
from formwright.template.document import Mapping

TARGET_KEYS = {
    "region": "the AWS region (default: --region, AWS_REGION, the profile's region)",
    "account": "the AWS account id the credentials must belong to (checked before any write)",
    "profile": "the AWS profile of the credentials (~/.aws/config)",
    "role_arn": "an IAM role to assume for this part of the project",
    "external_id": "the external id the role's trust policy asks for",
    "session_name": "the role session name (default formwright)",
    "mfa_serial": "the MFA device whose code the role asks for (prompted at a terminal)",
    "session_duration": "seconds the role session lasts, 900 to 43200 (default 3600; renewed before it ends)",
}
ACCOUNT = re.compile(r"\d{12}")
ROLE_ARN = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+")


@dataclass(frozen=True)
class TargetSpec:
    """The target keys as written (None: not set, the next level up or the default applies)."""

    region: str | None = None
    account: str | None = None
    profile: str | None = None
    role_arn: str | None = None
    external_id: str | None = None
    session_name: str | None = None
    mfa_serial: str | None = None
    session_duration: str | None = None  # seconds, as sceptre's iam_role_session_duration

    def over(self, parent: TargetSpec) -> TargetSpec:
        """These keys over `parent`'s: what a group or stack inherits and overrides."""
        values = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
        return replace(parent, **values)

    def where(self) -> str:
        """`account/region` for messages (unknown parts shown as `?`)."""
        return f"{self.account or '?'}/{self.region or '?'}"


def read_spec(body: Mapping, render: Any, file: str) -> TargetSpec:
    """The target keys of one project, group or stack body, rendered and checked."""
    values: dict[str, str] = {}
    for key in TARGET_KEYS:
        if key not in body or body[key] is None:
            continue
        line = body.line_of(key)
        raw = body[key]
        if key == "account" and isinstance(raw, int):
            raise ProjectError(f"`account` must be quoted: YAML read {raw} as a number", file=file, line=line,
                               hint=f'account: "{raw:012d}"')
        value = render(raw, line)
        if key == "session_duration" and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not value:
            raise ProjectError(f"`{key}` must be a string", file=file, line=line)
        _check(key, value, file, line)
        values[key] = value
    return TargetSpec(**values)


def _check(key: str, value: str, file: str, line: int | None) -> None:
    if key == "region" and not is_region(value):
        raise ProjectError(f"unknown region '{value}'", file=file, line=line, hint=nearest_regions(value))
    if key == "account" and not ACCOUNT.fullmatch(value):
        raise ProjectError(f"'{value}' is not an AWS account id", file=file, line=line,
                           hint='twelve digits, quoted: account: "123456789012"')
    if key == "role_arn" and not ROLE_ARN.fullmatch(value):
        raise ProjectError(f"'{value}' is not an IAM role ARN", file=file, line=line,
                           hint="role_arn: arn:aws:iam::123456789012:role/deployer")
    if key == "session_duration" and not (value.isdigit() and 900 <= int(value) <= 43200):
        # STS AssumeRole's DurationSeconds: 900 to 43200 (and at most the role's maximum session)
        raise ProjectError(f"`session_duration` must be 900 to 43200 seconds, not '{value}'", file=file,
                           line=line, hint="session_duration: 3600")
    if key == "external_id" and not 2 <= len(value) <= 1224:
        raise ProjectError("`external_id` must be 2 to 1224 characters", file=file, line=line)
