"""The model side of #11: environments and their overlays, variables, groups, targets, regions, scopes."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.errors import InputError, ProjectError
from formwright.model import OutputRef, load_project
from formwright.model.owners import stack_tags
from formwright.model.regions import fan_out
from formwright.model.scopes import resolve_scopes

TEMPLATE = """Parameters:
  Size: {Type: String, Default: small}
  Upstream: {Type: String, Default: none}
Resources:
  Q: {Type: AWS::SQS::Queue}
Outputs:
  Url: {Value: !Ref Q}
"""

PROJECT = """name: shop
region: us-east-1
vars:
  size: small
tags: {team: web}
environments:
  prod:
    account: "333333333333"
    vars: {size: large}
    tags: {env: prod}
    groups:
      app:
        region: eu-west-1
    stacks:
      registry:
        parameters: {Size: tiny}
groups:
  app:
    profile: apps
    tags: {tier: app}
    stacks:
      queue:
        template: t.yaml
        parameters:
          Size: "{{ var.size }}"
          Upstream: !ref registry.outputs.Url
      worker:
        template: t.yaml
        region: ap-south-1
stacks:
  registry:
    template: t.yaml
    account: "111111111111"
    role_arn: arn:aws:iam::111111111111:role/deployer
"""


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    (tmp_path / "formwright.yaml").write_text(PROJECT)
    return tmp_path


def test_without_environment_defaults_flow_project_group_stack(shop: Path) -> None:
    project = load_project(shop)
    queue, worker, registry = (project.stacks[n] for n in ("queue", "worker", "registry"))
    assert queue.stack_name == "shop-queue" and project.environment is None
    assert queue.parameters["Size"] == "small"
    # project -> group -> stack, nearer wins (sceptre's stack-group config, Paco's account/region contexts)
    assert (queue.target.region, queue.target.profile, queue.target.account) == ("us-east-1", "apps", None)
    assert (worker.target.region, worker.target.profile) == ("ap-south-1", "apps")
    assert registry.target.account == "111111111111" and registry.target.profile is None
    assert queue.tags == {"team": "web", "tier": "app", **stack_tags("shop", "queue", None)}
    assert queue.group_name == "app"
    assert project.groups == {"app": ["queue", "worker"]}


def test_environment_overlay_names_and_values(shop: Path) -> None:
    project = load_project(shop, environment="prod")
    queue, worker, registry = (project.stacks[n] for n in ("queue", "worker", "registry"))
    assert queue.stack_name == "shop-prod-queue" and registry.stack_name == "shop-prod-registry"
    assert queue.parameters["Size"] == "large" and registry.parameters["Size"] == "tiny"
    assert queue.target.region == "eu-west-1" and worker.target.region == "ap-south-1"
    assert queue.target.account == "333333333333" and registry.target.account == "111111111111"
    assert queue.tags == {"team": "web", "env": "prod", "tier": "app", "formwright:project": "shop",
                          "formwright:stack": "queue", "formwright:environment": "prod"}
    assert project.build_dir == shop / ".formwright" / "build" / "prod"


def test_overlay_file_wins_over_inline(shop: Path) -> None:
    (shop / "environments").mkdir()
    (shop / "environments" / "prod.yaml").write_text("vars: {size: xl}\n")
    (shop / "environments" / "qa.yaml").write_text("region: eu-central-1\n")
    assert load_project(shop, environment="prod").stacks["queue"].parameters["Size"] == "xl"
    qa = load_project(shop, environment="qa")
    assert qa.stacks["queue"].target.region == "eu-central-1"
    assert qa.stacks["queue"].stack_name == "shop-qa-queue"


def test_variables_precedence(shop: Path) -> None:
    (shop / "vars.yaml").write_text("size: medium\nother: 1\n")
    project = load_project(shop, environment="prod", var_files=[shop / "vars.yaml"])
    assert project.stacks["queue"].parameters["Size"] == "medium"
    project = load_project(shop, environment="prod", var_files=[shop / "vars.yaml"],
                           variables={"size": "xxl"})
    assert project.stacks["queue"].parameters["Size"] == "xxl"


def test_flags_replace_the_projects_region_and_profile(shop: Path) -> None:
    project = load_project(shop, region="ca-central-1", profile="ops")
    assert project.region == "ca-central-1"
    assert project.stacks["registry"].target.region == "ca-central-1"
    assert project.stacks["queue"].target.profile == "apps"  # the group names its own


def test_unknown_environment(shop: Path) -> None:
    with pytest.raises(ProjectError) as err:
        load_project(shop, environment="staging")
    expected = f"{shop / 'formwright.yaml'}:6: unknown environment 'staging' (environments: prod)"
    assert str(err.value) == expected


@pytest.mark.parametrize(("old", "new", "message"), [
    ('account: "333333333333"', "account: 12345", "`account` must be quoted"),
    ('account: "333333333333"', 'account: "12345"', "'12345' is not an AWS account id"),
    ("role_arn: arn:aws:iam::111111111111:role/deployer", "role_arn: deployer", "is not an IAM role ARN"),
    ("        region: eu-west-1", "        region: europe", "unknown region 'europe'"),
    ("      registry:\n        parameters", "      registy:\n        parameters",
     "sets unknown stack 'registy'"),
    ("    profile: apps", "    profil: apps", "unknown key 'profil' in group 'app'"),
    ("  worker:", "  registry:", "stack 'registry' is defined twice"),
])
def test_bad_targets_are_errors_with_lines(shop: Path, old: str, new: str, message: str) -> None:
    text = PROJECT.replace(old, new)
    if "registry:\n" in new and "  worker:" in old:
        text = PROJECT.replace("      worker:", "      registry:")
    (shop / "formwright.yaml").write_text(text)
    with pytest.raises(ProjectError) as err:
        load_project(shop, environment="prod")
    assert message in str(err.value) and err.value.line


def test_var_flag_and_file_errors(shop: Path) -> None:
    from formwright.model.environments import parse_var_flags

    with pytest.raises(InputError, match="not K=V"):
        parse_var_flags(["size"])
    with pytest.raises(InputError, match="no such file"):
        load_project(shop, var_files=[shop / "missing.yaml"])
    (shop / "formwright.yaml").write_text(PROJECT.replace('"{{ var.size }}"', '"{{ var.nope }}"'))
    with pytest.raises(ProjectError, match="undefined"):
        load_project(shop)


def test_regions_fan_out_and_references(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    (tmp_path / "formwright.yaml").write_text("""name: g
groups:
  edge:
    regions: [us-east-1, eu-west-1]
    stacks:
      cdn: {template: t.yaml}
      api:
        template: t.yaml
        parameters: {Upstream: !ref cdn.outputs.Url}
