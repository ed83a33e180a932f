"""template.yaml's fast writer gives exactly the text of `dump_yaml`, fallbacks included."""

from __future__ import annotations

import pytest
import yaml

from formwright.template import dump_yaml, loads
from formwright.transform.cloudformation.yaml_out import template_yaml

SHARED = {"Ref": "Shared"}

CASES = {
    "scalars": {
        "a": "text",
        "b": 1,
        "c": True,
        "d": False,
        "e": None,
        "f": 1.5,
        "g": -0.0,
        "h": float("inf"),
    },
    "look-alikes": [
        "true",
        "no",
        "1",
        "1.0",
        "0o17",
        "0x1f",
        "1_000",
        "2010-09-09",
        "",
        " ",
        "~",
        "null",
        "-",
        "a: b",
        "#c",
        "- d",
        "{e}",
        "[f]",
        "'g'",
        '"h"',
        "*i",
        "&j",
        "!k",
        "%l",
        "@m",
        "`n",
        "o\tp",
    ],
    "multi-line": {
        "lit": "line 1\nline 2\n",
        "lead": "  indented\nx",
        "trail": "a  \nb",
        "only": "\n",
        "crlf": "a\r\nb",
        "unicode": "héllo ✓\nwörld",
    },
    "intrinsics": {
        "ref": {"Ref": "Param"},
        "getatt": {"Fn::GetAtt": ["Res", "Attr"]},
        "getatt-dotted": {"Fn::GetAtt": ["Res", "A.B"]},
        "getatt-text": {"Fn::GetAtt": "Res.Attr"},
        "getatt-3": {"Fn::GetAtt": ["A", "B", "C"]},
        "getatt-dot-resource": {"Fn::GetAtt": ["A.x", "B"]},
        "sub": {"Fn::Sub": "https://${Bucket}.s3/${AWS::Region}"},
        "sub-list": {"Fn::Sub": ["${x}", {"x": {"Ref": "X"}}]},
        "join": {"Fn::Join": ["", ["a", {"Ref": "B"}, "\nc"]]},
        "base64": {"Fn::Base64": {"Fn::Sub": "x\ny"}},
        "select-int": {"Fn::Select": [0, {"Fn::GetAZs": ""}]},
        "tag-int": {"Ref": 5},
        "tag-float": {"Ref": 2.5},
        "tag-bool": {"Ref": True},
        "tag-none": {"Ref": None},
        "condition": {"Condition": "IsProd"},
        "condition-map": {"Condition": {"a": 1}},
        "if": {"Fn::If": ["C", {"Ref": "A"}, {"Ref": "AWS::NoValue"}]},
        "two-keys": {"Ref": "A", "Other": 1},
        "empty-map": {},
        "empty-list": [],
    },
    "keys": {"Fn::Sub": 1, "key with: colon": 2, "multi\nline key": 3, 4: "int key", "": "empty"},
    "long": {"line": "x" * 1500, "words": " ".join(["word"] * 400)},
    "shared": {"a": SHARED, "b": SHARED, "c": [SHARED]},
    "shared-list": {"a": [1, 2], "b": None},
}
CASES["shared-list"]["b"] = CASES["shared-list"]["a"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_text_as_dump_yaml(name: str):
    assert template_yaml(CASES[name]) == dump_yaml(CASES[name])


def test_loaded_template():
    loaded = loads(
        "Resources:\n  A:\n    Type: X\n    Properties:\n      P: !GetAtt B.C\n      Q: [1, !Ref D]\n"
    )
    assert template_yaml(loaded) == dump_yaml(loaded)


def test_other_types_go_to_dump_yaml():
    odd = {"tuple": (1, 2), "set": {3}, "subclass": type("Text", (str,), {})("x")}
    for key, value in odd.items():
        try:
            expected: object = dump_yaml({key: value})
        except yaml.YAMLError as err:
            expected = type(err)
        try:
            actual: object = template_yaml({key: value})
        except yaml.YAMLError as err:
            actual = type(err)
        assert actual == expected, key
