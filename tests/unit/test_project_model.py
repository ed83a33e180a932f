"""formwright.yaml: the tree of named objects, references, Jinja2, and every error with file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.errors import ProjectError
from formwright.model import OutputRef, load_project

TEMPLATE = """Parameters:
  VpcId: {Type: String, Default: none}
Resources:
  Q: {Type: AWS::SQS::Queue}
Outputs:
  VpcId: {Value: !Ref Q}
"""


def write_project(root: Path, body: str, templates: tuple[str, ...] = ("a.yaml", "b.yaml", "c.yaml")) -> Path:
    for name in templates:
        (root / name).write_text(TEMPLATE)
    (root / "formwright.yaml").write_text(body)
    return root


def error_of(root: Path) -> ProjectError:
    with pytest.raises(ProjectError) as err:
        load_project(root)
    return err.value


def test_tree_paths_refs_and_dependencies(tmp_path: Path) -> None:
    write_project(tmp_path, """name: shop
tags: {team: web}
stacks:
  network:
    template: a.yaml
  database:
    template: b.yaml
    parameters:
      VpcId: !ref network.outputs.VpcId
    tags: {tier: data}
  app:
    template: c.yaml
    depends_on: [database]
""")
    project = load_project(tmp_path)
    db = project.stacks["database"]
    assert db.path == "shop.stacks.database" and db.parent is project and db.root is project
    assert db.parameters["VpcId"] == OutputRef("network", "VpcId", str(tmp_path / "formwright.yaml"), 9)
    assert db.dependencies() == {"network"}
    assert db.stack_name == "shop-database"
    # with the ownership tags every stack formwright makes carries (issue 23)
    assert db.tags == {"team": "web", "tier": "data", "formwright:project": "shop",
                       "formwright:stack": "database"}
    order = project.order()
    assert order.index("network") < order.index("database") < order.index("app")


def test_jinja_env_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STAGE", "prod")
    write_project(
        tmp_path,
        "name: p\nstacks:\n  a:\n    template: a.yaml\n    stack_name: 'p-{{ env.STAGE }}'\n"
        "    parameters: {VpcId: \"{{ env.MISSING | default('x') }}\"}\n",
    )
    project = load_project(tmp_path)
    assert project.stacks["a"].stack_name == "p-prod"
    assert project.stacks["a"].parameters["VpcId"] == "x"


def test_undefined_variable_is_an_error_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOPE", raising=False)
    write_project(tmp_path, "name: p\nstacks:\n  a:\n    template: a.yaml\n    parameters:\n"
                            "      VpcId: '{{ env.NOPE }}'\n")
    err = error_of(tmp_path)
    assert err.line == 6 and "NOPE" in str(err)


def test_unknown_key_with_did_you_mean(tmp_path: Path) -> None:
    write_project(tmp_path, "name: p\nstacks:\n  a:\n    template: a.yaml\n    paramaters: {}\n")
    err = error_of(tmp_path)
    assert (
        err.line == 5 and "unknown key 'paramaters'" in str(err) and "did you mean 'parameters'" in str(err)
    )


def test_unknown_top_level_key(tmp_path: Path) -> None:
    write_project(tmp_path, "name: p\nstack:\n  a: {template: a.yaml}\n")
    err = error_of(tmp_path)
    assert err.line == 2 and "did you mean 'stacks'" in str(err)


def test_missing_template(tmp_path: Path) -> None:
    write_project(tmp_path, "name: p\nstacks:\n  a:\n    template: nope.yaml\n")
    err = error_of(tmp_path)
    assert err.line == 4 and "template 'nope.yaml' of stack 'a' not found" in str(err)


def test_reference_to_unknown_stack(tmp_path: Path) -> None:
    write_project(tmp_path, "name: p\nstacks:\n  netwrk:\n    template: a.yaml\n  b:\n    template: b.yaml\n"
                            "    parameters:\n      VpcId: !ref network.outputs.VpcId\n")
    err = error_of(tmp_path)
    assert err.line == 8 and "unknown stack 'network'" in str(err) and "did you mean 'netwrk'" in str(err)


def test_bad_reference_syntax(tmp_path: Path) -> None:
    write_project(tmp_path, "name: p\nstacks:\n  a:\n    template: a.yaml\n    parameters:\n"
                            "      VpcId: !ref a.VpcId\n")
    err = error_of(tmp_path)
    assert err.line == 6 and "<stack>.outputs.<OutputKey>" in str(err)


def test_depends_on_unknown_stack(tmp_path: Path) -> None:
    write_project(tmp_path, "name: p\nstacks:\n  a:\n    template: a.yaml\n    depends_on: [zz]\n")
    err = error_of(tmp_path)
    assert err.line == 5 and "unknown stack 'zz'" in str(err)


def test_cycle_is_printed(tmp_path: Path) -> None:
    write_project(tmp_path, """name: p
stacks:
  a:
    template: a.yaml
    parameters: {VpcId: !ref c.outputs.VpcId}
  b:
    template: b.yaml
    depends_on: [a]
  c:
    template: c.yaml
    parameters: {VpcId: !ref b.outputs.VpcId}
""")
    err = error_of(tmp_path)
    text = str(err)
    assert "dependency cycle:" in text and err.line is not None
    cycle = text.split("dependency cycle: ")[1].split(" (")[0].split(" -> ")
    assert set(cycle) == {"a", "b", "c"} and cycle[0] == cycle[-1]


def test_bad_yaml_and_duplicates(tmp_path: Path) -> None:
    write_project(tmp_path, "name: p\nstacks:\n  a: {template: a.yaml\n")
    assert error_of(tmp_path).line is not None
    write_project(tmp_path, "name: p\nstacks:\n  a: {template: a.yaml}\n  a: {template: b.yaml}\n")
    err = error_of(tmp_path)
    assert err.line == 4 and "duplicate key 'a'" in str(err)


def test_unknown_capability(tmp_path: Path) -> None:
    write_project(
        tmp_path, "name: p\nstacks:\n  a:\n    template: a.yaml\n    capabilities: [CAPABILITY_IAMM]\n"
    )
    assert "did you mean 'CAPABILITY_IAM'" in str(error_of(tmp_path))


def test_no_project_file(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match=r"no formwright\.yaml here"):
        load_project(tmp_path)


@pytest.mark.parametrize("line,message", [
    ("    capabilities: 5\n", "`capabilities` must be a list of names"),
    ("    capabilities: [[CAPABILITY_IAM]]\n", "`capabilities` must be a list of names"),
    ("    termination_protection: maybe\n", "`termination_protection` must be true or false"),
    ("    stack_name: bad_name!\n", "'bad_name!' is not a valid CloudFormation stack name"),
])
def test_bad_stack_settings(tmp_path: Path, line: str, message: str) -> None:
    write_project(tmp_path, "name: p\nstacks:\n  a:\n    template: a.yaml\n" + line)
    err = error_of(tmp_path)
    assert message in str(err) and err.line == 5


def test_bad_region(tmp_path: Path) -> None:
    write_project(tmp_path, "name: p\nregion: eu_west_1\nstacks:\n  a: {template: a.yaml}\n")
    err = error_of(tmp_path)
    assert err.line == 2 and "unknown region" in str(err)


def test_templated_flags_are_parsed_not_guessed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROTECT", "false")
    write_project(tmp_path, "name: p\nstacks:\n  a:\n    template: a.yaml\n"
                            "    termination_protection: '{{ env.PROTECT }}'\n    immutable: 'true'\n")
    stack = load_project(tmp_path).stacks["a"]
    assert stack.termination_protection is False and stack.immutable is True
