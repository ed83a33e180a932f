"""Values a plan shows and a deploy records: parameter and tag changes with secrets masked, outputs
masked for records on disk, and the check that a described stack holds what was just applied."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from formwright.engine.results import MASK, ValueChange

if TYPE_CHECKING:
    from formwright.engine.cfn import StackInfo
    from formwright.engine.prepared import Prepared


def unconfirmed(tags: dict[str, str], info: StackInfo, prep: Prepared) -> str | None:
    """What the stack's description contradicts of the parameters and tags just applied, or None."""
    for key, value in sorted(prep.effective_parameters().items()):
        got = info.parameters.get(key)
        if key not in prep.secrets and got != "****" and str(got).lower() != value.lower():
            return f"parameter {key} is {got!r}, not {value!r}"
    for key, value in sorted(tags.items()):
        if info.tags.get(key) != value:
            return f"tag {key} is {info.tags.get(key)!r}, not {value!r}"
    return None


SECRET_MASK = "****"


def masked_outputs(outputs: dict[str, str], secret_values: list[str]) -> dict[str, str]:
    """Outputs with every value that holds a NoEcho parameter's value masked, for records on disk."""
    return {key: SECRET_MASK if any(secret in value for secret in secret_values) else value
            for key, value in outputs.items()}


def value_changes(old: dict[str, str], new: dict[str, str], secrets: set[str]) -> list[ValueChange]:
    """Added, changed and removed keys; secret values masked."""
    changes = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key), new.get(key)
        if before == after and key not in secrets:
            continue
        if key in secrets:
            if before is not None and after is not None:
                continue  # NoEcho: the cloud shows ****, so a change cannot be seen; never print the value
            before = MASK if before is not None else None
            after = MASK if after is not None else None
        changes.append(ValueChange(key, before, after))
    return changes


def as_list_text(value: str) -> str:
    """A list parameter's value as CloudFormation reports it, comma-separated. moto's server reports it
    as a Python list (`['a', 'b']`); real CloudFormation as given (`a,b`): both diff as `a,b`."""
    if value.startswith("[") and value.endswith("]"):
        try:
            items = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
        if isinstance(items, list):
            return ",".join(str(item) for item in items)
    return value
