"""Local CloudFormation macros: the Transform section and Fn::Transform, run with CloudFormation's
order, scope and errors; user macros (Python handlers, executables, entry points, template macros)
and the built-ins AWS::Include, AWS::LanguageExtensions and AWS::Serverless-2016-10-31.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from formwright.macros.engine import Expansion, has_macros, run
from formwright.macros.errors import MacroError, TransformationDataLimitExceeded
from formwright.macros.registry import ENTRY_POINT_GROUP, MacroRegistry

__all__ = [
    "ENTRY_POINT_GROUP",
    "Expansion",
    "MacroError",
    "MacroRegistry",
    "TransformationDataLimitExceeded",
    "expand",
    "needs_auto_expand",
    "run",
]


def expand(
    template: dict,
    *,
    registry: MacroRegistry,
    parameter_values: dict[str, str] | None = None,
    region: str = "us-east-1",
    account_id: str = "123456789012",
    s3_client: Any = None,
    file: str | None = None,
    base_dir: Path | None = None,
) -> dict:
    """The processed template (CloudFormation's Processed stage); the input itself when it has no macros."""
    return run(template, registry=registry, parameter_values=parameter_values, region=region,
               account_id=account_id, s3_client=s3_client, file=file, base_dir=base_dir).template


def needs_auto_expand(template: dict) -> bool:
    """True when deploying the Original template needs CAPABILITY_AUTO_EXPAND (it uses macros)."""
    return has_macros(template)
