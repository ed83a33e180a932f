"""What CloudFormation refuses, the local cloud refuses with CloudFormation's texts (issue 9, items 4, 5)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from tests.localcloud.conftest import changes

ROLE = {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {
    "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"},
                                            "Action": "sts:AssumeRole"}]}}}


def _error(call) -> tuple[str, str]:
    with pytest.raises(ClientError) as caught:
        call()
    return caught.value.response["Error"]["Code"], caught.value.response["Error"]["Message"]


def test_iam_resources_need_capabilities(cfn) -> None:
    # "Acknowledging IAM resources in CloudFormation templates" (CreateChangeSet Capabilities)
    code, message = _error(lambda: cfn.change_set("s", {"Resources": {"Role": ROLE}}))
    assert (code, message) == ("InsufficientCapabilitiesException",
                               "Requires capabilities : [CAPABILITY_IAM]")
    named = {"Resources": {"Role": {**ROLE, "Properties": {**ROLE["Properties"], "RoleName": "r"}}}}
    code, message = _error(lambda: cfn.change_set("s", named, caps=["CAPABILITY_IAM"]))
    assert message == "Requires capabilities : [CAPABILITY_NAMED_IAM]"
    assert cfn.change_set("s", named, caps=["CAPABILITY_NAMED_IAM"])["Status"] == "CREATE_COMPLETE"


def test_a_transform_needs_auto_expand_only_on_create_stack_and_is_refused_as_it_cannot_run(cfn) -> None:
    # CreateChangeSet, Capabilities (API Reference): CAPABILITY_AUTO_EXPAND "doesn't apply to creating
    # change sets"; CreateStack without it: "Requires capabilities : [CAPABILITY_AUTO_EXPAND]". moto runs
    # no macros, so a template still holding a Transform is refused by the local cloud, saying so
    import json

    template = {"Transform": "AWS::Serverless-2016-10-31", "Resources": {"Fn": {
        "Type": "AWS::Serverless::Function", "Properties": {"Runtime": "python3.12", "Handler": "i.h",
                                                            "InlineCode": "def h(e, c): pass"}}}}
    code, message = _error(lambda: cfn.client.create_stack(StackName="s", TemplateBody=json.dumps(template)))
    assert (code, message) == ("InsufficientCapabilitiesException",
                               "Requires capabilities : [CAPABILITY_AUTO_EXPAND]")
    code, message = _error(lambda: cfn.change_set("s", template))
    assert code == "ValidationError"
    assert message.startswith("The local cloud cannot process Transform [AWS::Serverless-2016-10-31]")
    assert not cfn.exists("s")


def test_parameter_constraints_are_enforced(cfn) -> None:
    # "Parameters" template section: AllowedValues, AllowedPattern, MinLength/MaxLength, MinValue/MaxValue
    template = {"Parameters": {"Env": {"Type": "String", "AllowedValues": ["dev", "prod"]},
                               "Size": {"Type": "Number", "MinValue": 1, "MaxValue": 5, "Default": 2},
                               "Code": {"Type": "String", "AllowedPattern": "[a-z]+", "Default": "abc"}},
                "Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}}
    assert _error(lambda: cfn.change_set("s", template, {"Env": "test"}))[1] == (
        "Parameter 'Env' must be one of AllowedValues")
    assert _error(lambda: cfn.change_set("s", template, {"Env": "dev", "Size": "9"}))[1] == (
        "Parameter 'Size' must be a number not greater than 5")
    assert _error(lambda: cfn.change_set("s", template, {"Env": "dev", "Code": "A1"}))[1] == (
        "Parameter 'Code' must match pattern [a-z]+")
    assert _error(lambda: cfn.change_set("s", template))[1] == "Parameters: [Env] must have values"
    assert not cfn.exists("s")  # a refused CreateChangeSet leaves no stack behind


def test_a_constraint_description_words_the_refusal(cfn) -> None:
    # "Parameters" template section, ConstraintDescription: shown when a constraint is broken. The API
    # words it "Parameter NAME failed to satisfy constraint: DESCRIPTION", for any constraint (as users
    # quote CreateChangeSet's ValidationError: "Parameter EnvironmentSuffix failed to satisfy constraint:
    # Must be one of: dev, staging, prod")
    template = {"Parameters": {"Suffix": {"Type": "String", "MaxLength": 4, "AllowedPattern": "[a-z]+",
                                          "ConstraintDescription": "Must be 1-4 lower-case letters"}},
                "Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}}
    refusal = "Parameter Suffix failed to satisfy constraint: Must be 1-4 lower-case letters"
    for value in ("toolong", "A1"):
        assert _error(lambda v=value: cfn.change_set("s", template, {"Suffix": v})) == ("ValidationError",
                                                                                       refusal)
    assert cfn.change_set("s", template, {"Suffix": "dev"})["Status"] == "CREATE_COMPLETE"


def test_an_unknown_resource_type_is_a_template_format_error(cfn) -> None:
    # "Troubleshooting CloudFormation": Template format error: Unrecognized resource types
    code, message = _error(lambda: cfn.change_set("s", {"Resources": {"Q": {"Type": "AWS::SQS::Queu"}}}))
    assert (code, message) == ("ValidationError", "Template format error: Unrecognized resource types: "
                                                  "[AWS::SQS::Queu]")


def test_an_unknown_property_fails_the_change_set(cfn) -> None:
    # the resource provider schema of AWS::SQS::Queue has additionalProperties: false
    template = {"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueNam": "x"}}}}
    desc = cfn.change_set("s", template)
    assert desc["Status"] == "FAILED"
    assert "extraneous key [QueueNam]" in desc["StatusReason"]


def test_an_object_where_the_schema_takes_a_string_fails_the_change_set(cfn) -> None:
    # AWS's sample apigateway_lambda_integration.yaml writes `ZipFile: !Rain::Embed handler.py` for rain to
    # inline; sent as it is, CloudFormation's validation answers "#/Code/ZipFile: expected type: String,
    # found: JSONObject" (the local cloud failed inside moto's model, an InternalFailure it called its own)
    template = {"Resources": {"F": {"Type": "AWS::Lambda::Function", "Properties": {
        "Runtime": "python3.12", "Handler": "index.handler", "Role": "arn:aws:iam::123456789012:role/r",
        "Code": {"ZipFile": {"Rain::Embed": "handler.py"}}}}}}
    desc = cfn.change_set("s", template)
    assert desc["Status"] == "FAILED"
    assert desc["StatusReason"] == ("Properties validation failed for resource F with message: "
                                    "#/Code/ZipFile: expected type: String, found: JSONObject")
    # an intrinsic function stands for a value of the right type once resolved
    code = {"Fn::Join": ["", ["def handler(event, context): pass"]]}
    template["Resources"]["F"]["Properties"]["Code"] = {"ZipFile": code}
    assert cfn.change_set("t", template)["Status"] == "CREATE_COMPLETE"


def test_a_missing_required_property_fails_the_change_set(cfn) -> None:
    # the resource provider schema of AWS::SSM::Parameter requires Value and Type; CloudFormation
    # validates the model against it: "#: required key [Value] not found"
    template = {"Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String"}}}}
    desc = cfn.change_set("s", template)
    assert desc["Status"] == "FAILED"
    assert desc["StatusReason"] == ("Properties validation failed for resource P with message: "
                                    "#: required key [Value] not found")


def test_an_undefined_attribute_is_refused(cfn) -> None:
    # "Fn::GetAtt" reference: the attribute must be one the type returns
    template = {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}},
                "Outputs": {"X": {"Value": {"Fn::GetAtt": ["Q", "Nope"]}}}}
    assert _error(lambda: cfn.change_set("s", template))[1] == (
        "Template error: resource Q does not support attribute type Nope in Fn::GetAtt")


EXPORTER = {"Parameters": {"V": {"Type": "String"}},
            "Resources": {"Q": {"Type": "AWS::SQS::Queue"}},
            "Outputs": {"Out": {"Value": {"Ref": "V"},
                                "Export": {"Name": {"Fn::Sub": "${AWS::StackName}-out"}}}}}
IMPORTER = {"Parameters": {"From": {"Type": "String"}},
            "Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {
                "Type": "String", "Value": {"Fn::ImportValue": {"Fn::Sub": "${From}-out"}}}}}}


def test_an_export_in_use_cannot_change_be_removed_or_lose_its_stack(cfn) -> None:
    # "Get exported outputs from a deployed CloudFormation stack": an export in use can't change or go
    cfn.deploy("producer", EXPORTER, {"V": "one"})
    cfn.deploy("consumer", IMPORTER, {"From": "producer"})
    # ListImports finds an import written with Fn::Sub
    assert cfn.client.list_imports(ExportName="producer-out")["Imports"] == ["consumer"]
    cfn.deploy("producer", EXPORTER, {"V": "two"})
    assert cfn.stack("producer")["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    assert ("producer", "UPDATE_ROLLBACK_IN_PROGRESS",
            "Export producer-out cannot be updated as it is in use by consumer") in cfn.events("producer")
    assert cfn.outputs("producer") == {"Out": "one"}
    removed = {**EXPORTER, "Outputs": {}}
    cfn.deploy("producer", removed, {"V": "one"})
    assert cfn.stack("producer")["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    cfn.client.delete_stack(StackName="producer")
    assert cfn.stack("producer")["StackStatus"] == "DELETE_FAILED"
    assert cfn.events("producer")[0][2] == "Export producer-out cannot be deleted as it is in use by consumer"


def test_a_duplicate_export_name_rolls_the_create_back(cfn) -> None:
    # "Outputs" template section: export names must be unique within a region
    cfn.deploy("producer", EXPORTER, {"V": "one"})
    clash = {**EXPORTER, "Outputs": {"Out": {"Value": "x", "Export": {"Name": "producer-out"}}}}
    assert cfn.deploy("other", clash, {"V": "one"})["StackStatus"] == "ROLLBACK_COMPLETE"
    assert any("Export with name producer-out is already exported by stack producer" in reason
               for _, _, reason in cfn.events("other"))
    assert cfn.target.client("sqs").list_queues().get("QueueUrls", []) and len(
        cfn.target.client("sqs").list_queues()["QueueUrls"]) == 1  # the other stack's queue was deleted


def test_termination_protection_refuses_delete_stack(cfn) -> None:
    # "Protect CloudFormation stacks from being deleted"
    cfn.deploy("s", {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}})
    cfn.client.update_termination_protection(StackName="s", EnableTerminationProtection=True)
    code, message = _error(lambda: cfn.client.delete_stack(StackName="s"))
    assert (code, message) == ("ValidationError",
                               "Stack [s] cannot be deleted while TerminationProtection is enabled")
    assert cfn.stack("s")["StackStatus"] == "CREATE_COMPLETE"


def test_what_the_local_cloud_cannot_run_fails_the_change_set_unless_stubbed(cfn) -> None:
    # "AWS::CloudFormation::WaitCondition" / "Custom resources": the local cloud cannot signal or invoke
    template = {"Resources": {"Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
                              "Wait": {"Type": "AWS::CloudFormation::WaitCondition",
                                       "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": "300"}},
                              "Seed": {"Type": "Custom::Seed", "Properties": {"ServiceToken": "arn:x"}}}}
    desc = cfn.change_set("s", template)
    assert desc["Status"] == "FAILED"
    assert desc["StatusReason"].startswith("The local cloud cannot run resource Seed (Custom::Seed)")
    stub = {"formwright:local-cloud:stub": "AWS::CloudFormation::WaitCondition Custom::Seed"}
    stack = cfn.deploy("s", template, tags=stub)
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    assert "formwright:local-cloud:stub" not in {t["Key"] for t in stack.get("Tags", [])}
    assert ("Wait", "CREATE_COMPLETE", "Stubbed by the local cloud (local_cloud.stub): nothing was run") in (
        cfn.events("s"))
    # AWS::CloudFormation::WaitConditionHandle "Return values": Ref gives the (presigned) URL to signal
    handle = cfn.resource("s", "Handle")
    assert handle.startswith("https://cloudformation-waitcondition-us-east-1.s3.amazonaws.com/arn%3Aaws%3A")
    assert handle.endswith("/Handle")


def test_a_creation_policy_fails_the_change_set(cfn) -> None:
    # "CreationPolicy attribute": the resource waits for cfn-signal, which never comes here
    template = {"Resources": {"Q": {"Type": "AWS::SQS::Queue",
                                    "CreationPolicy": {"ResourceSignal": {"Count": 1}}}}}
    desc = cfn.change_set("s", template)
    assert desc["Status"] == "FAILED"
    assert "cfn-signal" in desc["StatusReason"]
    assert changes(desc)["Q"]["Action"] == "Add"


def test_a_stack_policy_denies_the_update(cfn) -> None:
    # "Prevent updates to stack resources": a Deny on Update:* for a logical id fails the update; the
    # reason as stack events show it on AWS, ';' included ("... does not allow [Update:Replace] for
    # resource [LogicalResourceId/VPC];", quoted from a real stack's UPDATE_FAILED event)
    import json

    template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 30}},
                              "Other": {"Type": "AWS::SQS::Queue"}}}
    cfn.deploy("s", template)
    cfn.client.set_stack_policy(StackName="s", StackPolicyBody=json.dumps({"Statement": [
        {"Effect": "Allow", "Action": "Update:*", "Principal": "*", "Resource": "*"},
        {"Effect": "Deny", "Action": "Update:*", "Principal": "*", "Resource": "LogicalResourceId/Queue"}]}))
    template["Resources"]["Queue"]["Properties"]["VisibilityTimeout"] = 60
    assert cfn.deploy("s", template)["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    assert ("Queue", "UPDATE_FAILED", "Action denied by stack policy: Statement [#2] does not allow "
            "[Update:Modify] for resource [LogicalResourceId/Queue];") in cfn.events("s")


def test_a_create_change_set_for_a_stack_that_exists_is_refused(cfn) -> None:
    # AWS: "ValidationError ... Stack [microservices] already exists and cannot be created again with the
    # changeSet [...]" (compose-x/ecs_composex#785); a stack in REVIEW_IN_PROGRESS takes CREATE ones
    template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}}
    cfn.deploy("s", template)
    code, message = _error(lambda: cfn.change_set("s", template, kind="CREATE"))
    assert code == "ValidationError"
    assert message.startswith("Stack [s] already exists and cannot be created again with the changeSet [cs")
    assert cfn.change_set("r", template, kind="CREATE")["Status"] == "CREATE_COMPLETE"  # r: in review
    assert cfn.change_set("r", template, kind="CREATE")["Status"] == "CREATE_COMPLETE"
