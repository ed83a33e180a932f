"""AWS's published example macros (Count, String functions, Explode), re-created under
examples/macros/, run through every way of registering a macro: a Python handler file
(formwright.yaml), an executable (--macros DIR), and a packaged entry point.

The entry point is a fake installed distribution: a `*.dist-info` folder with `entry_points.txt`
in a temporary folder put on sys.path, found by importlib.metadata's ordinary discovery.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from formwright.macros import MacroError, MacroRegistry, expand
from tests.macros.conftest import EXAMPLES, template

MODULES = {"Count": "count", "String": "string_functions", "Explode": "explode"}


@pytest.fixture
def fake_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    dist = tmp_path / "site" / "example_macros-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: example-macros\nVersion: 1.0\n")
    lines = "\n".join(f"{name} = {module}:handler" for name, module in MODULES.items())
    (dist / "entry_points.txt").write_text(f"[formwright.macros]\n{lines}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.syspath_prepend(str(EXAMPLES))
    return dist


@pytest.fixture(params=["python", "executable", "entry-point"])
def registry(request) -> MacroRegistry:
    if request.param == "python":
        return MacroRegistry.build(project_macros={name: f"{module}.py" for name, module in MODULES.items()},
                                   base_dir=EXAMPLES)
    if request.param == "executable":
        return MacroRegistry.build(macros_dir=EXAMPLES / "bin")
    request.getfixturevalue("fake_distribution")
    return MacroRegistry.build()


def test_registration_kind(registry):
    kinds = {registry.get(name).kind for name in MODULES}
    assert len(kinds) == 1 and kinds <= {"python", "executable", "entry-point"}


def test_count_copies_a_resource(registry):
    doc = template("""
        Transform: Count
        Resources:
          Bucket:
            Type: AWS::S3::Bucket
            Count: 3
            Properties: {BucketName: data-%d}
          Other: {Type: AWS::SNS::Topic}
    """)
    resources = expand(doc, registry=registry)["Resources"]
    assert sorted(resources) == ["Bucket1", "Bucket2", "Bucket3", "Other"]
    assert resources["Bucket2"] == {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "data-2"}}


def test_count_failure_is_reported(registry):
    doc = template("Transform: Count\nResources:\n  B: {Type: T, Count: many}\n")
    with pytest.raises(MacroError, match="Transform 123456789012::Count failed with: Count of B"):
        expand(doc, registry=registry)


@pytest.mark.parametrize("params,result", [
    ({"InputString": "Hello World", "Operation": "Upper"}, "HELLO WORLD"),
    ({"InputString": "Hello World", "Operation": "Lower"}, "hello world"),
    ({"InputString": "hello world", "Operation": "Title"}, "Hello World"),
    ({"InputString": "a-b-c", "Operation": "Replace", "Old": "-", "New": "_"}, "a_b_c"),
    ({"InputString": "  pad  ", "Operation": "Strip"}, "pad"),
    ({"InputString": "abcdef", "Operation": "MaxLength", "Length": 3}, "abc"),
])
def test_string_functions(registry, params, result):
    doc = {
        "Resources": {
            "B": {
                "Type": "T",
                "Properties": {"Tag": {"Fn::Transform": {"Name": "String", "Parameters": params}}},
            }
        }
    }
    assert expand(doc, registry=registry)["Resources"]["B"]["Properties"]["Tag"] == result


def test_explode_over_a_mapping(registry):
    doc = template("""
        Transform: Explode
        Mappings:
          Buckets:
            Logs: {Name: logs-bucket}
            Data: {Name: data-bucket}
        Resources:
          Bucket:
            Type: AWS::S3::Bucket
            ExplodeMap: Buckets
            Properties: {BucketName: "!Explode Name"}
    """)
    resources = expand(doc, registry=registry)["Resources"]
    assert resources == {
        "BucketLogs": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "logs-bucket"}},
        "BucketData": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "data-bucket"}},
    }


def test_macros_combine_in_one_template(registry):
    doc = template("""
        Transform: [Count]
        Resources:
          Q:
            Type: AWS::SQS::Queue
            Count: 2
            Properties:
              QueueName: {Fn::Transform: {Name: String, Parameters: {InputString: queue, Operation: Upper}}}
    """)
    resources = expand(doc, registry=registry)["Resources"]
    assert resources["Q1"]["Properties"]["QueueName"] == "QUEUE"
    assert "Q2" in resources


def test_entry_point_discovery_finds_the_fake_distribution(fake_distribution):
    registry = MacroRegistry.build()
    assert {"Count", "String", "Explode"} <= set(registry.names())
    assert sys.path[0] == str(EXAMPLES)
