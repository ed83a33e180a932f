"""The Lambda runtime's pure parts, without a cloud: which runtimes run, how CloudFormation hands
properties to a provider, and a bucket's NotificationConfiguration in moto's form."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from formwright.cloud.lambda_runtime import contract, custom_resources, event_sources


@pytest.mark.parametrize(("runtime", "family"), [
    ("python3.9", "python"), ("python3.13", "python"), ("nodejs20.x", "node"), ("nodejs", "node"),
    ("java21", None), ("dotnet8", None), ("go1.x", None), ("provided.al2023", None), ("ruby3.3", None),
    ("python2.7", None), (None, None)])
def test_runtimes_the_local_cloud_runs(runtime, family) -> None:
    assert contract.family(runtime) == family


scalars = st.one_of(st.text(max_size=5), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none())
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)), max_leaves=10)


@given(values)
def test_a_provider_gets_every_scalar_as_a_string_in_the_same_shape(value) -> None:
    # CloudFormation passes ResourceProperties to a custom resource provider with numbers and booleans
    # as strings (booleans "true"/"false")
    def same_shape(given, sent) -> bool:
        if isinstance(given, dict):
            return isinstance(sent, dict) and given.keys() == sent.keys() and all(
                same_shape(given[k], sent[k]) for k in given)
        if isinstance(given, list):
            return isinstance(sent, list) and len(given) == len(sent) and all(map(same_shape, given, sent))
        if given is None:
            return sent is None
        if isinstance(given, bool):
            return sent == ("true" if given else "false")
        return sent == str(given)

    assert same_shape(value, custom_resources.stringified(value))


def test_a_bucket_notification_configuration_in_moto_form() -> None:
    function = "arn:aws:lambda:us-east-1:1:function:f"
    config = {
        "LambdaConfigurations": [{"Event": "s3:ObjectCreated:*", "Function": function,
                                  "Filter": {"S3Key": {"Rules": [{"Name": "Prefix", "Value": "in/"}]}}}],
        "QueueConfigurations": [{"Event": "s3:ObjectRemoved:*", "Queue": "arn:aws:sqs:us-east-1:1:q"}],
        "EventBridgeConfiguration": {"EventBridgeEnabled": True}}
    assert event_sources.moto_notifications(config) == {
        "CloudFunctionConfiguration": [{
            "CloudFunction": function, "Event": ["s3:ObjectCreated:*"],
            "Filter": {"S3Key": {"FilterRule": [{"Name": "prefix", "Value": "in/"}]}}}],
        "QueueConfiguration": [{"Queue": "arn:aws:sqs:us-east-1:1:q", "Event": ["s3:ObjectRemoved:*"]}],
        "EventBridgeConfiguration": {}}
    assert event_sources.moto_notifications(None) == {}


def test_the_timeout_and_exit_documents_are_lambdas() -> None:
    import json

    assert json.loads(contract.timed_out("r-1", 3)) == {
        "errorType": "Sandbox.Timedout",
        "errorMessage": "RequestId: r-1 Error: Task timed out after 3.00 seconds"}
    assert json.loads(contract.exited("r-2", -9))["errorMessage"] == (
        "RequestId: r-2 Error: Runtime exited with error: signal: killed")
    assert json.loads(contract.exited("r-3", 1))["errorType"] == "Runtime.ExitError"
