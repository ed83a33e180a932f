"""Order, scope, request and response of macros, written from CloudFormation's documentation
("Perform custom processing on CloudFormation templates with template macros")."""

from __future__ import annotations

import json

import pytest

from formwright.errors import TemplateError
from formwright.macros import MacroError, MacroRegistry, expand, needs_auto_expand, run
from formwright.macros.request import TRANSFORMATION_DATA_LIMIT
from tests.macros.conftest import template, write_executable, write_handler

# A macro that records the order it ran in, in the fragment's "Trace" list (or returns it unchanged).
TRACE = """
fragment = event["fragment"]
name = event["transformId"].split("::")[-1]
if isinstance(fragment, dict):
    fragment = dict(fragment)
    fragment["Trace"] = list(fragment.get("Trace", [])) + [name]
return {"requestId": event["requestId"], "status": "success", "fragment": fragment}
"""


@pytest.fixture
def tracing(macros_dir, registry_with):
    for name in ("A", "B", "C", "Inner", "Outer"):
        write_handler(macros_dir, name, TRACE)
    return registry_with()


def test_no_macros_returns_the_input_itself():
    doc = template("Resources: {B: {Type: AWS::S3::Bucket}}")
    assert expand(doc, registry=MacroRegistry.build()) is doc
    assert not needs_auto_expand(doc)


def test_needs_auto_expand_for_section_and_fn_transform():
    assert needs_auto_expand(template("Transform: X\nResources: {}"))
    assert needs_auto_expand(template("Resources: {B: {Type: T, Properties: {Fn::Transform: X}}}"))


@pytest.mark.parametrize("section", ["A", "[A, B]", "{Name: A, Parameters: {k: v}}", "[A, {Name: B}]"])
def test_transform_section_forms_run_in_listed_order_and_leave_no_transform(tracing, section):
    out = expand(template(f"Transform: {section}\nResources: {{}}"), registry=tracing)
    assert "Transform" not in out
    assert out["Trace"] == ["A", "B"][: len(out["Trace"])]
    assert out["Trace"][0] == "A"


def test_fn_transform_forms(tracing):
    doc = template("""
        Resources:
          R1: {Type: T, Properties: {Fn::Transform: A}}
          R2: {Type: T, Properties: {Fn::Transform: {Name: A, Parameters: {x: 1}}}}
          R3: {Type: T, Properties: {Fn::Transform: [A, {Name: B}]}}
    """)
    out = expand(doc, registry=tracing)
    assert out["Resources"]["R1"]["Properties"] == {"Trace": ["A"]}
    assert out["Resources"]["R2"]["Properties"] == {"Trace": ["A"]}
    assert out["Resources"]["R3"]["Properties"] == {"Trace": ["A", "B"]}


def test_deepest_first_then_outward_then_section_last(tracing):
    doc = template("""
        Transform: [C]
        Resources:
          R:
            Type: T
            Fn::Transform: Outer
            Properties:
              Fn::Transform: Inner
    """)
    run_ = run(doc, registry=tracing)
    assert [m["name"] for m in run_.macros_run] == ["Inner", "Outer", "C"]
    assert run_.template["Resources"]["R"]["Trace"] == ["Outer"]
    assert run_.template["Resources"]["R"]["Properties"] == {"Trace": ["Inner"]}
    assert run_.template["Trace"] == ["C"]


def test_scope_is_parent_mapping_minus_fn_transform_and_result_replaces_it(macros_dir, registry_with):
    write_handler(macros_dir, "Echo", """
        return {"requestId": event["requestId"], "status": "success",
                "fragment": {"Seen": sorted(event["fragment"])}}
    """)
    doc = template("""
        Resources:
          B:
            Type: AWS::S3::Bucket
            Properties:
              BucketName: x
              Tags: []
              Fn::Transform: Echo
    """)
    out = expand(doc, registry=registry_with())
    assert out["Resources"]["B"]["Properties"] == {"Seen": ["BucketName", "Tags"]}
    assert doc["Resources"]["B"]["Properties"]["BucketName"] == "x"  # the input is not mutated


