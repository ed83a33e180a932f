"""End to end through the CLI against the local cloud: one project in three accounts and two regions.

The local cloud (moto's server) keeps accounts apart by the assumed role's account: STS AssumeRole into
`arn:aws:iam::<account>:role/x` returns credentials whose calls land in <account>. moto does not check
trust policies, so any role can be assumed there; the refusal path is tested in test_assume_role.py.
"""

from __future__ import annotations

from pathlib import Path

import boto3
import pytest

SHARED, DEV, PROD = "111111111111", "222222222222", "333333333333"

REGISTRY = """Parameters:
  Size: {Type: String}
Resources:
  Q: {Type: AWS::SQS::Queue}
Outputs:
  QueueName: {Value: !GetAtt Q.QueueName}
"""
QUEUE = """Parameters:
  Upstream: {Type: String}
  Size: {Type: String}
Resources:
  Q: {Type: AWS::SQS::Queue}
Outputs:
  Echo: {Value: !Ref Upstream}
  Size: {Value: !Ref Size}
"""
PROJECT = f"""name: estate
region: us-east-1
vars:
  size: small
environments:
  dev:
    groups:
      app: {{account: "{DEV}", role_arn: "arn:aws:iam::{DEV}:role/deployer"}}
  prod:
    vars: {{size: large}}
    groups:
      app: {{account: "{PROD}", role_arn: "arn:aws:iam::{PROD}:role/deployer", external_id: prod-ext}}
groups:
  shared:
    account: "{SHARED}"
    role_arn: arn:aws:iam::{SHARED}:role/deployer
    region: eu-west-1
    stacks:
      registry:
        template: registry.yaml
        parameters: {{Size: "{{{{ var.size }}}}"}}
  app:
    regions: [us-east-1, eu-west-1]
    stacks:
      queue:
        template: queue.yaml
        parameters:
          Upstream: !ref registry.outputs.QueueName
          Size: "{{{{ var.size }}}}"
stacks:
  report:
    template: queue.yaml
    account: "{SHARED}"
    role_arn: arn:aws:iam::{SHARED}:role/deployer
    parameters:
      Upstream: !ref queue@eu-west-1.outputs.Echo
      Size: "{{{{ environment }}}}"
"""


@pytest.fixture
def estate(tmp_path: Path) -> Path:
    root = tmp_path / "estate"
    root.mkdir()
    (root / "registry.yaml").write_text(REGISTRY)
    (root / "queue.yaml").write_text(QUEUE)
    (root / "formwright.yaml").write_text(PROJECT)
    return root


def cfn_in(endpoint: str, account: str, region: str):
    """CloudFormation in `account` (through the local cloud's AssumeRole) and `region`."""
    base = boto3.Session(aws_access_key_id="t", aws_secret_access_key="t", region_name=region)
    creds = base.client("sts", endpoint_url=endpoint).assume_role(
        RoleArn=f"arn:aws:iam::{account}:role/test", RoleSessionName="test")["Credentials"]
    return boto3.client("cloudformation", region_name=region, endpoint_url=endpoint,
                        aws_access_key_id=creds["AccessKeyId"],
                        aws_secret_access_key=creds["SecretAccessKey"],
                        aws_session_token=creds["SessionToken"])


def stacks_in(endpoint: str, account: str, region: str) -> dict[str, dict[str, str]]:
    """Live stacks there: name -> outputs."""
    found = {}
    for stack in cfn_in(endpoint, account, region).describe_stacks()["Stacks"]:
        if stack["StackStatus"] != "DELETE_COMPLETE":
            found[stack["StackName"]] = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
    return found


