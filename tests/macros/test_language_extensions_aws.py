"""AWS::LanguageExtensions behaviours taken from AWS's own conformance suite for the transform
(aws-sam-cli tests/unit/lib/cfn_language_extensions/compatibility: templates, expected outputs and the
harness test_kotlin_compatibility.py). Each test names the AWS case it follows; where AWS's
documentation says otherwise, the expected outputs win."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formwright.macros import MacroError, MacroRegistry, expand
from formwright.macros.foreach import MAX_DEPTH
from tests.macros.conftest import template

REGISTRY = MacroRegistry.build()


def le(body: str, **kwargs) -> dict:
    return expand(template("Transform: AWS::LanguageExtensions\n" + body), registry=REGISTRY, **kwargs)


def le_error(body: str, **kwargs) -> MacroError:
    with pytest.raises(MacroError) as info:
        le(body, **kwargs)
    assert info.value.message.startswith("Transform AWS::LanguageExtensions failed with: ")
    return info.value


def test_sub_of_known_values_becomes_a_string():
    # forEach/resources/fnForEachSingle: the expected output has "MyTopic1", not {"Fn::Sub": "MyTopic1"}.
    out = le(
        "Resources:\n  Fn::ForEach::L: [N, ['1'], {'T${N}': {Type: T, Properties: "
        "{Name: {Fn::Sub: 'MyTopic${N}'}, Arn: {Fn::Sub: '${AWS::Region}-${Bucket.Arn}'}}}}]\n"
    )
    props = out["Resources"]["T1"]["Properties"]
    assert props["Name"] == "MyTopic1"
    assert props["Arn"] == {"Fn::Sub": "${AWS::Region}-${Bucket.Arn}"}  # needs a resource: kept


def test_output_key_without_identifier_and_primitive_items():
    # fnForEachWithNoIdentifierInOutputKeyAndValid and fnForEachPrimitiveTypesTest: a fixed key is valid,
    # numbers and booleans are items (true as "true").
    out = le(
        "Resources: {R: {Type: T}}\nOutputs:\n"
        "  Fn::ForEach::A: [V, [1], {Fixed: {Value: x}}]\n"
        "  Fn::ForEach::B: [V, [2, true], {'Out${V}': {Value: {Fn::Sub: 'Topic${V}'}}}]\n"
    )
    assert out["Outputs"] == {
        "Fixed": {"Value": "x"},
        "Out2": {"Value": "Topic2"},
        "Outtrue": {"Value": "Topictrue"},
    }


def test_sections_emptied_by_loops_are_dropped():
    # fnForEachWithCollectionAsEmptyList (conditions, outputs): AWS drops the emptied section.
    out = le(
        "Conditions:\n  Fn::ForEach::C: [V, [], {'C${V}': {Fn::Equals: [a, a]}}]\n"
        "Resources: {R: {Type: T}}\n"
        "Outputs:\n  Fn::ForEach::O: [V, [], {'O${V}': {Value: x}}]\n"
    )
    assert "Conditions" not in out and "Outputs" not in out


def test_if_on_a_known_condition_is_decided_and_novalue_removed():
    # templateWithIntrinsicInPolicyDocument: Fn::If on Fn::Equals [3, 3] inside lists is resolved.
    out = le(
        "Conditions: {Yes3: {Fn::Equals: [3, 3]}, No12: {Fn::Equals: [1, 2]}}\nResources:\n  R:\n"
        "    Type: T\n    Properties:\n"
        "      Tags: [{Fn::If: [Yes3, {Key: a}, {Ref: AWS::NoValue}]}, {Key: b}]\n"
        "      Gone: {Fn::If: [Yes3, {Ref: AWS::NoValue}, x]}\n"
        "      List: [{Fn::If: [No12, x, {Ref: AWS::NoValue}]}]\n"
    )
    assert out["Resources"]["R"]["Properties"] == {"Tags": [{"Key": "a"}, {"Key": "b"}], "List": []}
    assert out["Conditions"]["Yes3"] == {"Fn::Equals": [3, 3]}  # conditions themselves stay as written


def test_base64_is_resolved():
    # resourceWithBase64String (harness test_base64_encoding).
    out = le("Resources:\n  R: {Type: T, Properties: {U: {Fn::Base64: \"echo 'Hello World'\"}}}\n")
    assert out["Resources"]["R"]["Properties"]["U"] == base64.b64encode(b"echo 'Hello World'").decode()


def test_findinmap_default_that_needs_deployment_is_kept():
    # fnFindInMapWithFnGetAttInDefaultValue, fnFindInMapWithDefaultValueListAsIs: AWS keeps them.
    out = le(
        "Mappings: {M: {a: {b: c}}}\nResources:\n  Q: {Type: T}\n  R:\n    Type: T\n    Properties:\n"
        "      P: {Fn::FindInMap: [M, a, nokey, {DefaultValue: {Fn::GetAtt: [Q, Arn]}}]}\n"
        "      L: {Fn::FindInMap: [M, a, nokey, {DefaultValue: [{Ref: AWS::StackId}]}]}\n"
    )
    props = out["Resources"]["R"]["Properties"]
    assert props == {"P": {"Fn::GetAtt": ["Q", "Arn"]}, "L": [{"Ref": "AWS::StackId"}]}


def test_entries_with_a_false_condition_are_not_validated():
    # templateFnInMapInWhenFalseConditionInResourceWithInvalidStringPath: kept as written, not refused.
    out = le(
        "Mappings: {A: {B: {C: D}}}\nConditions: {Never: {Fn::Equals: ['false', 'true']}}\nResources:\n"
        "  T: {Condition: Never, Type: T, Properties: {N: {Fn::FindInMap: [A, Undefined, C]}}}\n"
    )
    assert out["Resources"]["T"]["Properties"]["N"] == {"Fn::FindInMap": ["A", "Undefined", "C"]}


def test_length_in_conditions_waits_for_a_parameter_value():
    # templateWithFnLengthInConditions: a parameter without a value leaves the condition as written.
    out = le(
        "Parameters: {P: {Type: String}}\n"
        "Conditions: {C: {Fn::Equals: [{Fn::Length: {Fn::Split: [',', {Ref: P}]}}, 2]}}\n"
        "Resources: {R: {Type: T}}\n"
    )
    assert out["Conditions"]["C"]["Fn::Equals"][0] == {"Fn::Length": {"Fn::Split": [",", {"Ref": "P"}]}}


def test_tojsonstring_drops_novalue_and_resolves_parameters():
    # toJsonStringReferringToParamWithoutDefaultValue / ...NonResolvableFunctionsArray.
    out = le(
        "Parameters: {Pw: {Type: String}}\nResources:\n  R: {Type: T, Properties: {S: {Fn::ToJsonString: "
        "[{pw: {Ref: Pw}, no: {Ref: AWS::NoValue}}]}}}\n",
        parameter_values={"Pw": "Pa$$word"},
    )
    assert json.loads(out["Resources"]["R"]["Properties"]["S"]) == [{"pw": "Pa$$word"}]


@pytest.mark.parametrize(
    "body,message",
    [
        # fnSplitWithEmptySpliter; inside Fn::Length it was an internal error (issue #17).
        (
            "Resources:\n  R: {Type: T, Properties: {N: {Fn::Split: ['', 'a,b']}}}\n",
            "Fn::Split layout is incorrect",
        ),
        (
            "Resources:\n  R: {Type: T, Properties: {N: {Fn::Length: {Fn::Split: ['', 'a,b']}}}}\n",
            "Fn::Split layout is incorrect",
        ),
        # forEach/*/fnForEachWithConflictingLoopNameParam
        (
            "Parameters: {L: {Type: String}}\nResources:\n  Fn::ForEach::L: [X, [a], {'R${X}': {Type: T}}]\n",
            "loop name 'L' conflicts with parameter name",
        ),
        # outputWithAwsNoValue, templateWithNullOutput, outputWithNullSub
        (
            "Resources: {R: {Type: T}}\nOutputs: {O: {Value: {Ref: AWS::NoValue}}}\n",
            "must not be null or AWS::NoValue",
        ),
        ("Resources: {R: {Type: T}}\nOutputs: {O: null}\n", "'null' values are not allowed"),
        (
            "Resources: {R: {Type: T}}\nOutputs: {O: {Value: {Fn::Sub: ['${A}', {A: null}]}}}\n",
            "Fn::Sub layout is incorrect",
        ),
        # resourceAttributesWithWrongValueList
        ("Resources: {R: {Type: T, DeletionPolicy: [Delete, Retain]}}\n", "DeletionPolicy of R resolves to"),
        # templateWithFnMapInCondition
        (
            "Conditions: {C: {Fn::FindInMap: [Nope, a, b]}}\nResources: {R: {Type: T}}\n",
            "Unable to get mapping",
        ),
        # templateWithInvalidConditionRef: a condition can only Ref a parameter
        (
            "Conditions: {A: {Fn::Equals: [a, a]}, B: {Fn::And: [{Ref: A}, {Ref: A}]}}\n"
            "Resources: {R: {Type: T}}\n",
            "a condition can only Ref a parameter",
        ),
        # templateWithResourceConditionWithoutConditionSection
        ("Resources: {R: {Type: T, Condition: Nope}}\n", "references non-existent condition 'Nope'"),
        # templateWithNestedCircularConditions: a cycle behind a short-circuited Fn::And
        (
            "Conditions:\n  A: {Fn::And: [{Fn::Equals: [a, b]}, {Condition: B}]}\n"
            "  B: {Fn::Not: [{Condition: A}]}\n"
            "Resources: {R: {Type: T}}\n",
            "Circular dependency between conditions",
        ),
        # templateWithInvalidFnSelectIndex, templateWithNoMappingMatch, templateWithNestedRefNoValue
        ("Resources: {R: {Type: T, Properties: {N: {Fn::Select: [1, [a]]}}}}\n", "out of range"),
        (
            "Mappings: {M: {a: {b: c}}}\n"
            "Resources: {R: {Type: T, Properties: {N: {Fn::FindInMap: [M, x, b]}}}}\n",
            "Unable to get mapping for M::x::b",
        ),
        (
            "Resources: {R: {Type: T, Properties: {N: {Ref: {Ref: AWS::NoValue}}}}}\n",
            "Ref layout is incorrect",
        ),
        # toJsonStringReferringToNonResolvable*: condition functions, NotificationARNs,
        # an unresolved Fn::Split
        (
            "Resources: {R: {Type: T, Properties: {S: {Fn::ToJsonString: {a: {Fn::Equals: [a, a]}}}}}}\n",
            "does not support Fn::Equals",
        ),
        (
            "Resources: {R: {Type: T, Properties: {S: {Fn::ToJsonString: "
            "{a: {Ref: AWS::NotificationARNs}}}}}}\n",
            "does not support AWS::NotificationARNs",
        ),
        (
            "Resources: {R: {Type: T, Properties: {S: {Fn::ToJsonString: "
            "{a: {Fn::Split: ['|', {Ref: U}]}}}}}}\n",
            "Unable to resolve Fn::Split",
        ),
        # fnFindInMapWithUnsupportedFunctionFnGetAtt / FnRef
        (
            "Mappings: {M: {a: {b: c}}}\nResources:\n  Q: {Type: T}\n"
            "  R: {Type: T, Properties: {N: {Fn::FindInMap: [M, a, {Ref: Q}, {DefaultValue: x}]}}}\n",
            "Fn::FindInMap does not support Ref",
        ),
    ],
)
def test_what_aws_refuses(body, message):
    err = le_error(body)
    assert message in err.message and err.line


def test_foreach_nesting_and_size_bounds():
    # AWS's processor: MAX_FOREACH_NESTING_DEPTH = 5. Issue #17: a bound on what loops generate.
    body: object = {"Type": "T"}
    for level in range(MAX_DEPTH + 1):
        body = {f"Fn::ForEach::L{level}": [f"V{level}", ["a"], {f"R${{V{level}}}": body}]}
    text = "Resources: " + json.dumps(
        {"Fn::ForEach::Top": ["Top", ["a"], {"X${Top}": {"Type": "T", "Properties": body}}]}
    )
    err = le_error(text)
    assert "nesting depth of 7 exceeds the maximum allowed depth of 5" in err.message
    items = [f"i{n}" for n in range(400)]
    huge = "Resources: " + json.dumps(
        {"Fn::ForEach::A": ["A", items, {"Fn::ForEach::B": ["B", items, {"R${A}${B}": {"Type": "T"}}]}]}
    )
    assert "generate more than 100,000 entries" in le_error(huge).message


def test_foreach_with_a_list_of_identifiers_over_a_list_of_lists():
    # forEach/*/fnForEachListOfLists{,FindInMap,WithRef}Test: [[Id1, Id2], [[a1, a2], ...], body] binds
    # each identifier to its part of every item; an item may be a FindInMap or a Ref to a
    # CommaDelimitedList, an identifier a Ref to a String parameter; numbers become their text.
    out = le("""
