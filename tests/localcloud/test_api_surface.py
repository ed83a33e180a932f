"""The rest of the API surface (issue 9, item 6)."""

from __future__ import annotations

import json


def test_a_comma_delimited_list_is_echoed_as_given(cfn) -> None:
    # DescribeStacks Parameters: ParameterValue is the string given ("Parameters" template section)
    template = {"Parameters": {"Names": {"Type": "CommaDelimitedList"}, "Secret": {"Type": "String",
                                                                                  "NoEcho": True}},
                "Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {
                    "Type": "String", "Value": {"Fn::Select": [1, {"Ref": "Names"}]}}}},
                "Outputs": {"Second": {"Value": {"Fn::Select": [1, {"Ref": "Names"}]}},
                            "All": {"Value": {"Fn::Join": ["+", {"Ref": "Names"}]}}}}
    stack = cfn.deploy("s", template, {"Names": "a,b", "Secret": "x"})
    assert {p["ParameterKey"]: p["ParameterValue"] for p in stack["Parameters"]} == {"Names": "a,b",
                                                                                     "Secret": "****"}
    assert cfn.outputs("s") == {"Second": "b", "All": "a+b"}


def test_events_are_one_per_resource_and_status_newest_first(cfn) -> None:
    # DescribeStackEvents: "Returns all stack related events ... in reverse chronological order"
    cfn.deploy("s", {"Resources": {"A": {"Type": "AWS::SQS::Queue"},
                                   "B": {"Type": "AWS::SQS::Queue", "DependsOn": "A"}}})
    events = [(logical, status) for logical, status, _ in cfn.events("s")]
    assert events == [("s", "CREATE_COMPLETE"), ("B", "CREATE_COMPLETE"), ("B", "CREATE_IN_PROGRESS"),
                      ("A", "CREATE_COMPLETE"), ("A", "CREATE_IN_PROGRESS"), ("s", "CREATE_IN_PROGRESS"),
                      ("s", "REVIEW_IN_PROGRESS")]


def test_list_imports_finds_imports_written_with_join_and_ref(cfn) -> None:
    # ListImports: every stack importing the export, however its name is written
    cfn.deploy("p", {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}},
                     "Outputs": {"O": {"Value": {"Ref": "Q"}, "Export": {"Name": "shared-queue"}}}})
    by_join = {"Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {
        "Type": "String", "Value": {"Fn::ImportValue": {"Fn::Join": ["-", ["shared", "queue"]]}}}}}}
    by_ref = {"Parameters": {"E": {"Type": "String"}},
              "Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {
                  "Type": "String", "Value": {"Fn::ImportValue": {"Ref": "E"}}}}}}
    cfn.deploy("c1", by_join)
    cfn.deploy("c2", by_ref, {"E": "shared-queue"})
    assert cfn.client.list_imports(ExportName="shared-queue")["Imports"] == ["c1", "c2"]


def test_create_stack_and_update_stack_run_as_change_sets(cfn) -> None:
    # CreateStack / UpdateStack follow the same rules as change sets (capabilities, replacement)
    template = {"Parameters": {"N": {"Type": "String"}},
                "Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Ref": "N"}}}},
                "Outputs": {"Url": {"Value": {"Ref": "Q"}}}}
    cfn.client.create_stack(StackName="d", TemplateBody=json.dumps(template),
                            Parameters=[{"ParameterKey": "N", "ParameterValue": "one"}])
    cfn.client.update_stack(StackName="d", TemplateBody=json.dumps(template),
                            Parameters=[{"ParameterKey": "N", "ParameterValue": "two"}])
    assert cfn.stack("d")["StackStatus"] == "UPDATE_COMPLETE"
    assert cfn.outputs("d")["Url"].endswith("/two")
    assert "LastUpdatedTime" in cfn.stack("d")


