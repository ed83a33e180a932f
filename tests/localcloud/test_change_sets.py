"""Change sets as CloudFormation computes them (issue 9, item 1)."""

from __future__ import annotations

from tests.localcloud.conftest import changes

QUEUE = {
    "Parameters": {"Prefix": {"Type": "String"}},
    "Resources": {
        "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Fn::Sub": "${Prefix}-queue"}}},
        "Param": {"Type": "AWS::SSM::Parameter",
                  "Properties": {"Type": "String", "Value": {"Fn::GetAtt": ["Queue", "Arn"]}}},
    },
    "Outputs": {"Url": {"Value": {"Ref": "Queue"}}, "Prefix": {"Value": {"Ref": "Prefix"}}},
}


def test_a_parameter_only_change_replaces_a_create_only_property(cfn) -> None:
    # "Update behaviors of stack resources" + AWS::SQS::Queue QueueName "Update requires: Replacement".
    # The details of a change made through a parameter are those of "Example change sets" ("Modifying an
    # input parameter value"): a Dynamic DirectModification and a Static ParameterReference whose
    # CausingEntity is the parameter; PolicyAction ReplaceAndDelete (ResourceChange, API Reference).
    cfn.deploy("s", QUEUE, {"Prefix": "alpha"})
    old_url = cfn.outputs("s")["Url"]
    desc = cfn.change_set("s", QUEUE, {"Prefix": "beta"})
    queue = changes(desc)["Queue"]
    assert (queue["Action"], queue["Replacement"], queue["Scope"]) == ("Modify", "True", ["Properties"])
    assert (queue["PhysicalResourceId"], queue["PolicyAction"]) == (old_url, "ReplaceAndDelete")
    target = {"Attribute": "Properties", "Name": "QueueName", "RequiresRecreation": "Always"}
    assert queue["Details"] == [
        {"Target": target, "Evaluation": "Dynamic", "ChangeSource": "DirectModification"},
        {"Target": target, "Evaluation": "Static", "ChangeSource": "ParameterReference",
         "CausingEntity": "Prefix"}]
    # the parameter that refers to the queue's Arn changes too, dynamically ("Example change sets")
    param = changes(desc)["Param"]
    assert (param["Replacement"], param["Details"]) == ("False", [{
        "Target": {"Attribute": "Properties", "Name": "Value", "RequiresRecreation": "Never"},
        "Evaluation": "Dynamic", "ChangeSource": "ResourceAttribute", "CausingEntity": "Queue.Arn"}])
    assert "PolicyAction" not in param
    cfn.client.execute_change_set(ChangeSetName=desc["ChangeSetId"])
    assert cfn.stack("s")["StackStatus"] == "UPDATE_COMPLETE"
    assert cfn.outputs("s") == {"Url": old_url.replace("alpha", "beta"), "Prefix": "beta"}
    urls = cfn.target.client("sqs").list_queues().get("QueueUrls", [])
    assert [u.rsplit("/", 1)[1] for u in urls] == ["beta-queue"]  # the old queue went in the clean-up


