"""Targets that cannot be used are refused through the CLI before any write: one line, exit 2, no traceback.

A role that cannot be assumed: moto's STS assumes any role (it evaluates no trust policy), so the local cloud
cannot refuse one. Here STS alone goes through `sts_proxy` (conftest.py), which answers AssumeRole of that
role as real STS answers a caller the role's trust policy does not name, and passes every other call on to
the local cloud. Everything else is real.
"""

from __future__ import annotations

from pathlib import Path

import boto3

SHARED, DEV, PROD = "111111111111", "222222222222", "333333333333"
QUEUE = "Resources:\n  Q: {Type: AWS::SQS::Queue}\nOutputs:\n  Name: {Value: !GetAtt Q.QueueName}\n"
DENIED_ROLE = f"arn:aws:iam::{PROD}:role/deployer"


def live(endpoint: str, account: str, region: str = "us-east-1") -> set[str]:
    """Stack names in `account` (through the local cloud's AssumeRole) and `region`."""
    sts = boto3.client("sts", region_name=region, endpoint_url=endpoint, aws_access_key_id="t",
                       aws_secret_access_key="t")
    role = f"arn:aws:iam::{account}:role/test"
    creds = sts.assume_role(RoleArn=role, RoleSessionName="test")["Credentials"]
    cfn = boto3.client("cloudformation", region_name=region, endpoint_url=endpoint,
                       aws_access_key_id=creds["AccessKeyId"], aws_secret_access_key=creds["SecretAccessKey"],
                       aws_session_token=creds["SessionToken"])
    return {s["StackName"] for s in cfn.describe_stacks()["Stacks"]}


def test_a_role_that_cannot_be_assumed_is_one_line_and_nothing_is_written(tmp_path: Path, run_cli, cloud,
                                                                         sts_proxy) -> None:
    sts_proxy.refuse = DENIED_ROLE
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text(f"""name: denied
region: us-east-1
stacks:
  base: {{template: queue.yaml}}
  app: {{template: queue.yaml, role_arn: "{DENIED_ROLE}", external_id: wrong-id, depends_on: [base]}}
""")
    env = {"AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t", "AWS_ENDPOINT_URL": cloud.endpoint,
           "AWS_ENDPOINT_URL_STS": sts_proxy.endpoint}
    for command in (["deploy", "--yes"], ["plan"], ["status"], ["delete", "--yes"]):
        result = run_cli(command[0], str(tmp_path), *command[1:], "--target", "aws", env=env)
        assert result.code == 2, (command, result.err)
        assert result.err.strip().count("\n") == 0 and "Traceback" not in result.err, result.err
        assert result.err.startswith(f"error: cannot assume role {DENIED_ROLE}: AccessDenied: User: "
                                     "arn:aws:iam::123456789012:user/dev is not authorized"), result.err
        assert "trust policy" in result.err
        assert "CloudFormation's own service role is `service_role`" in result.err
    assert "AssumeRole" in sts_proxy.actions  # the refusal came from STS over HTTP, not a check of ours
    # refused before the first write: not even the stack that needs no role was made
    assert live(cloud.endpoint, "123456789012") == set() and live(cloud.endpoint, PROD) == set()


def test_a_group_pin_refuses_a_role_of_another_account_before_any_write(tmp_path: Path, run_cli,
                                                                       cloud) -> None:
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text(f"""name: pins
groups:
  shared:
    account: "{SHARED}"
    role_arn: arn:aws:iam::{SHARED}:role/deployer
    stacks:
      registry: {{template: queue.yaml}}
  app:
    account: "{PROD}"
    role_arn: arn:aws:iam::{DEV}:role/deployer
    stacks:
      queue: {{template: queue.yaml, depends_on: [registry]}}
""")
    result = run_cli("deploy", str(tmp_path), "--yes")
    assert result.code == 2 and result.err.strip().count("\n") == 0, result.err
    assert (f"stack 'queue': role arn:aws:iam::{DEV}:role/deployer is in account {DEV}, but the project pins "
            f"account {PROD}") in result.err
    # the shared stack, whose own pin holds, was not deployed first either
    assert live(cloud.endpoint, SHARED) == set() and live(cloud.endpoint, DEV) == set()
    # a scope without the mispinned group goes ahead
    shared = run_cli("deploy", str(tmp_path), "shared", "--yes")
    assert shared.code == 0, shared.err
    assert live(cloud.endpoint, SHARED) == {"pins-registry"}


def test_a_missing_profile_named_in_the_project_is_one_line(tmp_path: Path, run_cli, cloud) -> None:
    config = tmp_path / "aws-config"
    config.write_text("[profile other]\nregion = eu-west-1\n")
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text(
        "name: prof\ngroups:\n  app:\n    profile: ops\n    stacks:\n      q: {template: queue.yaml}\n")
    for command in (["deploy", "--yes"], ["status"]):
        result = run_cli(command[0], str(tmp_path), *command[1:], env={"AWS_CONFIG_FILE": str(config)})
        assert result.code == 2 and result.err.strip().count("\n") == 0, result.err
        assert "AWS profile 'ops' not found (add it to ~/.aws/config" in result.err
        assert "Traceback" not in result.err
