"""AWS::Serverless-2016-10-31 through the real aws-sam-translator, offline."""

from __future__ import annotations

import pytest

from formwright.macros import MacroError, MacroRegistry, expand
from tests.macros.conftest import template

FUNCTION = """
Transform: AWS::Serverless-2016-10-31
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      InlineCode: "def handler(e, c): pass"
      Policies: [{policies}]
"""


@pytest.mark.parametrize("region,partition", [("eu-west-1", "aws"), ("cn-north-1", "aws-cn")])
def test_translates_with_the_targets_region_and_bundled_policies(region, partition):
    out = expand(template(FUNCTION.format(policies="AmazonS3ReadOnlyAccess")), registry=MacroRegistry.build(),
                 region=region)
    role = out["Resources"]["FnRole"]["Properties"]
    assert f"arn:{partition}:iam::aws:policy/AmazonS3ReadOnlyAccess" in role["ManagedPolicyArns"]
    assert "Transform" not in out


def test_policy_name_not_in_the_bundled_map_is_kept_as_given():
    # SAM's translator test managed_policies_minimal: with a policy loader that knows no more than the
    # bundled map, the name stays as written (this test used to expect a refusal).
    out = expand(template(FUNCTION.format(policies="MyCustomerPolicy")), registry=MacroRegistry.build())
    assert "MyCustomerPolicy" in out["Resources"]["FnRole"]["Properties"]["ManagedPolicyArns"]


API = """
Transform: AWS::Serverless-2016-10-31
Resources:
  Api:
    Type: AWS::Serverless::Api
    Properties:
      StageName: prod
      DefinitionBody: {swagger: "2.0", info: {title: t}, paths: {/a: {get: {}}}}
"""


def test_api_deployment_logical_id_is_sams_py27_hash(monkeypatch):
    # samtranslator's transform() marks the template for py27hash before translating: the deployment's
    # logical id is a hash of the API body that must equal CloudFormation's. Without the marking the id
    # differs (SAM's own translator outputs, e.g. api_with_access_log_setting, were 10 such failures).
    from samtranslator.translator.managed_policy_translator import ManagedPolicyLoader
    from samtranslator.translator.transform import transform

    class Offline(ManagedPolicyLoader):
        def __init__(self) -> None:
            pass

        def load(self) -> dict:
            return {}

    out = expand(template(API), registry=MacroRegistry.build(), region="us-east-1")
    deployments = [k for k, v in out["Resources"].items() if v["Type"] == "AWS::ApiGateway::Deployment"]
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")  # transform() asks boto3 for the region
    reference = transform(template(API), {}, Offline())
    expected = [k for k, v in reference["Resources"].items() if v["Type"] == "AWS::ApiGateway::Deployment"]
    assert deployments == expected and len(deployments) == 1


def test_invalid_sam_document():
    doc = template(
        "Transform: AWS::Serverless-2016-10-31\n"
        "Resources:\n  Fn: {Type: AWS::Serverless::Function, Properties: {Runtime: 3}}\n"
    )
    with pytest.raises(MacroError) as info:
        expand(doc, registry=MacroRegistry.build())
    assert info.value.message.startswith("Transform AWS::Serverless-2016-10-31 failed with: ")


HTTP_API_CORS = """
Transform: AWS::Serverless-2016-10-31
Parameters:
  Age: {Type: Number, Default: 600}
  Origins: {Type: CommaDelimitedList, Default: "https://a.example, https://b.example"}
Resources:
  Api:
    Type: AWS::Serverless::HttpApi
    Properties:
      CorsConfiguration: {MaxAge: !Ref Age, AllowOrigins: !Ref Origins}
"""


def test_defaults_reach_the_translator_as_written():
    # The translator resolves Refs inside an HttpApi's CorsConfiguration and reads a parameter's
    # Default from the template as written (samtranslator SamParameterValues.add_default_parameter_values):
    # a Number default stays a number, a list default keeps its spacing (SAM's translator tests).
    out = expand(template(HTTP_API_CORS), registry=MacroRegistry.build(), region="ap-southeast-1")
    cors = out["Resources"]["Api"]["Properties"]["Body"]["x-amazon-apigateway-cors"]
    assert cors == {"maxAge": 600, "allowOrigins": "https://a.example, https://b.example"}


def test_given_values_override_the_defaults():
    out = expand(template(HTTP_API_CORS), registry=MacroRegistry.build(), region="ap-southeast-1",
                 parameter_values={"Age": "30"})
    assert out["Resources"]["Api"]["Properties"]["Body"]["x-amazon-apigateway-cors"]["maxAge"] == "30"


# The function above, with a failure destination whose ARN names the account.
ACCOUNT_IN_SUB = FUNCTION.format(policies="") + """\
      EventInvokeConfig:
        DestinationConfig:
          OnFailure:
            Type: SQS
            Destination: !Sub "arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:failures"
"""


def test_account_id_is_left_for_cloudformation():
    # The translator resolves the pseudo parameters it knows inside EventInvokeConfig; SAM's transform()
    # adds only AWS::Region and AWS::Partition (its translator tests pass no account id), so
    # `${AWS::AccountId}` stays in the Fn::Sub for CloudFormation.
    out = expand(template(ACCOUNT_IN_SUB), registry=MacroRegistry.build(), region="eu-west-1")
    config = out["Resources"]["FnEventInvokeConfig"]["Properties"]["DestinationConfig"]
    expected = "arn:aws:sqs:eu-west-1:${AWS::AccountId}:failures"
    assert config["OnFailure"]["Destination"] == {"Fn::Sub": expected}