def test_parameters_read_through_mappings_conditions_and_split_are_the_causing_entities(cfn) -> None:
    # "Example change sets": a change through a parameter names it as CausingEntity; here the parameters
    # reach the properties through Fn::FindInMap, a Condition's Fn::If and Fn::Split/Fn::Select
    template = {
        "Parameters": {"Size": {"Type": "String"}, "Slow": {"Type": "String"}, "Pair": {"Type": "String"}},
        "Mappings": {"Sizes": {"small": {"Delay": 0}, "big": {"Delay": 5}}},
        "Conditions": {"IsSlow": {"Fn::Equals": [{"Ref": "Slow"}, "yes"]}},
        "Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {
            "DelaySeconds": {"Fn::FindInMap": ["Sizes", {"Ref": "Size"}, "Delay"]},
            "VisibilityTimeout": {"Fn::If": ["IsSlow", 600, 30]},
            "MessageRetentionPeriod": {"Fn::Select": [1, {"Fn::Split": [",", {"Ref": "Pair"}]}]}}}},
    }
    cfn.deploy("s", template, {"Size": "small", "Slow": "no", "Pair": "60,3600"})
    desc = cfn.change_set("s", template, {"Size": "big", "Slow": "yes", "Pair": "60,7200"})
    queue = changes(desc)["Queue"]
    causes = {(d["Target"]["Name"], d["Evaluation"], d["ChangeSource"], d.get("CausingEntity"))
              for d in queue["Details"]}
    assert causes == {
        ("DelaySeconds", "Dynamic", "DirectModification", None),
        ("DelaySeconds", "Static", "ParameterReference", "Size"),
        ("VisibilityTimeout", "Dynamic", "DirectModification", None),
        ("VisibilityTimeout", "Static", "ParameterReference", "Slow"),
        ("MessageRetentionPeriod", "Dynamic", "DirectModification", None),
        ("MessageRetentionPeriod", "Static", "ParameterReference", "Pair")}
    assert queue["Replacement"] == "False"
    cfn.client.execute_change_set(ChangeSetName=desc["ChangeSetId"])
    attrs = cfn.target.client("sqs").get_queue_attributes(QueueUrl=cfn.resource("s", "Queue"),
                                                          AttributeNames=["All"])["Attributes"]
    assert (attrs["DelaySeconds"], attrs["VisibilityTimeout"], attrs["MessageRetentionPeriod"]) == (
        "5", "600", "7200")


def test_a_template_edit_is_a_direct_modification(cfn) -> None:
    # "Example change sets" ("Directly editing a template"): one Static DirectModification, no cause
    cfn.deploy("s", QUEUE, {"Prefix": "alpha"})
    edited = {**QUEUE, "Resources": {**QUEUE["Resources"], "Queue": {
        "Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Fn::Sub": "${Prefix}-other"}}}}}
    queue = changes(cfn.change_set("s", edited, {"Prefix": "alpha"}))["Queue"]
    assert queue["Details"] == [{"Target": {"Attribute": "Properties", "Name": "QueueName",
                                            "RequiresRecreation": "Always"},
                                 "Evaluation": "Static", "ChangeSource": "DirectModification"}]


def test_a_reference_to_a_replaced_resource_in_a_create_only_property_is_conditional(cfn) -> None:
    # ResourceChange Replacement (API Reference): "If the RequiresRecreation field is Always and the
    # Evaluation field is Dynamic, Replacement is Conditional"; RequiresRecreation is the property's own
    # update behaviour (ResourceTargetDefinition), Always for the create-only SSM Parameter Name
    template = {
        "Parameters": {"Name": {"Type": "String"}},
        "Resources": {
            "Topic": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": {"Ref": "Name"}}},
            "Alias": {"Type": "AWS::SSM::Parameter",
                      "Properties": {"Type": "String", "Name": {"Fn::Sub": "/x/${Topic.TopicName}"},
                                     "Value": "v"}},
        },
    }
    cfn.deploy("s", template, {"Name": "one"})
    found = changes(cfn.change_set("s", template, {"Name": "two"}))
    assert found["Topic"]["Replacement"] == "True"
    assert found["Alias"]["Replacement"] == "Conditional"
    assert "PolicyAction" not in found["Alias"]
    assert found["Alias"]["Details"] == [{
        "Target": {"Attribute": "Properties", "Name": "Name", "RequiresRecreation": "Always"},
        "Evaluation": "Dynamic", "ChangeSource": "ResourceAttribute", "CausingEntity": "Topic.TopicName"}]


