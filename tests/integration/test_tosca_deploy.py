"""End to end: a `tosca:` stack in formwright.yaml is transformed and deployed by `formwright deploy`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tosca"

# the local cloud cannot deliver the cfn-signal a TOSCA Compute's CreationPolicy waits for: stubbed
STUB_INSTANCES = "local_cloud:\n  stub: [AWS::EC2::Instance]\n"


def test_tosca_stack_deploys_then_is_a_no_op(tmp_path: Path, run_cli, cloud) -> None:
    shutil.copytree(EXAMPLES / "nodejs", tmp_path / "nodejs")
    (tmp_path / "formwright.yaml").write_text(
        "name: shop\nregion: us-east-1\nstacks:\n  app:\n    tosca: nodejs\n" + STUB_INSTANCES)
    first = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert first.code == 0, first.out + first.err
    assert first.json()["stacks"]["app"]["outcome"] == "created"
    stack = cloud.client("cloudformation").describe_stacks(StackName="shop-app")["Stacks"][0]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    bucket = "formwright-123456789012-us-east-1"
    assert cloud.client("s3").list_objects_v2(Bucket=bucket)["KeyCount"] > 0  # artifacts uploaded

    again = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert again.code == 0, again.err
    assert again.json()["stacks"]["app"]["outcome"] == "unchanged"
    assert again.json()["write_calls"] == 0


DATABASE_ONLY = """tosca_definitions_version: tosca_simple_yaml_1_0
topology_template:
  node_templates:
    db_host:
      type: tosca.nodes.Compute
    mysql:
      type: tosca.nodes.DBMS.MySQL
      requirements:
        - host: db_host
    orders:
      type: tosca.nodes.Database.MySQL
      properties:
        name: orders
      requirements:
        - host: mysql
"""


def test_generated_database_password_is_stable_and_never_printed(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "db.yaml").write_text(DATABASE_ONLY)
    (tmp_path / "formwright.yaml").write_text(
        "name: data\nstacks:\n  db:\n    tosca: db.yaml\n" + STUB_INSTANCES)
    result = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert result.code == 0, result.err
    store = tmp_path / ".formwright" / "secrets" / "generated" / "db.json"
    assert oct(store.stat().st_mode)[-3:] == "600"
    passwords = list(json.loads(store.read_text()).values())
    assert passwords and all(len(p) >= 8 for p in passwords)
    again = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    plan = run_cli("plan", str(tmp_path), "--output", "json")
    assert again.json()["stacks"]["db"]["outcome"] == "unchanged"  # the same password both times
    for text in (result.out, result.err, again.out, again.err, plan.out, plan.err):
        assert all(p not in text for p in passwords)


UBUNTU = """tosca_definitions_version: tosca_simple_yaml_1_1
topology_template:
  node_templates:
    server:
      type: tosca.nodes.Compute
      capabilities:
        os:
          properties: {type: linux, distribution: ubuntu, version: "22.04"}
"""


def test_ubuntu_image_parameter_deploys(tmp_path: Path, run_cli, cloud) -> None:
    """Canonical's public SSM image parameter: AWS resolves it at deploy time; the local cloud (moto knows
    only Amazon Linux's) resolves it to a stand-in image id (see cloud/moto_server.py)."""
    (tmp_path / "ubuntu.yaml").write_text(UBUNTU)
    (tmp_path / "formwright.yaml").write_text(
        "name: os\nstacks:\n  vm:\n    tosca: ubuntu.yaml\n" + STUB_INSTANCES)
    result = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert result.code == 0, result.err
    instances = cloud.client("ec2").describe_instances()["Reservations"]
    assert any(i["ImageId"].startswith("ami-") for r in instances for i in r["Instances"])


SCALED = """tosca_definitions_version: tosca_simple_yaml_1_0
topology_template:
  node_templates:
    server:
      type: tosca.nodes.Compute
      capabilities:
        host:
          properties: {num_cpu: 2}
  policies:
    - asg:
        type: tosca.policies.Scaling
        targets: [server]
"""


def test_what_the_transform_warns_about_is_said_by_deploy(tmp_path: Path, run_cli, cloud) -> None:
    """A `tosca:` stack's warnings (a policy not applied, a misspelt property) reach the user of `deploy`, as
    `transform tosca` prints them, and the deploy still goes through."""
    (tmp_path / "scaled.yaml").write_text(SCALED)
    (tmp_path / "formwright.yaml").write_text(
        "name: warned\nstacks:\n  vm:\n    tosca: scaled.yaml\n" + STUB_INSTANCES)
    result = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert result.code == 0, result.err
    assert result.json()["stacks"]["vm"]["outcome"] == "created"
    source = tmp_path / "scaled.yaml"
    assert f"warning: {source}:8: node template 'server': capability 'host' has no property 'num_cpu'" \
        in result.err
    assert f"warning: {source}:10: policy 'asg' (tosca.policies.Scaling) is not applied" in result.err
