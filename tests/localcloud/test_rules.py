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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formwright.cloud.emulator.resolve import Resolver, TemplateError
from formwright.cloud.emulator.rules import RuleError, check_rules
from tests.localcloud.lifecycle import deploy

RELAXED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a shared, busy machine

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


@RELAXED
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


# ---- the rule functions are the Resolver's (issue 27): a rule and a condition agree where they overlap ----
_NAMES = ("Env", "Size")
_WORDS = ("dev", "prod", "large")


def _expressions() -> st.SearchStrategy:
    operand = st.one_of(st.sampled_from(_WORDS), st.sampled_from([{"Ref": n} for n in _NAMES]))
    leaf = st.one_of(st.booleans(), st.builds(lambda a, b: {"Fn::Equals": [a, b]}, operand, operand))
    return st.recursive(leaf, lambda inner: st.one_of(
        st.builds(lambda a: {"Fn::Not": [a]}, inner),
        st.builds(lambda a: {"Fn::And": a}, st.lists(inner, min_size=2, max_size=3)),
        st.builds(lambda a: {"Fn::Or": a}, st.lists(inner, min_size=2, max_size=3))), max_leaves=8)


@RELAXED
@given(expression=_expressions(), env=st.sampled_from(_WORDS), size=st.sampled_from(_WORDS))
def test_a_rule_condition_and_a_conditions_section_condition_agree(expression, env, size) -> None:
    # "Rule functions" and "Condition functions" (AWS CloudFormation User Guide) define Fn::And, Fn::Or,
    # Fn::Not and Fn::Equals alike over string parameters
    values = {"Env": env, "Size": size}
    declared = {n: {"Type": "String"} for n in _NAMES}
    section = Resolver({"Parameters": declared, "Conditions": {"C": expression}}, values, {}).condition("C")
    template = {"Parameters": declared, "Rules": {"R": {"RuleCondition": expression, "Assertions": [
        {"Assert": False, "AssertDescription": "the condition held"}]}}}
    try:
        check_rules(template, values, {})
    except RuleError as err:
        assert str(err) == "the condition held"
        assert section
    else:
        assert not section


ZONES = {"Parameters": {"Zones": {"Type": "CommaDelimitedList"}, "Other": {"Type": "CommaDelimitedList"},
                        "Env": {"Type": "String"}},
         "Conditions": {"IsProd": True}, "Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}}
ZONE_VALUES = {"Zones": ["a", "b"], "Other": ["c"], "Env": "dev"}


@pytest.mark.parametrize(("assertion", "outcome"), [
    # inside Rules a List parameter's value is a list, and Fn::Equals compares values of any type
    ({"Fn::Equals": [{"Ref": "Zones"}, ["a", "b"]]}, "holds"),
    ({"Fn::Equals": [{"Ref": "Zones"}, "a,b"]}, "fails"),
    # Fn::RefAll: the values of every parameter of that type
    ({"Fn::EachMemberIn": [{"Fn::RefAll": "CommaDelimitedList"}, ["a", "b", "c"]]}, "holds"),
    ({"Fn::Contains": [{"Fn::RefAll": "CommaDelimitedList"}, "d"]}, "fails"),
    # a rule function's value is its truth, and Fn::If tests a rule function (cloudformation-coverage-roadmap
    # #921 quotes the Rules page: functions nest, and a condition or assertion must end true or false)
    ({"Fn::Equals": [{"Fn::Contains": [{"Ref": "Zones"}, "a"]}, "true"]}, "holds"),
    ({"Fn::If": [{"Fn::Equals": [{"Ref": "Env"}, "dev"]}, True, False]}, "holds"),
    # no `Condition` inside Rules (cloudformation-coverage-roadmap#1183): the rule is not a boolean
    ({"Condition": "IsProd"}, "Template error: rule [R] does not evaluate to a boolean"),
    ({"Fn::And": [True, {"Fn::Not": ["yes"]}]}, "Template error: rule [R] does not evaluate to a boolean"),
    # Ref names a parameter or a pseudo parameter, never a resource
    ({"Fn::Equals": [{"Ref": "Queue"}, "q"]}, "Template error: rule references undefined parameter [Queue]"),
    # every argument of Fn::Or is evaluated, not only up to the one that decides
    ({"Fn::Or": [True, {"Fn::Equals": [{"Ref": "Nope"}, "x"]}]},
     "Template error: rule references undefined parameter [Nope]"),
    ({"Fn::Or": [True, {"Fn::ValueOfAll": ["AWS::EC2::VPC::Id", "Tags.Name"]}]},
     "The local cloud cannot evaluate Fn::ValueOfAll in a template's Rules: it reads attributes of live AWS "
     "resources. Check the rule on AWS, or remove it for the local cloud."),
])
def test_what_only_rules_do(assertion, outcome) -> None:
    rule = {"Assertions": [{"Assert": assertion, "AssertDescription": "fails"}]}
    template = {**ZONES, "Rules": {"R": rule}}
    try:
        check_rules(template, ZONE_VALUES, {"AWS::Region": "us-east-1"})
    except RuleError as err:
        assert str(err) == outcome
    else:
        assert outcome == "holds"


def test_a_conditions_section_condition_evaluates_every_argument_too() -> None:
    template = {"Conditions": {"C": {"Fn::Or": [True, {"Condition": "Missing"}]}}}
    with pytest.raises(TemplateError, match=r"Unresolved condition dependencies \[Missing\]"):
        Resolver(template, {}, {})
