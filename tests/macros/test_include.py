"""AWS::Include, from its documentation: Location s3://bucket/key (the target's S3, here the real
local cloud) or, locally, a path relative to the template; YAML or JSON; merged into the parent
mapping; snippets can't use AWS::Include or YAML short-form tags."""

from __future__ import annotations

import pytest

from formwright.macros import MacroError, MacroRegistry, expand
from tests.macros.conftest import template

SNIPPET_YAML = "WaitHandle:\n  Type: AWS::CloudFormation::WaitConditionHandle\n"
SNIPPET_JSON = '{"Topic": {"Type": "AWS::SNS::Topic"}}'


def include(location: str) -> dict:
    return template(f"""
        Resources:
          Bucket: {{Type: AWS::S3::Bucket}}
          Fn::Transform:
            Name: AWS::Include
            Parameters: {{Location: "{location}"}}
    """, file="main.yaml")


@pytest.mark.parametrize(
    "name,text,key", [("s.yaml", SNIPPET_YAML, "WaitHandle"), ("s.json", SNIPPET_JSON, "Topic")]
)
def test_local_snippet_merged_into_the_parent(tmp_path, name, text, key):
    (tmp_path / name).write_text(text)
    out = expand(include(name), registry=MacroRegistry.build(), base_dir=tmp_path)
    assert set(out["Resources"]) == {"Bucket", key}


@pytest.mark.cloud
def test_s3_snippet_from_the_target(cloud):
    s3 = cloud.client("s3")
    s3.create_bucket(Bucket="snippets")
    s3.put_object(Bucket="snippets", Key="wait.yaml", Body=SNIPPET_YAML.encode())
    out = expand(include("s3://snippets/wait.yaml"), registry=MacroRegistry.build(), s3_client=s3)
    assert out["Resources"]["WaitHandle"] == {"Type": "AWS::CloudFormation::WaitConditionHandle"}


@pytest.mark.cloud
def test_s3_snippet_missing(cloud):
    s3 = cloud.client("s3")
    s3.create_bucket(Bucket="snippets")
    with pytest.raises(MacroError) as info:
        expand(include("s3://snippets/none.yaml"), registry=MacroRegistry.build(), s3_client=s3)
    assert (
        info.value.message
        == "Transform AWS::Include failed with: could not read s3://snippets/none.yaml (NoSuchKey)"
    )
    assert (info.value.file, info.value.line) == ("main.yaml", 5)


def test_top_level_include(tmp_path):
    (tmp_path / "s.yaml").write_text("Outputs: {O: {Value: v}}\n")
    doc = template("Transform: {Name: AWS::Include, Parameters: {Location: s.yaml}}\nResources: {}\n")
    out = expand(doc, registry=MacroRegistry.build(), base_dir=tmp_path)
    assert out == {"Resources": {}, "Outputs": {"O": {"Value": "v"}}}


@pytest.mark.parametrize("text,message", [
    ("A: !Ref B\n", "short-form tag !Ref"),
    ("A:\n  Fn::Transform: {Name: AWS::Include, Parameters: {Location: x.yaml}}\n", "can't include another"),
    ("- a\n- b\n", "must be a key-value object"),
    ("A: [unclosed\n", "not valid YAML or JSON"),
])
def test_rejected_snippets(tmp_path, text, message):
    (tmp_path / "s.yaml").write_text(text)
    with pytest.raises(MacroError) as info:
        expand(include("s.yaml"), registry=MacroRegistry.build(), base_dir=tmp_path)
    assert info.value.message.startswith("Transform AWS::Include failed with: ")
    assert message in info.value.message and info.value.line == 5


@pytest.mark.parametrize("location,message", [
    ("missing.yaml", "could not read missing.yaml"),
    ("https://example.com/x.yaml", "is not an S3 URI"),
    ("s3://bucket/key.yaml", "no S3 client"),
])
def test_bad_locations(tmp_path, location, message):
    with pytest.raises(MacroError, match=message):
        expand(include(location), registry=MacroRegistry.build(), base_dir=tmp_path)


def test_missing_location():
    doc = template("Resources:\n  Fn::Transform: {Name: AWS::Include}\n")
    with pytest.raises(MacroError, match="Location parameter is missing"):
        expand(doc, registry=MacroRegistry.build())


def test_location_from_a_template_parameter(tmp_path):
    # Issue #12 item 4, from AWS's AWS::Include documentation (`Location: !Ref InputValue`): a Ref to a
    # template parameter in a transform's Parameters reaches the macro as the parameter's value.
    (tmp_path / "s.yaml").write_text(SNIPPET_YAML)
    doc = template("""
        Parameters:
          InputValue: {Type: String, Default: nothere.yaml}
        Resources:
          Bucket: {Type: AWS::S3::Bucket}
          Fn::Transform:
            Name: AWS::Include
            Parameters: {Location: {Ref: InputValue}}
    """, file="main.yaml")
    out = expand(doc, registry=MacroRegistry.build(), base_dir=tmp_path,
                 parameter_values={"InputValue": "s.yaml"})
    assert set(out["Resources"]) == {"Bucket", "WaitHandle"}
