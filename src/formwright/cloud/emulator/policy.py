"""Stack policies: which update actions on which resources a stack's policy allows.

Follows "Prevent updates to stack resources" (AWS CloudFormation User Guide): once a stack has a
policy, every update action is denied unless a statement allows it; an explicit Deny wins.
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any


def _listed(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _matches(statement: dict[str, Any], logical: str, kind: str, action: str) -> bool:
    resource = f"LogicalResourceId/{logical}"
    if "Action" in statement and not any(fnmatch.fnmatchcase(action, a)
                                         for a in _listed(statement["Action"])):
        return False
    if "NotAction" in statement and any(fnmatch.fnmatchcase(action, a)
                                        for a in _listed(statement["NotAction"])):
        return False
    if "Resource" in statement and not any(fnmatch.fnmatchcase(resource, r)
                                           for r in _listed(statement["Resource"])):
        return False
    if "NotResource" in statement and any(fnmatch.fnmatchcase(resource, r)
                                          for r in _listed(statement["NotResource"])):
        return False
    for operator, test in (statement.get("Condition") or {}).items():
        types = _listed((test or {}).get("ResourceType", "*"))
        if operator == "StringEquals" and kind not in types:
            return False
        if operator == "StringLike" and not any(fnmatch.fnmatchcase(kind, t) for t in types):
            return False
    return True


def denial(policy: str, logical: str, kind: str, action: str) -> str | None:
    """Why the stack policy refuses `action` (Update:Modify / Update:Replace / Update:Delete), or None."""
    if not policy:
        return None
    try:
        statements = json.loads(policy).get("Statement") or []
    except (ValueError, AttributeError):
        return None
    statements = statements if isinstance(statements, list) else [statements]
    allowed = False
    for number, statement in enumerate(statements, start=1):
        if not isinstance(statement, dict) or not _matches(statement, logical, kind, action):
            continue
        if statement.get("Effect") == "Deny":
            # CloudFormation ends each such reason with ';' (it joins one per statement)
            return (f"Action denied by stack policy: Statement [#{number}] does not allow [{action}] for "
                    f"resource [LogicalResourceId/{logical}];")
        allowed = allowed or statement.get("Effect") == "Allow"
    if allowed:
        return None
    return f"Action not allowed by stack policy: No statement allows [{action}] for resource " \
           f"[LogicalResourceId/{logical}];"
