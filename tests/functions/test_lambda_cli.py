"""A Lambda-backed custom resource through the real `formwright` CLI against the local cloud: deploy
runs the provider, its Data feeds a stack output, and `formwright delete` sends it Delete (issue 28)."""

from __future__ import annotations

from pathlib import Path

TEMPLATE = """\
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument: {Version: "2012-10-17", Statement: []}
  Provider:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      Timeout: 30
      Role: !GetAtt Role.Arn
      Code:
        ZipFile: |
          import boto3, cfnresponse
          def handler(event, context):
              name = event["ResourceProperties"]["Name"]
              boto3.client("ssm").put_parameter(Name="/seeded/" + event["RequestType"], Value=name,
                                                Type="String", Overwrite=True)
              data = {"Token": "token-for-" + name}
              cfnresponse.send(event, context, cfnresponse.SUCCESS, data, "seed-" + name)
  Seed:
    Type: Custom::Seed
    Properties:
      ServiceToken: !GetAtt Provider.Arn
      Name: !Ref SeedName
Parameters:
  SeedName: {Type: String}
Outputs:
  Token:
    Value: !GetAtt Seed.Token
  SeedId:
    Value: !Ref Seed
"""


def _project(root: Path, name: str) -> None:
    (root / "app.yaml").write_text(TEMPLATE)
    (root / "formwright.yaml").write_text(
        "name: seeded\nstacks:\n  app:\n    template: app.yaml\n    capabilities: [CAPABILITY_IAM]\n"
        f"    parameters: {{SeedName: {name}}}\n")


def _parameter(cloud, name: str) -> str | None:
    ssm = cloud.client("ssm")
    try:
        return ssm.get_parameter(Name=name)["Parameter"]["Value"]
    except ssm.exceptions.ParameterNotFound:
        return None


def test_a_custom_resource_feeds_an_output_and_is_deleted_with_its_stack(run_cli, cloud, tmp_path) -> None:
    _project(tmp_path, "alpha")
    deployed = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert deployed.code == 0, deployed.err[-2000:]
    assert deployed.json()["outputs"]["app"] == {"Token": "token-for-alpha", "SeedId": "seed-alpha"}
    assert _parameter(cloud, "/seeded/Create") == "alpha"

    _project(tmp_path, "beta")  # a new name: the provider answers another physical id, a replacement
    updated = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert updated.code == 0, updated.err[-2000:]
    assert updated.json()["outputs"]["app"]["Token"] == "token-for-beta"
    assert _parameter(cloud, "/seeded/Update") == "beta"
    assert _parameter(cloud, "/seeded/Delete") == "alpha"  # the replaced one, in the clean-up

    deleted = run_cli("delete", str(tmp_path), "-y")
    assert deleted.code == 0, deleted.err[-2000:]
    assert _parameter(cloud, "/seeded/Delete") == "beta"
    stacks = cloud.client("cloudformation").describe_stacks()["Stacks"]
    assert [s["StackName"] for s in stacks] == []
