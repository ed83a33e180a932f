"""What adopt infers from live stacks, without a cloud: capabilities, NoEcho parameters, references (one
match only), dependencies from imports, and the stack keys of a project."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from formwright.adopt.infer import capabilities, imported_names, links, secret_parameters
from formwright.adopt.live import LiveStack, matching
from formwright.adopt.write import stack_keys, variable
from formwright.engine.cfn import StackInfo


def live(name: str, region: str = "us-east-1", *, params=None, outputs=None, exports=None) -> LiveStack:
    info = StackInfo(name, f"id-{name}", "CREATE_COMPLETE", parameters=params or {}, outputs=outputs or {},
                     exports=exports or {})
    return LiveStack(region, info)


def test_capabilities_come_from_the_resources_and_macros() -> None:
    # CloudFormation's "Acknowledging IAM resources": a custom name needs CAPABILITY_NAMED_IAM
    role = {"Resources": {"R": {"Type": "AWS::IAM::Role", "Properties": {}}}}
    named = {"Resources": {"R": {"Type": "AWS::IAM::Role", "Properties": {"RoleName": "x"}}}}
    macro = {"Transform": "AWS::Serverless-2016-10-31", "Resources": {}}
    nested = {"Resources": {"Q": {"Type": "AWS::SQS::Queue",
                                  "Properties": {"Fn::Transform": {"Name": "Mine"}}}}}
    assert capabilities(role, []) == ["CAPABILITY_IAM"]
    assert capabilities(named, []) == ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"]
    assert capabilities(macro, []) == capabilities(nested, []) == ["CAPABILITY_AUTO_EXPAND"]
    assert capabilities({"Resources": {}}, ["CAPABILITY_IAM"]) == ["CAPABILITY_IAM"]  # as the stack was given


def test_noecho_and_imports_are_read_from_the_template() -> None:
    template = {"Parameters": {"A": {"Type": "String", "NoEcho": "true"}, "B": {"Type": "String"}},
                "Resources": {"P": {"Properties": {"V": {"Fn::ImportValue": "x-Arn"},
                                                   "W": {"Fn::ImportValue": {"Fn::Sub": "${S}-y"}}}}}}
    assert secret_parameters(template) == {"A"}
    assert imported_names(template) == {"x-Arn"}  # a computed name cannot be matched


def test_one_match_is_a_reference_several_are_listed_a_cycle_is_refused() -> None:
    stacks = {"net": live("net", outputs={"Arn": "arn:1", "Same": "v"}, params={"Back": "arn:2"}),
              "other": live("other", outputs={"Same": "v"}),
              "app": live("app", params={"Topic": "arn:1", "Shared": "v"}, outputs={"Out": "arn:2"})}
    found = links(stacks, {key: {} for key in stacks})
    # net <-> app: the first in the stacks' order (net's) is kept, the one closing the cycle listed
    assert found.refs == {"net": {"Back": ("app", "Out")}}
    assert {(a["stack"], a["parameter"], a["reason"]) for a in found.ambiguous} == {
        ("app", "Shared", "several outputs hold this value"),
        ("app", "Topic", "a reference would make a dependency cycle")}


def test_imports_of_an_adopted_export_in_the_same_region_are_dependencies() -> None:
    stacks = {"net": live("net", exports={"net-Arn": "arn:1"}), "app": live("app"),
              "far": live("far", "eu-west-1")}
    imports = {"Resources": {"P": {"Properties": {"V": {"Fn::ImportValue": "net-Arn"}}}}}
    found = links(stacks, {"net": {}, "app": imports, "far": imports})
    assert found.depends_on == {"app": {"net"}}  # exports are regional: far's import is another export


def test_stack_keys_add_the_region_only_when_a_name_is_in_two() -> None:
    keys = stack_keys([live("a"), live("b"), live("b", "eu-west-1")])
    assert list(keys) == ["a", "b-us-east-1", "b-eu-west-1"]
    assert variable("app-db", "Db.Password") == "APP_DB_DB_PASSWORD"


@given(st.lists(st.from_regex(r"[A-Za-z][-A-Za-z0-9]{0,20}", fullmatch=True), max_size=8))
def test_a_pattern_without_wildcards_matches_only_its_own_name(names: list[str]) -> None:
    for name in names:
        assert set(matching(names, [name])) == {name}
    assert matching(names, ["*"]) == names
