"""CloudFormation's rules for importing resources, checked before any call (engine/adopt.py, issue 23).

"Bringing existing resources into CloudFormation management" (AWS CloudFormation User Guide): a resource to
import needs a DeletionPolicy and is named by its type's primary identifier (the provider schema's
`primaryIdentifier`); a type CloudFormation cannot read cannot be imported.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.engine.adopt import check_imports, check_only_imports, identifier_names, parse_pairs, pending
from formwright.engine.stack import Stack
from formwright.errors import InputError
from formwright.model.project import Project, StackConfig

TEMPLATE = {"Resources": {
    "Queue": {"Type": "AWS::SQS::Queue"},
    "Bucket": {"Type": "AWS::S3::Bucket", "DeletionPolicy": "Retain", "Properties": {"BucketName": "b"}},
    "Loose": {"Type": "AWS::S3::Bucket"},
    "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle", "DeletionPolicy": "Retain"},
}}


def stack_importing(imports: dict[str, dict[str, str]]) -> Stack:
    project = Project("p", "/p/formwright.yaml", Path("/p"))
    config = StackConfig("store", project, 3)
    config.imports = imports
    return Stack(config, TEMPLATE, "/p/store.yaml", Path("/p/build"))


def test_identifiers_come_from_the_provider_schema() -> None:
    assert identifier_names("AWS::S3::Bucket") == ["BucketName"]
    assert identifier_names("AWS::SQS::Queue") == ["QueueUrl"]
    assert identifier_names("AWS::CloudFormation::WaitConditionHandle") == []  # no read handler


@pytest.mark.parametrize(("imports", "message"), [
    ({"Loose": {"BucketName": "x"}}, "Loose (AWS::S3::Bucket) to import has no DeletionPolicy"),
    ({"Handle": {"Id": "x"}}, "AWS::CloudFormation::WaitConditionHandle (Handle) does not support import"),
    ({"Bucket": {"Name": "x"}}, "Bucket (AWS::S3::Bucket) is identified by BucketName, not Name"),
    ({"Missing": {"BucketName": "x"}}, "imports Missing, which its template does not declare"),
])
def test_a_rule_broken_by_the_template_is_refused(imports: dict, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_imports(stack_importing(imports), TEMPLATE)


def test_only_resources_not_yet_held_are_imported_and_nothing_else_may_change() -> None:
    stack = stack_importing({"Bucket": {"BucketName": "b"}})
    check_imports(stack, TEMPLATE)
    deployed = {"Resources": {k: v for k, v in TEMPLATE["Resources"].items() if k != "Bucket"}}
    assert pending(stack, deployed) == {"Bucket": {"BucketName": "b"}}
    assert pending(stack, TEMPLATE) == {}
    check_only_imports(stack, TEMPLATE, deployed, {"Bucket": {"BucketName": "b"}})
    changed = {"Resources": {**deployed["Resources"], "Queue": {"Type": "AWS::SQS::Queue",
                                                                "Properties": {"DelaySeconds": 5}}}}
    with pytest.raises(InputError, match="Queue differs from the deployed template"):
        check_only_imports(stack, TEMPLATE, changed, {"Bucket": {"BucketName": "b"}})


def test_command_line_pairs_name_the_one_primary_identifier() -> None:
    assert parse_pairs(["Bucket=fw-imported"], TEMPLATE, "store") == {"Bucket": {"BucketName": "fw-imported"}}
    for bad, message in (("Bucket", "not LogicalId=IDENTIFIER"), ("Nope=x", "declares no resource Nope"),
                         ("Handle=x", "cannot be imported")):
        with pytest.raises(InputError, match=message):
            parse_pairs([bad], TEMPLATE, "store")
