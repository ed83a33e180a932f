"""The local cloud's fast path for the hot reads (formwright.cloud.fast_reads) answers what moto's does.

Each read is sent twice to the real local cloud: as the engine sends it (the fast path) and with the
header `x-formwright-path: moto`, which sends it down moto's own routing and serializer. What botocore
parses of the two answers (or of the two errors) must be equal, apart from the request id.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formwright.cloud.fast_reads import ANSWERED_HEADER, BYPASS_HEADER

QUEUE = {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}


@pytest.fixture
def clients(cloud) -> tuple[Any, Any]:
    """(fast, moto's path) CloudFormation clients of one clean local cloud."""
    return clients_of(cloud)


def clients_of(cloud: Any) -> tuple[Any, Any]:
    """(fast, moto's path) CloudFormation clients of the cloud's region."""
    fast, slow = (cloud.core().create_client("cloudformation", region_name=cloud.region,
                                             endpoint_url=cloud.endpoint) for _ in range(2))
    header = BYPASS_HEADER.removeprefix("HTTP_").replace("_", "-").lower()
    slow.meta.events.register("before-sign", lambda request, **_: request.headers.__setitem__(header, "moto"))
    return fast, slow


def parsed(client: Any, operation: str, **kwargs: Any) -> tuple[Any, str | None]:
    """botocore's parse of the answer (the request id left out), or of the error with its HTTP status;
    and the path that answered (`fast`, or None for moto's)."""
    try:
        answer = getattr(client, operation)(**kwargs)
    except client.exceptions.ClientError as err:
        meta = err.response["ResponseMetadata"]
        error = ("error", err.response["Error"], meta["HTTPStatusCode"])
        return error, meta["HTTPHeaders"].get(ANSWERED_HEADER)
    meta = answer.pop("ResponseMetadata")
    return answer, meta["HTTPHeaders"].get(ANSWERED_HEADER)


def same(clients: tuple[Any, Any], operation: str, **kwargs: Any) -> Any:
    """Assert the fast path answered, and alike to moto's path; return the answer."""
    (fast, fast_path), (slow, slow_path) = (parsed(c, operation, **kwargs) for c in clients)
    assert (fast_path, slow_path) == ("fast", None), operation
    assert fast == slow, operation
    return fast


def pages(client: Any) -> list[Any]:
    """Every page of DescribeStacks without a name, NextToken included."""
    found, token = [], None
    while True:
        page = parsed(client, "describe_stacks", **({"NextToken": token} if token else {}))[0]
        found.append(page)
        token = page.get("NextToken")
        if not token:
            return found


def test_every_kind_of_stack_reads_alike_on_both_paths(clients, cloud) -> None:
    fast, _ = clients
    s3 = cloud.client("s3")
    s3.create_bucket(Bucket="templates")
    s3.put_object(Bucket="templates", Key="child.json", Body=json.dumps(
        {**QUEUE, "Outputs": {"U": {"Value": {"Ref": "Q"}}}}).encode())
    full = {"Description": "a <described> & 'quoted' \"stack\" é",
            "Parameters": {"P": {"Type": "String", "Default": "x"},
                           "Secret": {"Type": "String", "NoEcho": True, "Default": "s"}},
            "Resources": {"Q": {"Type": "AWS::SQS::Queue"},
                          "R": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {
                              "Version": "2012-10-17", "Statement": []}}}},
            "Outputs": {"O": {"Value": {"Ref": "P"}, "Description": "out <1>", "Export": {"Name": "exp-1"}},
                        "U": {"Value": {"Ref": "Q"}}}}
    fast.create_stack(StackName="full", TemplateBody=json.dumps(full), Capabilities=["CAPABILITY_IAM"],
                      Tags=[{"Key": "team", "Value": "a&b"}, {"Key": "other", "Value": "x"}],
                      NotificationARNs=["arn:aws:sns:us-east-1:123456789012:topic"], TimeoutInMinutes=5,
                      EnableTerminationProtection=True)
    fast.create_stack(StackName="updated", TemplateBody=json.dumps(QUEUE))
    fast.update_stack(StackName="updated", TemplateBody=json.dumps(QUEUE), Tags=[{"Key": "k", "Value": "v"}])
    fast.detect_stack_drift(StackName="updated")  # its DriftInformation
    failing = {"Resources": {  # the second parameter's name is taken: ROLLBACK_COMPLETE (test_execution)
        "First": {"Type": "AWS::SSM::Parameter",
                  "Properties": {"Name": "/dup", "Type": "String", "Value": "a"}},
        "Second": {"Type": "AWS::SSM::Parameter", "DependsOn": "First",
                   "Properties": {"Name": "/dup", "Type": "String", "Value": "b"}}}}
    fast.create_stack(StackName="failed", TemplateBody=json.dumps(failing))
    review = fast.create_change_set(  # REVIEW_IN_PROGRESS, with a rollback configuration asked for
        StackName="review", ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=json.dumps(QUEUE),
        RollbackConfiguration={"MonitoringTimeInMinutes": 5, "RollbackTriggers": []},
        Parameters=[], Tags=[{"Key": "t", "Value": "1"}])
    nested = {"Resources": {"Child": {"Type": "AWS::CloudFormation::Stack", "Properties": {
        "TemplateURL": "https://s3.amazonaws.com/templates/child.json"}}}}
    fast.create_stack(StackName="parent", TemplateBody=json.dumps(nested))
    fast.create_stack(StackName="gone", TemplateBody=json.dumps(QUEUE))
    gone_id = fast.describe_stacks(StackName="gone")["Stacks"][0]["StackId"]
    fast.delete_stack(StackName="gone")
    update = fast.create_change_set(StackName="updated", ChangeSetName="next", ChangeSetType="UPDATE",
                                    TemplateBody=json.dumps({"Resources": {**QUEUE["Resources"], "Q2": {
                                        "Type": "AWS::SQS::Queue"}}}),
                                    Parameters=[], Tags=[{"Key": "k", "Value": "w"}])

    listed = same(clients, "describe_stacks")
    names = {s["StackName"] for s in listed["Stacks"]}
    assert {"full", "updated", "failed", "review", "parent"} <= names and len(names) >= 6  # the child too
    statuses = {s["StackName"]: s["StackStatus"] for s in listed["Stacks"]}
    assert statuses["failed"] == "ROLLBACK_COMPLETE" and statuses["review"] == "REVIEW_IN_PROGRESS"
    for stack in listed["Stacks"]:
        same(clients, "describe_stacks", StackName=stack["StackName"])
        same(clients, "describe_stacks", StackName=stack["StackId"])
        same(clients, "describe_stack_events", StackName=stack["StackName"])
    deleted = same(clients, "describe_stacks", StackName=gone_id)  # a deleted stack, by its id
    assert deleted["Stacks"][0]["StackStatus"] == "DELETE_COMPLETE"
    same(clients, "describe_stack_events", StackName=gone_id)
    assert "DriftInformation" in same(clients, "describe_stacks", StackName="updated")["Stacks"][0]
    summaries = same(clients, "list_stacks")["StackSummaries"]
    assert any(s["StackStatus"] == "DELETE_COMPLETE" for s in summaries)
    same(clients, "list_stacks", StackStatusFilter=["DELETE_COMPLETE", "ROLLBACK_COMPLETE"])
    for change_set in (review["Id"], update["Id"]):
        same(clients, "describe_change_set", ChangeSetName=change_set)
    same(clients, "describe_change_set", ChangeSetName="next", StackName="updated")
    # what is not there: CloudFormation's (and moto's) 400 ValidationError, and ChangeSetNotFound
    missing = same(clients, "describe_stacks", StackName="missing")
    assert missing == ("error", {"Type": "Sender", "Code": "ValidationError",
                                 "Message": "Stack with id missing does not exist"}, 400)
    assert same(clients, "describe_stack_events", StackName="missing")[0] == "error"
    assert same(clients, "describe_change_set", ChangeSetName="missing")[1]["Code"] == "ChangeSetNotFound"


