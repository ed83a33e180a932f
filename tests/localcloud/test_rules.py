"""A template's Rules section is evaluated against the parameters before anything is made (issue 30: AWS's
sample VPCFlowLogs-main.cfn.yaml reached CREATE_COMPLETE where CloudFormation refuses it).

AWS CloudFormation User Guide, "Rules template section syntax" (rules "validate parameter values before
CloudFormation creates or updates any resources") and "Rule functions" ("If the condition evaluates to false,
CloudFormation doesn't check the parameter value and proceeds with the stack operation"); a false Assert
refuses CreateChangeSet / CreateStack / UpdateStack with a ValidationError whose message is the
AssertDescription.
"""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError
from hypothesis import given
from hypothesis import strategies as st

from formwright.cloud.emulator.rules import RuleError, check_rules
from tests.localcloud.lifecycle import deploy

TEMPLATE = {
    "Parameters": {
        "Env": {"Type": "String", "Default": "dev"},
        "Size": {"Type": "String", "Default": "small"},
        "Zones": {"Type": "CommaDelimitedList", "Default": "a,b"},
    },
    "Rules": {
        "ProdIsLarge": {
            "RuleCondition": {"Fn::Equals": [{"Ref": "Env"}, "prod"]},
            "Assertions": [{"Assert": {"Fn::Equals": [{"Ref": "Size"}, "large"]},
                            "AssertDescription": "A prod stack must be large"}],
        },
        "KnownZones": {
            "Assertions": [
                {"Assert": {"Fn::EachMemberIn": [{"Ref": "Zones"}, ["a", "b", "c"]]},
                 "AssertDescription": "Zones must be a, b or c"},
                {"Assert": {"Fn::Not": [{"Fn::Contains": [{"Ref": "Zones"}, "x"]}]}},
            ]
        },
    },
    "Resources": {"Queue": {"Type": "AWS::SQS::Queue"}},
}


def _error(call) -> tuple[str, str]:
    with pytest.raises(ClientError) as caught:
        call()
    return caught.value.response["Error"]["Code"], caught.value.response["Error"]["Message"]


def test_a_false_assertion_refuses_the_change_set_and_create_stack(cfn) -> None:
    assert _error(lambda: cfn.change_set("rules", TEMPLATE, {"Env": "prod"})) == (
        "ValidationError", "A prod stack must be large")
    assert _error(lambda: cfn.change_set("rules", TEMPLATE, {"Zones": "a,d"}))[1] == "Zones must be a, b or c"
    assert _error(lambda: cfn.client.create_stack(
        StackName="rules", TemplateBody=json.dumps(TEMPLATE),
        Parameters=[{"ParameterKey": "Env", "ParameterValue": "prod"}])) == (
        "ValidationError", "A prod stack must be large")
    assert not cfn.exists("rules")


def test_rules_that_hold_deploy_and_a_false_rule_condition_skips_its_assertions(cfn) -> None:
    # Env dev: ProdIsLarge's condition is false, so Size small is not checked
    deploy(cfn, "rules-ok", TEMPLATE)
    large = cfn.change_set("rules-ok2", TEMPLATE, {"Env": "prod", "Size": "large"})
    assert large["Status"] == "CREATE_COMPLETE"


def test_an_update_is_checked_too(cfn) -> None:
    deploy(cfn, "rules-up", TEMPLATE)
    assert _error(lambda: cfn.change_set("rules-up", TEMPLATE, {"Env": "prod"}))[1] == (
        "A prod stack must be large")


def test_a_rule_reading_live_resources_is_refused_saying_so(cfn) -> None:
    # Fn::ValueOf reads a live resource's attribute (e.g. a subnet's VpcId): the local cloud does not
    # pretend the rule holds
    template = {
        "Parameters": {"Subnet": {"Type": "AWS::EC2::Subnet::Id", "Default": "subnet-1"}},
        "Rules": {"InVpc": {"Assertions": [{"Assert": {"Fn::Equals": [
            {"Fn::ValueOf": ["Subnet", "VpcId"]}, "vpc-1"]}}]}},
        "Resources": {"Queue": {"Type": "AWS::SQS::Queue"}},
    }
    code, message = _error(lambda: cfn.change_set("rules-live", template))
    assert code == "ValidationError"
    assert message.startswith("The local cloud cannot evaluate Fn::ValueOf in a template's Rules")


@given(members=st.lists(st.sampled_from("abcd")), allowed=st.lists(st.sampled_from("abcd")),
       one=st.sampled_from("abcd"))
def test_the_list_rule_functions_are_set_membership(members, allowed, one) -> None:
    # "Rule functions": Fn::EachMemberIn (each string of the first list is one of the second),
    # Fn::EachMemberEquals (each string equals the value), Fn::Contains (the list holds the string)
    values = {"Members": members, "Allowed": allowed, "One": one}

    def holds(assertion: dict) -> bool:
        try:
            check_rules({"Rules": {"R": {"Assertions": [{"Assert": assertion}]}}}, values, {})
        except RuleError:
            return False
        return True

    members_ref, allowed_ref, one_ref = ({"Ref": n} for n in ("Members", "Allowed", "One"))
    assert holds({"Fn::EachMemberIn": [members_ref, allowed_ref]}) == set(members).issubset(allowed)
    assert holds({"Fn::EachMemberEquals": [members_ref, one_ref]}) == all(m == one for m in members)
    assert holds({"Fn::Contains": [allowed_ref, one_ref]}) == (one in allowed)
    assert holds({"Fn::Or": [{"Fn::Contains": [allowed_ref, one_ref]},
                             {"Fn::Not": [{"Fn::Contains": [allowed_ref, one_ref]}]}]})


def test_a_rule_naming_an_undeclared_parameter_is_a_template_error() -> None:
    template = {"Rules": {"R": {"Assertions": [{"Assert": {"Fn::Equals": [{"Ref": "Nope"}, "x"]}}]}}}
    with pytest.raises(RuleError, match=r"undefined parameter \[Nope\]"):
        check_rules(template, {}, {})
