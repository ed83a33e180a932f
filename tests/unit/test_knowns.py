"""Which outputs a plan can know before apply, and which resources may change (engine/knowns.py): the
rules of issue #22, item 1, on templates alone. Identifiers and create-only properties come from the
provider schemas cfn-lint ships (e.g. AWS::SQS::Queue: primaryIdentifier QueueUrl, createOnlyProperties
FifoQueue and QueueName)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from formwright.engine.knowns import Knowns, Use, identifiers, unknown_outputs, uses
from formwright.engine.results import ResourceChange, StackPlan

TEMPLATE = {
    "Parameters": {"Name": {"Type": "String"}, "Size": {"Type": "String"}},
    "Conditions": {"Big": {"Fn::Equals": [{"Ref": "Size"}, "big"]}},
    "Resources": {
        "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Ref": "Name"}}},
        "Topic": {"Type": "AWS::SNS::Topic"},
        "Param": {"Type": "AWS::SSM::Parameter",
                  "Properties": {"Type": "String", "Value": {"Fn::GetAtt": ["Queue", "QueueName"]}}},
        "Extra": {"Type": "AWS::SQS::Queue", "Condition": "Big"},
        "Custom": {"Type": "Custom::Thing", "Properties": {"ServiceToken": "arn", "In": {"Ref": "Name"}}},
    },
    "Outputs": {
        "QueueUrl": {"Value": {"Ref": "Queue"}},
        "QueueArn": {"Value": {"Fn::GetAtt": "Queue.Arn"}},
        "QueueName": {"Value": {"Fn::Sub": "${Queue.QueueName}"}},
        "Region": {"Value": {"Fn::Sub": "${AWS::Region}-${Local}", "Fn::Sub_vars": None}},
        "TopicArn": {"Value": {"Ref": "Topic"}},
        "Sized": {"Value": {"Fn::If": ["Big", "yes", "no"]}},
    },
}


def change(logical: str, action: str = "Modify", replacement: str = "False",
           resource_type: str = "AWS::SQS::Queue") -> ResourceChange:
    return ResourceChange(action, logical, resource_type, replacement)


def test_uses_reads_ref_getatt_sub_and_conditions() -> None:
    sub = {"Fn::Sub": ["${C}-${D.Name}-${!Literal}-${Local}", {"Local": {"Ref": "E"}}]}
    found = set(uses({"Fn::Join": ["", [{"Ref": "A"}, {"Fn::GetAtt": ["B", "Arn"]}, sub,
                                        {"Fn::If": ["Cond", {"Ref": "F"}, "x"]}]]}))
    assert found == {Use("ref", "A"), Use("getatt", "B", "Arn"), Use("ref", "C"), Use("getatt", "D", "Name"),
                     Use("ref", "E"), Use("condition", "Cond"), Use("ref", "F")}


KEYS = st.sampled_from(["Ref", "Fn::GetAtt", "Fn::Sub", "Fn::If", "Condition", "Fn::ImportValue", "Fn::Join",
                        "X"])


@given(st.recursive(st.none() | st.text(max_size=5) | st.integers(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
                    max_leaves=12))
def test_uses_never_fails_on_any_shape(expression) -> None:
    # a template's values can be any JSON: malformed intrinsics are CloudFormation's error, never a crash
    for use in uses(expression):
        assert use.kind in ("ref", "getatt", "condition", "import")


def test_identifiers_come_from_the_schema_and_arn() -> None:
    assert identifiers("AWS::SQS::Queue") == {"QueueUrl", "Arn"}
    assert identifiers("AWS::EC2::SecurityGroup") == {"Id", "Arn"}  # GroupId is no identifier there


def test_an_in_place_update_keeps_refs_and_identifiers_but_not_other_attributes() -> None:
    knowns = Knowns(TEMPLATE, {"Queue": change("Queue")}, {})
    found = unknown_outputs(TEMPLATE, TEMPLATE, knowns, {k: "v" for k in TEMPLATE["Outputs"]})
    assert set(found) == {"QueueName"}  # QueueName is no identifier of AWS::SQS::Queue: in doubt, unknown
    assert "QueueName is not an identifier of AWS::SQS::Queue" in found["QueueName"]


def test_a_replacement_or_an_addition_makes_every_use_unknown() -> None:
    for replaced in (change("Queue", replacement="True"), change("Queue", replacement="Conditional"),
                     change("Queue", action="Add")):
        knowns = Knowns(TEMPLATE, {"Queue": replaced}, {})
        found = unknown_outputs(TEMPLATE, TEMPLATE, knowns, {k: "v" for k in TEMPLATE["Outputs"]})
        assert set(found) == {"QueueUrl", "QueueArn", "QueueName"}


def test_parameters_conditions_new_outputs_and_changed_expressions() -> None:
    old = {**TEMPLATE, "Outputs": {k: v for k, v in TEMPLATE["Outputs"].items() if k != "TopicArn"}}
    old["Outputs"]["Region"] = {"Value": "elsewhere"}
    knowns = Knowns(TEMPLATE, {}, {"Size": "parameter Size changes"})
    deployed = {k: "v" for k in old["Outputs"]}
    found = unknown_outputs(TEMPLATE, old, knowns, deployed)
    assert found == {"Sized": "condition Big: parameter Size changes", "TopicArn": "a new output",
                     "Region": "its expression changed"}
    assert unknown_outputs(TEMPLATE, None, Knowns(TEMPLATE, {}, {}), deployed)["QueueUrl"] == \
        "the deployed template could not be read"


def test_resources_using_an_unknown_value_may_change_with_their_worst_replacement() -> None:
    knowns = Knowns(TEMPLATE, {}, {"Name": "Name known after apply"})
    may = {c.logical_id: c for c in knowns.spread()}
    assert may["Queue"].replacement == "True" and may["Queue"].may_change  # QueueName is create-only
    assert "Name known after apply, in QueueName" in may["Queue"].because
    # transitively: the parameter uses GetAtt of a queue that may be replaced; Value is not create-only
    assert may["Param"].replacement == "False" and "Queue may be replaced" in may["Param"].because
    assert may["Custom"].replacement == "Conditional"  # no schema: it may return a new physical id
    assert "Topic" not in may and "Extra" not in may
    # a condition on an unknown value: the resource may come or go
    knowns = Knowns(TEMPLATE, {}, {"Size": "Size known after apply"})
    assert [c.logical_id for c in knowns.spread()] == ["Extra"]


def test_a_plan_reads_back_from_its_json() -> None:
    plan = StackPlan("a", "p-a", "update", resources=[ResourceChange("Modify", "Q", "AWS::SQS::Queue", "True",
                                                                     may_change=True, because="x")],
                     unknown_parameters={"P": "why"}, inputs_hash="h", change_set_id="arn")
    assert StackPlan.from_json(plan.to_json()) == plan
