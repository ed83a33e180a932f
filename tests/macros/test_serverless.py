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


def test_policy_needing_an_iam_lookup_is_a_clear_error():
    with pytest.raises(MacroError) as info:
        expand(template(FUNCTION.format(policies="MyCustomerPolicy")), registry=MacroRegistry.build())
    assert "needs an IAM look-up" in info.value.message
    assert "MyCustomerPolicy" in info.value.hint and info.value.line == 2


def test_invalid_sam_document():
    doc = template(
        "Transform: AWS::Serverless-2016-10-31\n"
        "Resources:\n  Fn: {Type: AWS::Serverless::Function, Properties: {Runtime: 3}}\n"
    )
    with pytest.raises(MacroError) as info:
        expand(doc, registry=MacroRegistry.build())
    assert info.value.message.startswith("Transform AWS::Serverless-2016-10-31 failed with: ")