def test_dev_and_prod_side_by_side_across_accounts_and_regions(estate: Path, run_cli, cloud) -> None:
    endpoint = cloud.endpoint
    dev = run_cli("deploy", str(estate), "--env", "dev", "--yes", "--output", "json")
    assert dev.code == 0, dev.err
    assert set(dev.json()["stacks"]) == {"registry", "queue@us-east-1", "queue@eu-west-1", "report"}
    registry = stacks_in(endpoint, SHARED, "eu-west-1")["estate-dev-registry"]
    # cross-account and cross-region: the dev queues (account DEV) read the registry (SHARED, eu-west-1)
    for region in ("us-east-1", "eu-west-1"):
        queue = stacks_in(endpoint, DEV, region)[f"estate-dev-queue-{region}"]
        assert queue == {"Echo": registry["QueueName"], "Size": "small"}
    assert stacks_in(endpoint, SHARED, "us-east-1")["estate-dev-report"]["Size"] == "dev"
    assert stacks_in(endpoint, "123456789012", "us-east-1") == {}  # nothing landed in the caller's account

    prod = run_cli("deploy", str(estate), "--yes", "--output", "json", env={"FORMWRIGHT_ENV": "prod"})
    assert prod.code == 0, prod.err
    assert stacks_in(endpoint, PROD, "eu-west-1")["estate-prod-queue-eu-west-1"]["Size"] == "large"
    assert set(stacks_in(endpoint, SHARED, "eu-west-1")) == {"estate-dev-registry", "estate-prod-registry"}
    assert set(stacks_in(endpoint, DEV, "us-east-1")) == {"estate-dev-queue-us-east-1"}  # dev untouched

    # the applied cache and the build folder are kept apart per environment, account and region
    applied = estate / ".formwright" / "applied"

    def cached(env: str, account: str, region: str) -> set[str]:  # folders end in the endpoint's hash
        return {p.name for p in applied.glob(f"{env}/local-{account}-{region}-*/*.json")}

    assert cached("dev", SHARED, "eu-west-1") == {"registry.json"}
    assert cached("dev", DEV, "us-east-1") == {"queue@us-east-1.json"}
    assert cached("prod", PROD, "eu-west-1") == {"queue@eu-west-1.json"}
    assert cached("prod", DEV, "eu-west-1") == set()

    # a second deploy of dev changes nothing; the plan says where each reference comes from (--verbose:
    # by default unchanged stacks share one line)
    plan = run_cli("plan", str(estate), "--env", "dev", "--verbose")
    assert plan.code == 0, plan.err
    assert f"Upstream <- registry.outputs.QueueName ({SHARED}/eu-west-1)" in plan.out
    assert f"Upstream <- queue@eu-west-1.outputs.Echo ({DEV}/eu-west-1)" in plan.out
    scoped = run_cli("plan", str(estate), "shared.registry", "--env", "dev", "--output", "json")
    assert scoped.code == 0, scoped.err
    assert set(scoped.json()["plans"]) == {"registry"}
    report = run_cli("outputs", str(estate), "report", "--env", "dev", "--output", "json")
    assert report.code == 0, report.err
    assert report.json()["outputs"] == {"report": {"Echo": registry["QueueName"], "Size": "dev"}}

    # scopes: status of a group; delete of a stack takes its dependents, listed before the prompt
    status = run_cli("status", str(estate), "app", "--env", "dev", "--output", "json")
    assert status.code == 0, status.err
    assert set(status.json()["stacks"]) == {"queue@us-east-1", "queue@eu-west-1"}
    gone = run_cli("delete", str(estate), "shared.registry", "--env", "dev", "--yes")
    assert gone.code == 0, gone.err
    assert "will delete, in this order:" in gone.out
    assert "estate-dev-report (depends on queue@eu-west-1)" in gone.out
    assert "estate-dev-queue-us-east-1 (depends on registry)" in gone.out
    assert gone.out.index("will delete, in this order:") < gone.out.index("summary")
    assert set(stacks_in(endpoint, SHARED, "eu-west-1")) == {"estate-prod-registry"}
    assert stacks_in(endpoint, DEV, "us-east-1") == {} and "estate-prod-report" in stacks_in(
        endpoint, SHARED, "us-east-1")


