"""The local cloud's change-set calculator, without a server: resolution and diff properties."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from formwright.cloud.emulator.changes import compute, desired
from formwright.cloud.emulator.resolve import Resolver

PSEUDO = {"AWS::StackName": "s", "AWS::Region": "us-east-1", "AWS::AccountId": "1", "AWS::StackId": "id",
          "AWS::URLSuffix": "amazonaws.com", "AWS::Partition": "aws", "AWS::NotificationARNs": []}
TEMPLATE = {
    "Parameters": {"Name": {"Type": "String"}, "Timeout": {"Type": "String"}},
    "Conditions": {"Long": {"Fn::Equals": [{"Ref": "Timeout"}, "900"]}},
    "Resources": {
        "Named": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Fn::Sub": "${Name}-q"}}},
        "Timed": {"Type": "AWS::SQS::Queue", "Properties": {
            "VisibilityTimeout": {"Fn::If": ["Long", 900, {"Ref": "Timeout"}]}}},
        "Other": {"Type": "AWS::SQS::Queue"},
    },
}
names = st.text(alphabet="abcdefgh", min_size=1, max_size=6)
timeouts = st.sampled_from(["30", "60", "900"])


def _desired(name: str, timeout: str):
    return desired(TEMPLATE, {"Name": name, "Timeout": timeout}, {}, PSEUDO, {})


@settings(deadline=None)  # the first call loads cfn-lint's schemas
@given(names, timeouts)
def test_the_same_inputs_give_no_changes(name: str, timeout: str) -> None:
    assert compute(_desired(name, timeout), _desired(name, timeout), {}, {}, {}) == []


@settings(deadline=None)
@given(names, names, timeouts, timeouts)
def test_only_resources_whose_resolved_properties_differ_change(a: str, b: str, t1: str, t2: str) -> None:
    found = {c["LogicalResourceId"]: c for c in compute(_desired(a, t1), _desired(b, t2), {}, {}, {})}
    assert ("Named" in found) == (a != b)
    assert ("Timed" in found) == (t1 != t2)
    assert "Other" not in found
    if a != b:
        assert found["Named"]["Replacement"] == "True"  # QueueName is create-only
    if t1 != t2:
        assert found["Timed"]["Replacement"] == "False"


def test_references_to_resources_stay_symbolic_and_sub_keeps_them() -> None:
    resolver = Resolver({"Resources": {"Q": {}}, "Parameters": {}}, {}, PSEUDO)
    assert resolver.value({"Fn::Sub": "${AWS::StackName}/${Q}/${Q.Arn}"}) == {"Fn::Sub": "s/${Q}/${Q.Arn}"}
    joined = {"Fn::Join": ["-", ["a", {"Ref": "Q"}]]}
    assert resolver.value(joined) == joined
    assert resolver.value({"Fn::Sub": "${!Literal}"}) == "${Literal}"
    assert resolver.value({"Fn::Select": [1, {"Fn::Split": [",", "a,b"]}]}) == "b"