def test_string_result_where_a_value_is_expected(macros_dir, registry_with):
    write_handler(
        macros_dir, "Str", 'return {"requestId": event["requestId"], "status": "SUCCESS", "fragment": "v"}'
    )
    out = expand(template("Resources: {B: {Type: T, Properties: {Name: {Fn::Transform: Str}}}}"),
                 registry=registry_with())
    assert out["Resources"]["B"]["Properties"]["Name"] == "v"


def test_output_is_not_searched_again(macros_dir, registry_with):
    write_handler(macros_dir, "Emit", """
        return {"requestId": event["requestId"], "status": "success",
                "fragment": {"X": {"Fn::Transform": "Emit"}}}
    """)
    out = expand(template("Resources: {B: {Type: T, Properties: {Fn::Transform: Emit}}}"),
                 registry=registry_with())
    assert out["Resources"]["B"]["Properties"] == {"X": {"Fn::Transform": "Emit"}}


def test_request_carries_every_field(macros_dir, registry_with):
    write_handler(macros_dir, "Req", """
        keep = {k: v for k, v in event.items() if k != "fragment"}
        return {"requestId": event["requestId"], "status": "success", "fragment": keep}
    """)
    doc = template("""
        Parameters:
          Names: {Type: CommaDelimitedList, Default: "a,b"}
          Size: {Type: Number, Default: 3}
          Given: {Type: String}
          Missing: {Type: String}
        Resources:
          B: {Type: T, Properties: {Fn::Transform: {Name: Req, Parameters: {p: {Ref: Given}}}}}
    """)
    out = expand(doc, registry=registry_with(), parameter_values={"Given": "g"}, region="eu-west-1",
                 account_id="111122223333")
    request = out["Resources"]["B"]["Properties"]
    assert request["region"] == "eu-west-1"
    assert request["accountId"] == "111122223333"
    assert request["transformId"] == "111122223333::Req"
    # A Ref to a template parameter reaches the macro as its value (AWS::Include's documented
    # `Location: !Ref InputValue`); this test used to expect it unevaluated.
    assert request["params"] == {"p": "g"}
    assert request["requestId"]
    assert request["templateParameterValues"] == {"Names": ["a", "b"], "Size": "3", "Given": "g"}


def line_error(doc, registry, **kwargs) -> MacroError:
    with pytest.raises(MacroError) as info:
        expand(doc, registry=registry, **kwargs)
    return info.value


BAD_RESPONSES = {
    "failure with message": ('{"requestId": event["requestId"], "status": "failed", "errorMessage": "boom"}',
                             "Transform 123456789012::M failed with: boom"),
    "failure without message": ('{"requestId": event["requestId"], "status": "failure"}',
                                "Transform 123456789012::M failed without an error message"),
    "wrong request id": ('{"requestId": "other", "status": "success", "fragment": {}}',
                         "Received malformed response from transform 123456789012::M"),
    "no fragment": ('{"requestId": event["requestId"], "status": "success"}',
                    "Received malformed response from transform 123456789012::M"),
    "not an object": ('"hello"', "Received malformed response from transform 123456789012::M"),
    "no status": ('{"requestId": event["requestId"], "fragment": {}}',
                  "Received malformed response from transform 123456789012::M"),
}


@pytest.mark.parametrize("case", sorted(BAD_RESPONSES))
def test_bad_responses_get_cloudformations_wording_at_the_line(macros_dir, registry_with, case):
    body, message = BAD_RESPONSES[case]
    write_handler(macros_dir, "M", f"return {body}")
    doc = template("Resources:\n  B:\n    Type: T\n    Properties:\n      Fn::Transform: M\n", file="t.yaml")
    err = line_error(doc, registry_with())
    assert err.message == message
    assert (err.file, err.line) == ("t.yaml", 5)
    assert str(err).startswith("t.yaml:5: ")


