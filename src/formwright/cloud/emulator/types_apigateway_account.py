"""AWS::ApiGateway::Account as CloudFormation makes it, through moto's API Gateway backend (GetAccount answers
what the stack set). moto has no CloudFormation model of it: a SAM application enabling API Gateway's
CloudWatch logs (serverless-patterns apigw-execution-logs) was refused by name.

AWS::ApiGateway::Account (AWS CloudFormation Template Reference): CloudWatchRoleArn, "Update requires: No
interruption"; Ref and Fn::GetAtt Id "the ID of the resource, such as mysta-accou-01234b567890example"; "When
you delete a stack containing this resource, API Gateway can still assume the provided IAM role": the delete
leaves the account's role as it is.
"""

from __future__ import annotations

from typing import Any

from formwright.cloud.emulator.own import Model, backend, generated_name, register


@register
class Account(Model):
    """AWS::ApiGateway::Account: the account's CloudWatch role (one per account and region)."""

    kind = "AWS::ApiGateway::Account"
    in_place = frozenset({"CloudWatchRoleArn"})
    ref_attributes = frozenset({"Id"})

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.physical_resource_id = generated_name(self.kind, stack_name, self.logical_resource_id)
        self.removed = False
        self.update(props, {"CloudWatchRoleArn"})

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        if "CloudWatchRoleArn" in names:
            backend("apigateway", self.account_id, self.region_name).update_account(
                [{"op": "replace", "path": "/cloudwatchRoleArn", "value": props.get("CloudWatchRoleArn")}])

    def remove(self) -> None:
        self.removed = True  # the account keeps its role (see the module's docstring)

    def read(self) -> dict[str, Any] | None:
        if getattr(self, "removed", False):
            return None
        account = backend("apigateway", self.account_id, self.region_name).get_account()
        return {"CloudWatchRoleArn": account.cloudwatch_role_arn}
