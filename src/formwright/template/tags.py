"""CloudFormation's short-form YAML tags (`!Ref`, `!GetAtt a.b`, `!Sub` …) and their long forms."""

from __future__ import annotations

from typing import Any

# Short-form tag -> long-form function name. `!GetAtt` and `!Condition` are special-cased.
SHORT_FORM_TAGS: dict[str, str] = {
    "Ref": "Ref",
    "GetAtt": "Fn::GetAtt",
    "Sub": "Fn::Sub",
    "Join": "Fn::Join",
    "If": "Fn::If",
    "Select": "Fn::Select",
    "Split": "Fn::Split",
    "FindInMap": "Fn::FindInMap",
    "Base64": "Fn::Base64",
    "Cidr": "Fn::Cidr",
    "ImportValue": "Fn::ImportValue",
    "GetAZs": "Fn::GetAZs",
    "Equals": "Fn::Equals",
    "And": "Fn::And",
    "Or": "Fn::Or",
    "Not": "Fn::Not",
    "Condition": "Condition",
    "Transform": "Fn::Transform",
    # the functions of a template's Rules ("Rule functions", AWS CloudFormation User Guide)
    "ValueOf": "Fn::ValueOf",
    "ValueOfAll": "Fn::ValueOfAll",
    "RefAll": "Fn::RefAll",
    "Contains": "Fn::Contains",
    "EachMemberEquals": "Fn::EachMemberEquals",
    "EachMemberIn": "Fn::EachMemberIn",
}
LONG_FORM_TAGS: dict[str, str] = {v: k for k, v in SHORT_FORM_TAGS.items()}
# rain's directives (`!Rain::Embed path`), read as one-key mappings and processed by formwright.packaging
RAIN_TAGS = ("Rain::Embed", "Rain::Include", "Rain::Env", "Rain::S3Http", "Rain::S3", "Rain::Module")


def is_simple_getatt(value: Any) -> bool:
    """True when `!GetAtt` can be written in its dotted scalar form (`!GetAtt Resource.Attribute`)."""
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, str) for v in value)
        and "." not in value[0]
    )