def test_a_nested_stack_gives_its_outputs_and_id_and_updates_in_place(cfn) -> None:
    # "AWS::CloudFormation::Stack": Ref gives the nested stack id, GetAtt Outputs.NestedStackOutputName
    s3 = cfn.target.client("s3")
    s3.create_bucket(Bucket="templates")
    child = {"Parameters": {"N": {"Type": "String"}},
             "Resources": {"Q": {"Type": "AWS::SQS::Queue",
                                 "Properties": {"VisibilityTimeout": {"Ref": "N"}}}},
             "Outputs": {"Url": {"Value": {"Ref": "Q"}}, "N": {"Value": {"Ref": "N"}}}}
    s3.put_object(Bucket="templates", Key="child.json", Body=json.dumps(child).encode())
    parent = {"Parameters": {"N": {"Type": "String"}},
              "Resources": {"Child": {"Type": "AWS::CloudFormation::Stack", "Properties": {
                  "TemplateURL": "https://s3.amazonaws.com/templates/child.json",
                  "Parameters": {"N": {"Ref": "N"}}}}},
              "Outputs": {"Url": {"Value": {"Fn::GetAtt": ["Child", "Outputs.Url"]}},
                          "N": {"Value": {"Fn::GetAtt": ["Child", "Outputs.N"]}},
                          "Id": {"Value": {"Ref": "Child"}}}}
    assert cfn.deploy("parent", parent, {"N": "30"})["StackStatus"] == "CREATE_COMPLETE"
    out = cfn.outputs("parent")
    assert out["Id"].startswith("arn:aws:cloudformation:") and "/parent-Child-" in out["Id"]
    assert out["Url"].startswith("https://sqs.") and out["N"] == "30"
    # its PhysicalResourceId is the stack id too, as CloudFormation lists a nested stack
    assert cfn.resource("parent", "Child") == out["Id"]
    assert cfn.deploy("parent", parent, {"N": "60"})["StackStatus"] == "UPDATE_COMPLETE"
    assert cfn.outputs("parent") == {**out, "N": "60"}  # same child stack, same queue: updated in place


def test_drift_compares_the_live_resource_with_the_template(cfn) -> None:
    # "Detect unmanaged configuration changes to stacks and resources": IN_SYNC, MODIFIED, DELETED
    template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 30}},
                              "Param": {"Type": "AWS::SSM::Parameter",
                                        "Properties": {"Name": "/p", "Type": "String", "Value": "v"}},
                              "Topic": {"Type": "AWS::SNS::Topic"}}}
    cfn.deploy("s", template)

    def detect() -> tuple[str, dict[str, str]]:
        detection = cfn.client.detect_stack_drift(StackName="s")["StackDriftDetectionId"]
        status = cfn.client.describe_stack_drift_detection_status(StackDriftDetectionId=detection)
        drifts = cfn.client.describe_stack_resource_drifts(StackName="s")["StackResourceDrifts"]
        found = {d["LogicalResourceId"]: d["StackResourceDriftStatus"] for d in drifts}
        return status["StackDriftStatus"], found

    assert detect() == ("IN_SYNC", {"Queue": "IN_SYNC", "Param": "IN_SYNC", "Topic": "IN_SYNC"})
    url = cfn.resource("s", "Queue")
    cfn.target.client("sqs").set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "45"})
    cfn.target.client("ssm").delete_parameter(Name="/p")
    status, found = detect()
    assert (status, found["Queue"], found["Param"]) == ("DRIFTED", "MODIFIED", "DELETED")
    queue = cfn.client.detect_stack_resource_drift(StackName="s", LogicalResourceId="Queue")[
        "StackResourceDrift"]
    assert queue["PropertyDifferences"] == [{"PropertyPath": "/VisibilityTimeout", "ExpectedValue": "30",
                                             "ActualValue": "45", "DifferenceType": "NOT_EQUAL"}]


def test_an_update_without_tags_keeps_the_stack_tags_and_an_empty_list_removes_them(cfn) -> None:
    # UpdateStack, Tags (AWS CloudFormation API Reference): "If you don't specify this parameter,
    # CloudFormation doesn't modify the stack's tags. If you specify an empty value, CloudFormation
    # removes all associated tags." A change set's Tags behave alike.
    template = {"Parameters": {"V": {"Type": "String"}},
                "Resources": {"P": {"Type": "AWS::SSM::Parameter",
                                    "Properties": {"Type": "String", "Value": {"Ref": "V"}}}}}
    body = json.dumps(template)
    cfn.client.create_stack(StackName="t", TemplateBody=body, Tags=[{"Key": "team", "Value": "blue"}],
                            Parameters=[{"ParameterKey": "V", "ParameterValue": "1"}])
    cfn.client.update_stack(StackName="t", TemplateBody=body,
                            Parameters=[{"ParameterKey": "V", "ParameterValue": "2"}])
    assert cfn.stack("t")["Tags"] == [{"Key": "team", "Value": "blue"}]
    change_set = cfn.client.create_change_set(StackName="t", ChangeSetName="c", TemplateBody=body,
                                              Parameters=[{"ParameterKey": "V", "ParameterValue": "3"}])
    cfn.client.execute_change_set(ChangeSetName=change_set["Id"])
    assert cfn.stack("t")["Tags"] == [{"Key": "team", "Value": "blue"}]
    cfn.client.update_stack(StackName="t", TemplateBody=body, Tags=[],
                            Parameters=[{"ParameterKey": "V", "ParameterValue": "4"}])
    assert cfn.stack("t").get("Tags", []) == []