def test_handler_crash_is_the_transforms_failure_with_the_cause(macros_dir, registry_with):
    # A Lambda function that raises makes CloudFormation report "Transform X failed with: …" (issue #12);
    # this test used to expect "Received malformed response", which is for answers that break the protocol.
    write_handler(macros_dir, "M", "raise KeyError('Count')")
    err = line_error(template("Transform: M\nResources: {}"), registry_with())
    assert err.message.startswith("Transform 123456789012::M failed with: the handler raised KeyError")
    assert "M.log" in err.hint and err.line == 1


def test_section_macro_returning_a_non_object(macros_dir, registry_with):
    write_handler(
        macros_dir, "M", 'return {"requestId": event["requestId"], "status": "success", "fragment": [1]}'
    )
    err = line_error(template("Resources: {}\nTransform: M\n"), registry_with())
    assert err.message == "Template format error: unsupported structure."
    assert err.line == 2


def test_unknown_macro(tracing):
    err = line_error(template("Resources:\n  B: {Type: T, Properties: {Fn::Transform: Nope}}\n"), tracing)
    assert err.message == "No transform named 123456789012::Nope found."
    assert err.line == 2 and "formwright.yaml" in err.hint


def test_unknown_macro_suggests_a_close_name(tracing):
    err = line_error(template("Transform: Inne\nResources: {}"), tracing)
    assert "did you mean Inner?" in err.hint


@pytest.mark.parametrize("name", ["{Ref: AWS::StackName}", "[a]", "1"])
def test_name_must_be_a_literal_string(tracing, name):
    err = line_error(template(f"Resources:\n  B:\n    Fn::Transform: {{Name: {name}}}\n"), tracing)
    assert err.message == "Key Name of transform definition must be a string."
    assert err.line == 3


def test_import_value_in_a_macros_scope(tracing):
    doc = template("""
        Resources:
          B:
            Type: T
            Properties:
              Fn::Transform: A
              Vpc: {Fn::ImportValue: shared-vpc}
    """)
    err = line_error(doc, tracing)
    assert "Fn::ImportValue is not supported in the scope of transform 123456789012::A" in err.message
    assert err.line == 6


def test_import_value_outside_the_scope_is_fine(tracing):
    doc = template("""
        Resources:
          B: {Type: T, Properties: {Fn::Transform: A}}
          C: {Type: T, Properties: {Vpc: {Fn::ImportValue: shared-vpc}}}
    """)
    assert expand(doc, registry=tracing)["Resources"]["C"]["Properties"]["Vpc"] == {
        "Fn::ImportValue": "shared-vpc"
    }


def test_section_only_transforms_cannot_be_embedded(tracing):
    err = line_error(template("Resources:\n  B: {Fn::Transform: AWS::LanguageExtensions}\n"), tracing)
    assert "can only be used in the Transform section" in err.message


@pytest.mark.parametrize(
    "section", ["[]", "{Parameters: {}}", "{Name: A, Other: 1}", "{Name: A, Parameters: [1]}"]
)
def test_malformed_transform_declarations(tracing, section):
    err = line_error(template(f"Transform: {section}\nResources: {{}}"), tracing)
    assert err.message.startswith("Template format error") and err.line == 1


def test_processed_template_over_1_mb(macros_dir, registry_with):
    write_handler(macros_dir, "Big", """
        fragment = dict(event["fragment"], Description="x" * 1_100_000)
        return {"requestId": event["requestId"], "status": "success", "fragment": fragment}
    """)
    with pytest.raises(TemplateError) as info:
        expand(template("Transform: Big\nResources: {}"), registry=registry_with())
    assert "Template may not exceed 1000000 bytes" in info.value.message