def test_a_policy_only_change_is_a_modify_of_that_attribute(cfn) -> None:
    # ResourceTargetDefinition Attribute (API Reference) lists DeletionPolicy and UpdateReplacePolicy;
    # aws-cloudformation/cloudformation-coverage-roadmap#1543: a policy-only edit must be applied, not
    # be "no changes". A later removal then follows the new policy: PolicyAction Retain, DELETE_SKIPPED.
    template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}, "Other": {"Type": "AWS::SQS::Queue"}}}
    cfn.deploy("s", template)
    kept = {"Resources": {**template["Resources"], "Queue": {"Type": "AWS::SQS::Queue",
                                                             "DeletionPolicy": "Retain"}}}
    desc = cfn.change_set("s", kept)
    queue = changes(desc)["Queue"]
    assert (desc["Status"], queue["Action"], queue["Replacement"], queue["Scope"]) == (
        "CREATE_COMPLETE", "Modify", "False", ["DeletionPolicy"])
    assert queue["Details"] == [{"Target": {"Attribute": "DeletionPolicy", "RequiresRecreation": "Never"},
                                 "Evaluation": "Static", "ChangeSource": "DirectModification"}]
    cfn.client.execute_change_set(ChangeSetName=desc["ChangeSetId"])
    name = cfn.resource("s", "Queue").rsplit("/", 1)[1]
    gone = cfn.change_set("s", {"Resources": {"Other": {"Type": "AWS::SQS::Queue"}}})
    assert (changes(gone)["Queue"]["Action"], changes(gone)["Queue"]["PolicyAction"]) == ("Remove", "Retain")
    cfn.client.execute_change_set(ChangeSetName=gone["ChangeSetId"])
    assert ("Queue", "DELETE_SKIPPED", "") in cfn.events("s")
    assert name in [u.rsplit("/", 1)[1] for u in cfn.target.client("sqs").list_queues()["QueueUrls"]]


def test_a_condition_toggle_adds_and_removes_the_resource(cfn) -> None:
    # "Conditions" section of the template reference: a false condition means the resource does not exist
    template = {
        "Parameters": {"Extra": {"Type": "String", "AllowedValues": ["yes", "no"]}},
        "Conditions": {"WithExtra": {"Fn::Equals": [{"Ref": "Extra"}, "yes"]}},
        "Resources": {"Main": {"Type": "AWS::SQS::Queue"},
                      "Extra": {"Type": "AWS::SQS::Queue", "Condition": "WithExtra"}},
    }
    cfn.deploy("s", template, {"Extra": "no"})
    on = changes(cfn.change_set("s", template, {"Extra": "yes"}))
    assert {k: v["Action"] for k, v in on.items()} == {"Extra": "Add"}
    cfn.deploy("s", template, {"Extra": "yes"})
    off = changes(cfn.change_set("s", template, {"Extra": "no"}))
    assert {k: v["Action"] for k, v in off.items()} == {"Extra": "Remove"}


def test_an_unchanged_stack_gives_a_failed_change_set_without_changes(cfn) -> None:
    # "Update stacks using change sets": "The submitted information didn't contain changes."
    cfn.deploy("s", QUEUE, {"Prefix": "a"})
    desc = cfn.change_set("s", QUEUE, {"Prefix": "a"})
    assert desc["Status"] == "FAILED"
    assert "didn't contain changes" in desc["StatusReason"]
    more = {**QUEUE, "Resources": {**QUEUE["Resources"], "Other": {"Type": "AWS::SQS::Queue"}}}
    assert {k: v["Action"] for k, v in changes(cfn.change_set("s", more, {"Prefix": "a"})).items()} == {
        "Other": "Add"}


def test_a_property_that_does_not_replace_is_modify_false(cfn) -> None:
    # AWS::SQS::Queue VisibilityTimeout "Update requires: No interruption"
    template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 30}}}}
    cfn.deploy("s", template)
    template["Resources"]["Queue"]["Properties"]["VisibilityTimeout"] = 60
    desc = cfn.change_set("s", template)
    assert changes(desc)["Queue"]["Replacement"] == "False"
    cfn.client.execute_change_set(ChangeSetName=desc["ChangeSetId"])
    url = cfn.resource("s", "Queue")
    attrs = cfn.target.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
    assert attrs["Attributes"]["VisibilityTimeout"] == "60"