def test_account_pinning_refuses_a_wrong_caller(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text(f"""name: pinned
account: "{PROD}"
stacks:
  q: {{template: queue.yaml, parameters: {{Upstream: x, Size: s}}}}
""")
    result = run_cli("deploy", str(tmp_path), "--yes")
    assert result.code == 2
    assert result.err.strip().count("\n") == 0, result.err
    assert "123456789012" in result.err and PROD in result.err and "Traceback" not in result.err
    # an instance of the project is held to the same pin
    instance = run_cli("instance", "create", "a", str(tmp_path))
    assert instance.code == 2 and instance.err.strip().count("\n") == 0, instance.err
    assert (f"instance 'a': the default credentials are in account 123456789012, but the project pins "
            f"account {PROD}") in instance.err
    assert stacks_in(cloud.endpoint, "123456789012", "us-east-1") == {}  # refused before any write


def test_unknown_environment_and_missing_profile_are_one_line(estate: Path, tmp_path: Path, run_cli,
                                                              cloud) -> None:
    unknown = run_cli("plan", str(estate), "--env", "staging")
    assert unknown.code == 2 and unknown.err.strip().count("\n") == 0, unknown.err
    assert "formwright.yaml:5: unknown environment 'staging' (environments: dev, prod)" in unknown.err
    config = tmp_path / "aws-config"
    config.write_text("[profile other]\nregion = eu-west-1\n")
    missing = run_cli("plan", str(estate), "--env", "dev", "--profile", "nope",
                      env={"AWS_CONFIG_FILE": str(config)})
    assert missing.code == 2 and missing.err.strip().count("\n") == 0, missing.err
    assert "AWS profile 'nope' not found" in missing.err
    bad_var = run_cli("plan", str(estate), "--env", "dev", "--var", "size")
    assert bad_var.code == 2 and "--var 'size' is not K=V" in bad_var.err


def test_project_region_over_aws_region_is_said_once(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text("""name: r
region: eu-west-1
stacks:
  q: {template: queue.yaml, parameters: {Upstream: x, Size: s}}
""")
    result = run_cli("deploy", str(tmp_path), "--yes", env={"AWS_REGION": "us-west-2"})
    assert result.code == 0, result.err
    assert result.err.count("the project's region eu-west-1 is used, not AWS_REGION us-west-2") == 1
    assert "r-q" in stacks_in(cloud.endpoint, "123456789012", "eu-west-1")
    # no project region: AWS_REGION is used
    (tmp_path / "formwright.yaml").write_text((tmp_path / "formwright.yaml").read_text().replace(
        "region: eu-west-1\n", ""))
    result = run_cli("deploy", str(tmp_path), "--yes", "--output", "json", env={"AWS_REGION": "us-west-2"})
    assert result.code == 0, result.err
    assert "note" not in result.err
    west = boto3.client("cloudformation", region_name="us-west-2", endpoint_url=cloud.endpoint,
                        aws_access_key_id="t", aws_secret_access_key="t")
    assert "r-q" in {s["StackName"] for s in west.describe_stacks()["Stacks"]}


def test_var_file_and_var_flags_reach_the_stacks(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "vars.yaml").write_text("size: large\nupstream: from-file\n")
    (tmp_path / "formwright.yaml").write_text("""name: v
vars: {size: small, upstream: none}
environments:
  prod: {vars: {size: medium}}
stacks:
  q: {template: queue.yaml, parameters: {Upstream: "{{ var.upstream }}", Size: "{{ var.size }}"}}
""")
    # vars:, then the environment's, then each --var-file, then each --var: the later wins
    result = run_cli("deploy", str(tmp_path), "--env", "prod", "--var-file", str(tmp_path / "vars.yaml"),
                     "--var", "size=xl", "--yes")
    assert result.code == 0, result.err
    assert stacks_in(cloud.endpoint, "123456789012", "us-east-1") == {"v-prod-q": {"Echo": "from-file",
                                                                                    "Size": "xl"}}
    # the build folder is the environment's own
    assert (tmp_path / ".formwright" / "build" / "prod" / "q" / "processed.json").is_file()
    assert not (tmp_path / ".formwright" / "build" / "q").exists()