def test_processed_size_reported_for_the_51200_byte_inline_limit(macros_dir, registry_with):
    write_handler(macros_dir, "Mid", """
        fragment = dict(event["fragment"], Description="x" * 60_000)
        return {"requestId": event["requestId"], "status": "success", "fragment": fragment}
    """)
    result = run(template("Transform: Mid\nResources: {}"), registry=registry_with())
    assert result.size > 51_200


def test_transformation_data_limit_exceeded(macros_dir, registry_with):
    write_handler(macros_dir, "Huge", f"""
        fragment = {{"Blob": "x" * {TRANSFORMATION_DATA_LIMIT + 10}}}
        return {{"requestId": event["requestId"], "status": "success", "fragment": fragment}}
    """)
    err = line_error(template("Resources:\n  B:\n    Fn::Transform: Huge\n"), registry_with())
    assert err.message == "Transformation data limit exceeded" and err.line == 3


def test_executable_macro_gets_the_request_on_stdin(macros_dir, registry_with):
    write_executable(macros_dir, "Exe", """
        import json, sys
        event = json.load(sys.stdin)
        json.dump({"requestId": event["requestId"], "status": "success",
                   "fragment": {"Got": event["params"]}}, sys.stdout)
    """)
    out = expand(template("Resources: {B: {Fn::Transform: {Name: Exe, Parameters: {a: b}}}}"),
                 registry=registry_with())
    assert out["Resources"]["B"] == {"Got": {"a": "b"}}


@pytest.mark.parametrize("script,hint", [
    ("import sys\nsys.stderr.write('bad things\\n')\nsys.exit(3)", "exited with code 3: bad things"),
    ("print('not json')", "not a JSON response"),
    ("import time\ntime.sleep(5)", "did not answer within"),
])
def test_executable_failures(macros_dir, script, hint):
    write_executable(macros_dir, "Exe", script)
    registry = MacroRegistry.build(macros_dir=macros_dir, timeout=0.5)
    err = line_error(template("Transform: Exe\nResources: {}"), registry)
    # A crash, exit or timeout is the transform's failure (issue #12; it used to be "malformed response").
    assert err.message.startswith("Transform 123456789012::Exe failed with: ")
    assert hint in err.message


def test_macros_run_lists_what_ran(tracing):
    result = run(template("Transform: A\nResources: {B: {Fn::Transform: B}}"), registry=tracing)
    assert [(m["name"], m["where"], m["kind"]) for m in result.macros_run] == [
        ("B", "Fn::Transform", "python"), ("A", "Transform", "python")]
    json.dumps(result.macros_run)


def test_transform_parameters_get_parameter_values_other_functions_as_written(tmp_path):
    # Issue #12 item 4: `{Ref: Param}` becomes the value (CloudFormation's AWS::Include example relies on it);
    # a Ref to a resource, a parameter without a value and other functions reach the macro as written.
    (tmp_path / "echo.py").write_text(
        "def handler(event, context):\n"
        "    return {'requestId': event['requestId'], 'status': 'success',\n"
        "            'fragment': {'Seen': event['params']}}\n")

    registry = MacroRegistry.build(macros_dir=tmp_path)
    doc = template("""
        Parameters:
          Env: {Type: String, Default: dev}
          Names: {Type: CommaDelimitedList, Default: "a,b"}
          Unset: {Type: String}
        Resources:
          R:
            Type: T
            Properties:
              Fn::Transform:
                Name: echo
                Parameters:
                  Env: {Ref: Env}
                  Nested: [{Ref: Names}, {Ref: Bucket}, {Ref: Unset}]
                  Sub: {Fn::Sub: "${Env}-x"}
    """)
    seen = expand(doc, registry=registry)["Resources"]["R"]["Properties"]["Seen"]
    assert seen == {"Env": "dev", "Nested": [["a", "b"], {"Ref": "Bucket"}, {"Ref": "Unset"}],
                    "Sub": {"Fn::Sub": "${Env}-x"}}
