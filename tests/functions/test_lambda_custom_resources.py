"""Lambda-backed custom resources in the local cloud, as CloudFormation runs them ("CloudFormation custom
resource request and response reference", "cfn-response module", AWS CloudFormation User Guide): the
function gets the request object, PUTs its response to the pre-signed ResponseURL the local cloud
serves, and the stack goes on with its Data. Through boto3 (CloudFormation's API) and through the
`formwright` CLI; the provider functions record every request they get in SSM."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.localcloud.conftest import Cfn

# Written inline (Code.ZipFile): CloudFormation adds the cfnresponse module beside index.py
PYTHON_PROVIDER = '''
import json, boto3, cfnresponse

def handler(event, context):
    props = event["ResourceProperties"]
    boto3.client("ssm").put_parameter(Name="/requests/" + event["RequestType"],
                                      Value=json.dumps(event), Type="String", Overwrite=True)
    if props.get("Fail") == "yes" and event["RequestType"] != "Delete":
        cfnresponse.send(event, context, cfnresponse.FAILED, {}, reason="the provider said no")
        return
    if props.get("Raise") == "yes":
        raise RuntimeError("the provider crashed")
    if props.get("Sleep"):
        import time
        time.sleep(int(props["Sleep"]))
    physical = "thing-" + props.get("Generation", "1")
    cfnresponse.send(event, context, cfnresponse.SUCCESS, {"Greeting": "hello " + props["Name"]}, physical)
'''

# nodejs: index.js and the cfn-response module
NODE_PROVIDER = '''
const response = require("cfn-response");
exports.handler = async (event, context) => {
  const length = String(event.ResourceProperties.Name.length);
  await response.send(event, context, response.SUCCESS, {Length: length}, "node-thing");
};
'''


def _template(provider: str, runtime: str, thing: dict, kind: str = "Custom::Greeter",
              outputs: dict | None = None) -> dict:
    return {"Resources": {
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {
            "Version": "2012-10-17", "Statement": []}}},
        "Provider": {"Type": "AWS::Lambda::Function", "Properties": {
            "Runtime": runtime, "Handler": "index.handler", "Timeout": 30,
            "Role": {"Fn::GetAtt": ["Role", "Arn"]}, "Code": {"ZipFile": provider}}},
        "Thing": {"Type": kind, "Properties": {"ServiceToken": {"Fn::GetAtt": ["Provider", "Arn"]},
                                               **thing}}},
        "Outputs": outputs if outputs is not None else {
            "Greeting": {"Value": {"Fn::GetAtt": ["Thing", "Greeting"]}}, "Id": {"Value": {"Ref": "Thing"}}}}


def _request(ssm, kind: str) -> dict | None:
    try:
        return json.loads(ssm.get_parameter(Name=f"/requests/{kind}")["Parameter"]["Value"])
    except ssm.exceptions.ParameterNotFound:
        return None


@pytest.fixture
def cfn(cloud) -> Cfn:
    """A clean local cloud and a CloudFormation client on it."""
    return Cfn(cloud)


def test_create_update_and_delete_reach_the_function_and_data_is_what_getatt_gives(cfn, cloud) -> None:
    ssm = cloud.client("ssm")
    stack = cfn.deploy("greet", _template(PYTHON_PROVIDER, "python3.12", {"Name": "world", "Count": 3}),
                       caps=["CAPABILITY_IAM"])
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    assert cfn.outputs("greet") == {"Greeting": "hello world", "Id": "thing-1"}
    assert cfn.resource("greet", "Thing") == "thing-1"
    create = _request(ssm, "Create")
    assert create["RequestType"] == "Create"
    assert create["StackId"] == stack["StackId"]
    assert create["LogicalResourceId"] == "Thing" and create["ResourceType"] == "Custom::Greeter"
    assert create["ServiceToken"].endswith(":function:" + cfn.resource("greet", "Provider"))
    assert create["RequestId"] and "PhysicalResourceId" not in create
    # every value a string, as CloudFormation sends ResourceProperties
    token = create["ServiceToken"]
    assert create["ResourceProperties"] == {"ServiceToken": token, "Name": "world", "Count": "3"}
    bucket = "/cloudformation-custom-resource-response-useast1/"
    assert create["ResponseURL"].startswith(cloud.endpoint + bucket)
    assert "X-Amz-Signature=" in create["ResponseURL"]

    cfn.deploy("greet", _template(PYTHON_PROVIDER, "python3.12", {"Name": "moon", "Count": 3}),
               caps=["CAPABILITY_IAM"])
    assert cfn.outputs("greet")["Greeting"] == "hello moon"
    update = _request(ssm, "Update")
    assert update["PhysicalResourceId"] == "thing-1"
    assert update["OldResourceProperties"]["Name"] == "world"
    assert update["ResourceProperties"]["Name"] == "moon"
    assert _request(ssm, "Delete") is None

    cfn.client.delete_stack(StackName="greet")
    delete = _request(ssm, "Delete")
    assert delete["PhysicalResourceId"] == "thing-1" and delete["ResourceProperties"]["Name"] == "moon"


def test_a_new_physical_id_on_update_replaces_the_resource_and_deletes_the_old_one(cfn, cloud) -> None:
    ssm = cloud.client("ssm")
    cfn.deploy("gen", _template(PYTHON_PROVIDER, "python3.12", {"Name": "a", "Generation": "1"}),
               caps=["CAPABILITY_IAM"])
    cfn.deploy("gen", _template(PYTHON_PROVIDER, "python3.12", {"Name": "a", "Generation": "2"}),
               caps=["CAPABILITY_IAM"])
    assert cfn.resource("gen", "Thing") == "thing-2"
    # "If the update resulted in a new physical ID, CloudFormation sends a Delete request for the old one"
    assert _request(ssm, "Delete")["PhysicalResourceId"] == "thing-1"


def test_a_replacement_rolled_back_deletes_the_new_one_and_keeps_the_old(cfn, cloud) -> None:
    ssm = cloud.client("ssm")
    cfn.deploy("back", _template(PYTHON_PROVIDER, "python3.12", {"Name": "a", "Generation": "1"}),
               caps=["CAPABILITY_IAM"])
    failing = _template(PYTHON_PROVIDER, "python3.12", {"Name": "a", "Generation": "2"},
                        outputs={"Nothing": {"Value": {"Fn::GetAtt": ["Thing", "Nothing"]}}})
    assert cfn.deploy("back", failing, caps=["CAPABILITY_IAM"])["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    assert _request(ssm, "Delete")["PhysicalResourceId"] == "thing-2"  # the new one, never the old
    assert cfn.resource("back", "Thing") == "thing-1"


def test_a_failed_update_is_rolled_back_with_an_update_to_the_old_properties(cfn, cloud) -> None:
    # CloudFormation's rollback sends the failed resource an Update from the properties it tried back
    # to the deployed ones (aws/aws-cdk#17040)
    ssm = cloud.client("ssm")
    cfn.deploy("upd", _template(PYTHON_PROVIDER, "python3.12", {"Name": "good"}), caps=["CAPABILITY_IAM"])
    failing = _template(PYTHON_PROVIDER, "python3.12", {"Name": "bad", "Fail": "yes"})
    assert cfn.deploy("upd", failing, caps=["CAPABILITY_IAM"])["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    back = _request(ssm, "Update")
    assert back["ResourceProperties"]["Name"] == "good" and "Fail" not in back["ResourceProperties"]
    assert back["OldResourceProperties"]["Name"] == "bad"
    assert back["PhysicalResourceId"] == "thing-1"
    assert cfn.outputs("upd")["Greeting"] == "hello good"


def test_a_node_provider_written_inline_uses_cfn_response(cfn, cloud) -> None:
    template = _template(NODE_PROVIDER, "nodejs20.x", {"Name": "seven"},
                         kind="AWS::CloudFormation::CustomResource",
                         outputs={"Length": {"Value": {"Fn::GetAtt": ["Thing", "Length"]}}})
    assert cfn.deploy("node", template, caps=["CAPABILITY_IAM"])["StackStatus"] == "CREATE_COMPLETE"
    assert cfn.outputs("node") == {"Length": "5"}
    assert cfn.resource("node", "Thing") == "node-thing"


def test_a_failed_response_fails_the_resource_with_its_reason_and_the_rollback_deletes_it(cfn, cloud) -> None:
    stack = cfn.deploy("nope", _template(PYTHON_PROVIDER, "python3.12", {"Name": "x", "Fail": "yes"}),
                       caps=["CAPABILITY_IAM"])
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE"
    reason = next(r for logical, status, r in cfn.events("nope")
                  if (logical, status) == ("Thing", "CREATE_FAILED"))
    assert reason.startswith("Received response status [FAILED] from custom resource. Message returned: "
                             "the provider said no (RequestId: ")
    # the rollback sends Delete with the PhysicalResourceId of the FAILED response (cfnresponse's default:
    # the log stream's name), as CloudFormation does
    delete = _request(cloud.client("ssm"), "Delete")
    assert "/[$LATEST]" in delete["PhysicalResourceId"]
    assert ("Thing", "DELETE_COMPLETE", "") in cfn.events("nope")


def test_a_provider_that_fails_without_answering_fails_the_resource_at_once(cfn) -> None:
    # CloudFormation would wait its ServiceTimeout (an hour) for a response that cannot come
    stack = cfn.deploy("crash", _template(PYTHON_PROVIDER, "python3.12", {"Name": "x", "Raise": "yes"}),
                       caps=["CAPABILITY_IAM"])
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE"
    reason = next(r for logical, status, r in cfn.events("crash") if status == "CREATE_FAILED")
    assert reason.startswith("CloudFormation did not receive a response from your Custom Resource.")
    assert "RuntimeError: the provider crashed" in reason


def test_a_provider_still_running_at_the_service_timeout_fails_the_resource(cfn) -> None:
    # ServiceTimeout: "The maximum time, in seconds, that can elapse before a custom resource operation
    # times out" (the local cloud waits at most FORMWRIGHT_CUSTOM_RESOURCE_TIMEOUT, 120 s by default)
    thing = {"Name": "x", "Sleep": 25, "ServiceTimeout": 2}
    stack = cfn.deploy("slow", _template(PYTHON_PROVIDER, "python3.12", thing), caps=["CAPABILITY_IAM"])
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE"
    reason = next(r for _, status, r in cfn.events("slow") if status == "CREATE_FAILED")
    assert reason.startswith("CloudFormation did not receive a response from your Custom Resource.")
    assert "it waited 2 s" in reason


def test_a_missing_data_key_fails_getatt_as_cloudformation_does(cfn) -> None:
    template = _template(PYTHON_PROVIDER, "python3.12", {"Name": "x"},
                         outputs={"Nothing": {"Value": {"Fn::GetAtt": ["Thing", "Nothing"]}}})
    stack = cfn.deploy("nodata", template, caps=["CAPABILITY_IAM"])
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE"
    reasons = " ".join(r for _, _, r in cfn.events("nodata"))
    assert "Vendor response doesn't contain Nothing key" in reasons


def test_a_provider_in_another_stack_is_reached_through_its_export(cfn, cloud) -> None:
    provider = _template(PYTHON_PROVIDER, "python3.12", {"Name": "unused"}, outputs={
        "Arn": {"Value": {"Fn::GetAtt": ["Provider", "Arn"]}, "Export": {"Name": "greeter-arn"}}})
    del provider["Resources"]["Thing"]
    cfn.deploy("provider", provider, caps=["CAPABILITY_IAM"])
    consumer = {"Resources": {"Thing": {"Type": "Custom::Greeter", "Properties": {
        "ServiceToken": {"Fn::ImportValue": "greeter-arn"}, "Name": "neighbour"}}},
        "Outputs": {"Greeting": {"Value": {"Fn::GetAtt": ["Thing", "Greeting"]}}}}
    assert cfn.deploy("consumer", consumer)["StackStatus"] == "CREATE_COMPLETE"
    assert cfn.outputs("consumer") == {"Greeting": "hello neighbour"}


def test_an_sns_service_token_is_refused_by_name(cfn) -> None:
    template = {"Resources": {"Thing": {"Type": "Custom::Greeter", "Properties": {
        "ServiceToken": "arn:aws:sns:us-east-1:123456789012:provider"}}}}
    desc = cfn.change_set("sns", template)
    assert desc["Status"] == "FAILED"
    assert "Lambda-backed custom resources only, not ServiceToken arn:aws:sns:" in desc["StatusReason"]


def test_the_response_url_takes_only_its_own_signature(cloud) -> None:
    from formwright.cloud.lambda_runtime import custom_resources

    url = custom_resources.response_url("us-east-1", "arn:stack", "Thing", "some-request")
    forged = url.replace(url.rsplit("X-Amz-Signature=", 1)[1], "0" * 64)
    forged = cloud.endpoint + forged[forged.index("/cloudformation-custom-resource-response-"):]
    request = urllib.request.Request(forged, data=b"{}", method="PUT")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403
    assert b"SignatureDoesNotMatch" in refused.value.read()