def test_the_stack_listing_pages_alike_on_both_paths(clients) -> None:
    fast, slow = clients
    for n in range(53):  # moto pages DescribeStacks 50 at a time; the token is the last stack's id
        fast.create_stack(StackName=f"s{n}", TemplateBody=json.dumps(
            {"Resources": {"H": {"Type": "AWS::CloudFormation::WaitConditionHandle"}}}))
    fast_pages = pages(fast)
    assert fast_pages == pages(slow)
    assert [len(p["Stacks"]) for p in fast_pages] == [50, 3]
    assert [s["StackName"] for s in fast.get_paginator("describe_stacks").paginate().build_full_result()[
        "Stacks"]] == [f"s{n}" for n in range(53)]


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12)
KEY = st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,8}", fullmatch=True)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parameters=st.dictionaries(KEY, TEXT, max_size=3), outputs=st.dictionaries(KEY, TEXT, max_size=3),
       tags=st.dictionaries(st.from_regex(r"[a-z][a-z0-9:_.-]{0,10}", fullmatch=True),
                            TEXT.filter(bool), max_size=3),
       description=st.one_of(st.none(), TEXT))
def test_any_stack_reads_alike_on_both_paths(clients, parameters, outputs, tags, description) -> None:
    fast, _ = clients
    template: dict[str, Any] = {
        "Parameters": {k: {"Type": "String"} for k in parameters},
        "Resources": {"H": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
        "Outputs": {k: {"Value": v or "-"} for k, v in outputs.items()}}
    if description is not None:
        template["Description"] = description
    name = f"h{abs(hash((tuple(parameters), tuple(outputs), tuple(tags), description))) % 10**9}"
    given_parameters = [{"ParameterKey": k, "ParameterValue": v} for k, v in parameters.items()]
    with contextlib.suppress(fast.exceptions.AlreadyExistsException):  # an example hypothesis repeats
        fast.create_stack(StackName=name, TemplateBody=json.dumps(template), Parameters=given_parameters,
                          Tags=[{"Key": k, "Value": v} for k, v in tags.items()])
    same(clients, "describe_stacks", StackName=name)
    same(clients, "describe_stack_events", StackName=name)


def test_stacks_of_another_region_and_account_read_alike_on_both_paths(cloud) -> None:
    # the fast path answers from the backend moto would: the region of the request's credential scope, the
    # account of its access key or of moto's `x-moto-account-id` header
    def client(slow: bool) -> Any:
        made = cloud.core().create_client("cloudformation", region_name="eu-west-1",
                                          endpoint_url=cloud.endpoint)
        headers = {"x-moto-account-id": "111111111111"}
        if slow:
            headers[BYPASS_HEADER.removeprefix("HTTP_").replace("_", "-").lower()] = "moto"

        def add(request: Any, **_: Any) -> None:
            for name, value in headers.items():
                request.headers[name] = value

        made.meta.events.register("before-sign", add)
        return made

    fast, slow = client(False), client(True)
    fast.create_stack(StackName="elsewhere", TemplateBody=json.dumps(QUEUE))
    stack = same((fast, slow), "describe_stacks", StackName="elsewhere")["Stacks"][0]
    assert stack["StackId"].startswith("arn:aws:cloudformation:eu-west-1:111111111111:stack/elsewhere/")
    # not in us-east-1 (whose backend moto makes on first use: that first read goes down moto's path)
    home = [parsed(c, "describe_stacks", StackName="elsewhere")[0] for c in clients_of(cloud)]
    assert home[0] == home[1] and home[0][0] == "error"