def test_a_nested_create_only_path_decides_replacement(cfn) -> None:
    # AWS::ECR::Repository: /properties/EncryptionConfiguration/EncryptionType is create-only,
    # ImageTagMutability is not (resource provider schema, as cfn-lint ships it)
    template = {"Resources": {"Repo": {"Type": "AWS::ECR::Repository", "Properties": {
        "RepositoryName": "repo", "ImageTagMutability": "MUTABLE",
        "EncryptionConfiguration": {"EncryptionType": "AES256"}}}}}
    cfn.deploy("s", template)
    template["Resources"]["Repo"]["Properties"]["ImageTagMutability"] = "IMMUTABLE"
    assert changes(cfn.change_set("s", template))["Repo"]["Replacement"] == "False"
    template["Resources"]["Repo"]["Properties"]["EncryptionConfiguration"]["EncryptionType"] = "KMS"
    assert changes(cfn.change_set("s", template))["Repo"]["Replacement"] == "True"


def test_a_tag_only_change_is_an_executable_change_set(cfn) -> None:
    # "Resource tag" property reference; DynamoDB Tags "Update requires: No interruption"
    template = {"Resources": {"Table": {"Type": "AWS::DynamoDB::Table", "Properties": {
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}}},
        "Outputs": {"Arn": {"Value": {"Fn::GetAtt": ["Table", "Arn"]}}}}
    cfn.deploy("s", template)
    template["Resources"]["Table"]["Properties"]["Tags"] = [{"Key": "team", "Value": "blue"}]
    desc = cfn.change_set("s", template)
    table = changes(desc)["Table"]
    assert (desc["Status"], table["Replacement"], table["Scope"]) == ("CREATE_COMPLETE", "False", ["Tags"])
    cfn.client.execute_change_set(ChangeSetName=desc["ChangeSetId"])
    assert cfn.stack("s")["StackStatus"] == "UPDATE_COMPLETE"
    arn = cfn.outputs("s")["Arn"]
    tags = cfn.target.client("dynamodb").list_tags_of_resource(ResourceArn=arn)["Tags"]
    assert {"Key": "team", "Value": "blue"} in tags
    assert cfn.change_set("s", template)["Status"] == "FAILED"  # applied: nothing left to change


def test_an_outputs_only_change_is_an_executable_change_set_with_no_resource_changes(cfn) -> None:
    # aws/aws-cdk#2029: "If only stack Outputs are changed, CloudFormation generates a ChangeSet that is
    # executable but has 0 changes" (executing it updates the outputs; the CDK relies on it to add an
    # export a downstream stack takes). "Outputs" template section, AWS CloudFormation User Guide.
    template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}},
                "Outputs": {"Url": {"Value": {"Ref": "Queue"}}}}
    cfn.deploy("s", template)
    url = cfn.outputs("s")["Url"]
    changed = {**template, "Outputs": {"Url": {"Value": {"Ref": "Queue"}, "Export": {"Name": "s-url"}},
                                       "Arn": {"Value": {"Fn::GetAtt": ["Queue", "Arn"]}}}}
    desc = cfn.change_set("s", changed)
    assert (desc["Status"], desc["ExecutionStatus"], desc["Changes"]) == ("CREATE_COMPLETE", "AVAILABLE", [])
    cfn.client.execute_change_set(ChangeSetName=desc["ChangeSetId"])
    stack = cfn.stack("s")
    assert stack["StackStatus"] == "UPDATE_COMPLETE"
    assert cfn.outputs("s") == {"Url": url, "Arn": cfn.target.client("sqs").get_queue_attributes(
        QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]}
    assert cfn.resource("s", "Queue") == url  # the queue was left alone
    exports = {e["Name"]: e["Value"] for e in cfn.client.list_exports()["Exports"]}
    assert exports["s-url"] == url
    # and the same template again is no change at all
    again = cfn.change_set("s", changed)
    assert again["Status"] == "FAILED" and "didn't contain changes" in again["StatusReason"]