Parameters:
  Pair: {Type: CommaDelimitedList, Default: "7,img-7"}
  Second: {Type: String, Default: Image}
Mappings:
  M: {K: {Pair: [8, img-8]}}
Resources:
  Fn::ForEach::Servers:
    - [Name, {Ref: Second}]
    - [[1, img-1], {Ref: Pair}, {Fn::FindInMap: [M, K, Pair]}]
    - "S${Name}": {Type: AWS::EC2::Instance, Properties: {ImageId: {Ref: Image}, Tag: "${Name}-${Image}"}}
""")
    assert out["Resources"] == {
        f"S{n}": {"Type": "AWS::EC2::Instance", "Properties": {"ImageId": f"img-{n}", "Tag": f"{n}-img-{n}"}}
        for n in (1, 7, 8)
    }


@given(
    st.dictionaries(
        st.from_regex(r"[A-Za-z0-9]{1,8}", fullmatch=True),
        st.one_of(st.from_regex(r"[a-z0-9-]{0,8}", fullmatch=True), st.integers(0, 999), st.booleans()),
        max_size=6,
    )
)
@settings(max_examples=50, deadline=None)
def test_list_of_identifiers_binds_each_part(pairs):
    collection = json.dumps([[name, value] for name, value in pairs.items()])
    out = le(
        "Outputs:\n  Fn::ForEach::O: [[K, V], " + collection + ", {'Out${K}': {Value: {Ref: V}}}]\n"
        "Resources: {R: {Type: AWS::SNS::Topic}}\n"
    )
    expected = {
        f"Out{k}": {"Value": json.dumps(v) if isinstance(v, bool) else str(v)} for k, v in pairs.items()
    }
    assert out.get("Outputs", {}) == expected


@pytest.mark.parametrize(
    "identifier,collection",
    [
        ("[A, B]", "[[1], [2]]"),  # fnForEachListOfListsMoreIdentifiersTest: an item too short
        ("[A]", "[[1, x], [2, y]]"),  # ...MoreValuesTest: an item too long
        ("[A]", "['1', '2']"),  # fnForEachWithInvalidIdentifierAsList: a list identifier needs list items
        ("[A, [B]]", "[[1, x]]"),  # ...WithListIdentifierTest: an identifier that is a list
        ("[A, {Ref: L}]", "[[1, x]]"),  # ...WithRefListIdentifierTest: a Ref that gives a list
        ("[A, A]", "[[1, x]]"),  # the same identifier twice
        ("A", "[[1, x]]"),  # one identifier, items that are lists
    ],
)
def test_list_identifier_mismatches_are_refused(identifier, collection):
    error = le_error(
        "Parameters: {L: {Type: CommaDelimitedList, Default: 'p,q'}}\n"
        f"Resources:\n  Fn::ForEach::R: [{identifier}, {collection}, "
        "{'T${A}': {Type: AWS::SNS::Topic}}]\n"
    )
    assert "Fn::ForEach::R" in error.message


def test_equals_of_a_mapping_is_refused_even_in_an_unused_condition():
    # templateWithInvalidIntrinsicFunctionType (harness: an error): AWS's transform evaluates every
    # condition and refuses a Fn::Equals operand that is a mapping but not a function call.
    error = le_error(
        "Conditions: {C: {Fn::Equals: [{k: [1, 2]}, 0]}}\nResources: {R: {Type: AWS::SNS::Topic}}\n"
    )
    assert "Intrinsic function input type is invalid" in error.message
    out = le(
        "Parameters: {P: {Type: String, Default: a}}\n"
        "Conditions: {C: {Fn::Equals: [{Ref: P}, a]}}\nResources: {R: {Type: AWS::SNS::Topic}}\n"
    )
    assert out["Conditions"] == {"C": {"Fn::Equals": [{"Ref": "P"}, "a"]}}
