"""Issue 24: the resolver tags as the model reads them (property tests of the parser), and the resolvers'
less common forms resolved in-process against the local cloud: a secret's previous version (Secrets
Manager's `VersionStage`, as sceptre's `!secretsmanager` takes it) and an external stack's output read
through an assumed role (`role_arn`, the target rules of groups)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from formwright.engine.stack import prepare_stacks
from formwright.errors import ProjectError
from formwright.model.project import Project, load_project
from formwright.model.references import load_yaml
from formwright.model.resolvers import ValueSource

NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789/_-.", min_size=1, max_size=40).filter(
    lambda s: s.strip("/") and not s.startswith(("-", ".")))


@given(name=NAMES, key=st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12))
def test_scalar_forms_keep_their_argument_and_line(name: str, key: str) -> None:
    data = load_yaml(f"a: 1\nb: !ssm {name}\nc: !secret {name}#{key}\n", "formwright.yaml")
    assert data["b"] == ValueSource("ssm", name) and data["b"].line == 2
    assert data["b"].label == f"ssm:{name}" and not data["b"].secret
    assert data["c"].option("id") == name and data["c"].option("key") == key and data["c"].secret
    assert data["c"].label == f"secret:{name}#{key}"


@given(words=st.lists(st.text(alphabet="abcxyz-=_", min_size=1, max_size=8), min_size=1, max_size=5))
def test_a_command_list_is_its_argv(words: list[str]) -> None:
    data = load_yaml("c: !cmd " + json.dumps(words) + "\n", "formwright.yaml")
    assert data["c"].argv() == words


TEMPLATE = "Parameters:\n  V: {Type: String}\nResources:\n  Q: {Type: AWS::SQS::Queue}\n"


def project(folder: Path, value: str) -> Project:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "t.yaml").write_text(TEMPLATE)
    (folder / "formwright.yaml").write_text(
        f"name: f\nregion: us-east-1\nstacks:\n  a:\n    template: t.yaml\n    parameters: {{V: {value}}}\n")
    return load_project(folder)


def test_a_secret_version_stage_reads_that_version(tmp_path: Path, cloud) -> None:
    secrets = cloud.client("secretsmanager")
    secrets.create_secret(Name="app/db", SecretString=json.dumps({"password": "first-pass"}))
    secrets.put_secret_value(SecretId="app/db", SecretString=json.dumps({"password": "second-pass"}))
    previous = project(tmp_path / "p", "!secret {id: app/db, key: password, version_stage: AWSPREVIOUS}")
    stacks = prepare_stacks(previous, target=cloud)
    assert stacks["a"].resolve_parameters({}) == {"V": "first-pass"}
    assert stacks["a"].secret_keys == {"V"} and stacks["a"].secret_values == {"first-pass"}
    current = project(tmp_path / "q", "!secret app/db#password")
    assert prepare_stacks(current, target=cloud)["a"].resolve_parameters({}) == {"V": "second-pass"}


def test_a_stack_output_through_an_assumed_role(tmp_path: Path, cloud) -> None:
    cloud.client("cloudformation").create_stack(
        StackName="shared",
        TemplateBody="Resources:\n  T: {Type: AWS::SNS::Topic}\nOutputs:\n  Id: {Value: x-1}\n")
    loaded = project(tmp_path / "p", "!stack_output {stack: shared, output: Id, "
                                      "role_arn: 'arn:aws:iam::123456789012:role/reader'}")
    assert prepare_stacks(loaded, target=cloud)["a"].resolve_parameters({}) == {"V": "x-1"}


def test_a_stack_output_in_a_pinned_account_checks_the_credentials(tmp_path: Path, cloud) -> None:
    loaded = project(tmp_path / "p", "!stack_output {stack: shared, output: Id, account: '999999999999'}")
    with pytest.raises(ProjectError) as caught:
        prepare_stacks(loaded, target=cloud)
    assert caught.value.line == 6 and "pins account 999999999999" in str(caught.value)
    assert "!stack_output" in str(caught.value)


def test_sceptres_stack_output_form_and_an_unknown_tag(tmp_path: Path) -> None:
    data = load_yaml("a: !stack_output network::VpcId\n", "formwright.yaml")
    assert data["a"].stack_and_output() == ("network", "VpcId")
    with pytest.raises(ProjectError) as caught:
        load_yaml("a: 1\nb: !sssm /x\n", "formwright.yaml")
    assert caught.value.line == 2 and "!ssm" in str(caught.value) and "!stack_output" in str(caught.value)


def test_plugins_are_looked_up_only_for_a_tag_nothing_built_in_knows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding plugins reads every installed distribution's metadata (~20 ms with importlib.metadata's
    import, issue 29's start-up): a formwright.yaml of built-in tags alone never pays it."""
    from formwright import plugins

    asked: list[str] = []

    def entry_points(group: str, _path: tuple[str, ...]) -> dict[str, object]:
        asked.append(group)
        return {"lookup_probe": object()} if group == plugins.RESOLVERS else {}

    monkeypatch.setattr(plugins, "_entry_points", entry_points)
    data = load_yaml("a: !ref s.outputs.X\nb: !ssm /p\nc: !Sub '${AWS::Region}!'\nd: \"hi!\"\n", "f.yaml")
    assert data["b"] == ValueSource("ssm", "/p") and asked == []

    data = load_yaml("a: !lookup_probe x\n", "f.yaml")  # a plugin's tag: looked up, then known
    assert data["a"] == ValueSource("lookup_probe", "x") and asked == [plugins.RESOLVERS]
    with pytest.raises(ProjectError, match="unknown tag"):
        load_yaml("a: !no_such_tag x\n", "f.yaml")