def test_each_resource_shows_its_own_status(cfn) -> None:
    # DescribeStackResources / ListStackResources (API Reference): ResourceStatus is the resource's own
    # ("Current status of the resource"), so an update leaves an untouched resource CREATE_COMPLETE
    template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 30}},
                              "Other": {"Type": "AWS::SQS::Queue"}}}
    cfn.deploy("s", template)
    template["Resources"]["Queue"]["Properties"]["VisibilityTimeout"] = 60
    assert cfn.deploy("s", template)["StackStatus"] == "UPDATE_COMPLETE"
    described = {r["LogicalResourceId"]: r["ResourceStatus"]
                 for r in cfn.client.describe_stack_resources(StackName="s")["StackResources"]}
    listed = {r["LogicalResourceId"]: r["ResourceStatus"]
              for r in cfn.client.list_stack_resources(StackName="s")["StackResourceSummaries"]}
    one = cfn.client.describe_stack_resource(StackName="s", LogicalResourceId="Other")["StackResourceDetail"]
    assert described == listed == {"Queue": "UPDATE_COMPLETE", "Other": "CREATE_COMPLETE"}
    assert one["ResourceStatus"] == "CREATE_COMPLETE"


def test_an_operations_events_carry_its_client_request_token(cfn) -> None:
    # StackEvent ClientRequestToken (API Reference): "All events triggered by a given stack operation are
    # assigned the same client request token" — formwright tells its operation's events by it on AWS
    template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 30}}}}
    cfn.deploy("s", template)
    template["Resources"]["Queue"]["Properties"]["VisibilityTimeout"] = 60
    desc = cfn.change_set("s", template)
    cfn.client.execute_change_set(ChangeSetName=desc["ChangeSetId"], ClientRequestToken="update-1")
    events = cfn.client.describe_stack_events(StackName="s")["StackEvents"]
    tokens = [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ClientRequestToken")) for e in events]
    assert tokens[:4] == [("s", "UPDATE_COMPLETE", "update-1"), ("Queue", "UPDATE_COMPLETE", "update-1"),
                          ("Queue", "UPDATE_IN_PROGRESS", "update-1"),
                          ("s", "UPDATE_IN_PROGRESS", "update-1")]
    assert all(token != "update-1" for _, _, token in tokens[4:])
    cfn.client.delete_stack(StackName=desc["StackId"], ClientRequestToken="delete-1")
    gone = cfn.client.describe_stack_events(StackName=desc["StackId"])["StackEvents"]
    assert (gone[0]["ResourceStatus"], gone[0]["ClientRequestToken"]) == ("DELETE_COMPLETE", "delete-1")


def test_a_deleted_stacks_change_sets_go_with_it(cfn) -> None:
    # a stack's change sets are deleted with it: DescribeChangeSet by ARN is ChangeSetNotFound afterwards (the
    # Flux CloudFormation controller's reconcile loop takes that answer as "no change set", making a new one)
    from botocore.exceptions import ClientError

    template = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}}
    cfn.deploy("s", template)
    template["Resources"]["Queue"]["Properties"] = {"VisibilityTimeout": 60}
    pending = cfn.change_set("s", template)["ChangeSetId"]
    cfn.client.delete_stack(StackName="s")
    try:
        cfn.client.describe_change_set(ChangeSetName=pending)
    except ClientError as err:
        assert err.response["Error"]["Code"] == "ChangeSetNotFound"
    else:
        raise AssertionError("the deleted stack's change set is still described")