stacks:
  core: {template: t.yaml, region: eu-west-1, parameters: {Upstream: !ref cdn@us-east-1.outputs.Url}}
  report: {template: t.yaml, region: eu-west-1, depends_on: [cdn]}
""")
    project = fan_out(load_project(tmp_path), "us-east-1")
    assert set(project.stacks) == {"cdn@us-east-1", "cdn@eu-west-1", "api@us-east-1", "api@eu-west-1",
                                   "core", "report"}
    api = project.stacks["api@eu-west-1"]
    assert api.stack_name == "g-api-eu-west-1" and api.target.region == "eu-west-1"
    assert api.parameters["Upstream"].stack == "cdn@eu-west-1"  # the same region's copy
    assert api.dependencies() == {"cdn@eu-west-1"}
    assert project.stacks["core"].dependencies() == {"cdn@us-east-1"}
    assert project.stacks["report"].dependencies() == {"cdn@eu-west-1"}
    order = project.order()
    assert order.index("cdn@eu-west-1") < order.index("api@eu-west-1")
    # scopes, as Paco's: a group, a stack in its group, a stack (every copy), one copy
    assert set(resolve_scopes(project, ["edge"])) == {"cdn@us-east-1", "cdn@eu-west-1", "api@us-east-1",
                                                      "api@eu-west-1"}
    assert set(resolve_scopes(project, ["edge.api"])) == {"api@us-east-1", "api@eu-west-1"}
    assert set(resolve_scopes(project, ["api@us-east-1", "core"])) == {"api@us-east-1", "core"}
    with pytest.raises(InputError, match=r"unknown stack 'edg'.*did you mean 'edge'"):
        resolve_scopes(project, ["edg"])


def test_ambiguous_cross_region_reference_names_the_fix(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    (tmp_path / "formwright.yaml").write_text("""name: g
stacks:
  cdn: {template: t.yaml, regions: [us-east-1, eu-west-1]}
  core: {template: t.yaml, region: ap-south-1, parameters: {Upstream: !ref cdn.outputs.Url}}
  bad: {template: t.yaml, parameters: {Upstream: !ref cdn@sa-east-1.outputs.Url}}
""")
    with pytest.raises(ProjectError, match="not deployed to sa-east-1") as err:
        load_project(tmp_path)
    assert err.value.line == 5
    text = (tmp_path / "formwright.yaml").read_text()
    (tmp_path / "formwright.yaml").write_text(text.rsplit("  bad", 1)[0])
    with pytest.raises(ProjectError, match=r"name the region: !ref cdn@us-east-1.outputs.Url") as err:
        fan_out(load_project(tmp_path), "us-east-1")
    assert err.value.line == 4


def test_output_ref_keeps_its_region(tmp_path: Path) -> None:
    assert OutputRef("cdn@eu-west-1", "Url").base == "cdn"


# sceptre's names for the same keys (its "Stack Config" reference): the nearest spelling would mislead, as
# `iam_role` (the role sceptre assumes) is nearest to `service_role` (the role CloudFormation uses)
@pytest.mark.parametrize(("old", "new", "hint"), [
    ("    profile: apps", "    iam_role: arn:aws:iam::222222222222:role/deployer",
     "unknown key 'iam_role' in group 'app' (sceptre's `iam_role` is `role_arn` here)"),
    ("    profile: apps", "    sceptre_role: arn:aws:iam::222222222222:role/deployer",
     "unknown key 'sceptre_role' in group 'app' (sceptre's `sceptre_role` is `role_arn` here)"),
    ("        region: ap-south-1", "        cloudformation_service_role: arn:aws:iam::1:role/cfn",
     "unknown key 'cloudformation_service_role' in stack 'worker' (sceptre's `cloudformation_service_role` "
     "is `service_role` here)"),
    ("        region: ap-south-1", "        stack_tags: {a: b}",
     "unknown key 'stack_tags' in stack 'worker' (sceptre's `stack_tags` is `tags` here)"),
    ("        region: ap-south-1", "        dependencies: [registry]",
     "unknown key 'dependencies' in stack 'worker' (sceptre's `dependencies` is `depends_on` here)"),
])
def test_sceptre_keys_name_their_counterpart(shop: Path, old: str, new: str, hint: str) -> None:
    (shop / "formwright.yaml").write_text(PROJECT.replace(old, new))
    with pytest.raises(ProjectError) as err:
        load_project(shop)
    assert hint in str(err.value) and err.value.line


def test_overlay_files_may_end_in_yml_but_not_twice(shop: Path) -> None:
    (shop / "environments").mkdir()
    (shop / "environments" / "qa.yml").write_text("region: eu-central-1\n")
    assert load_project(shop, environment="qa").stacks["queue"].target.region == "eu-central-1"
    with pytest.raises(ProjectError, match=r"unknown environment 'staging' \(environments: prod, qa\)"):
        load_project(shop, environment="staging")
    (shop / "environments" / "qa.yaml").write_text("region: eu-west-2\n")
    with pytest.raises(ProjectError, match=r"environment 'qa' has two files, qa\.yaml and qa\.yml"):
        load_project(shop, environment="qa")
