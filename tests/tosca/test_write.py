"""files/ of the artifact: content-addressed, each distinct content written once
however many nodes ship it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from formwright.transform.cloudformation import context, transform_tosca
from formwright.transform.cloudformation.lifecycle import runner_script

from .conftest import write_template

APP = """
    vm_{i}:
      type: tosca.nodes.Compute
    app_{i}:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - host: vm_{i}
      interfaces:
        Standard:
          create: {script}
"""


def _files(out: Path) -> dict[str, bytes]:
    files = out / "files"
    return {p.relative_to(files).as_posix(): p.read_bytes() for p in files.rglob("*") if p.is_file()}


def _key(data: bytes, name: str) -> str:
    return f"{hashlib.sha256(data).hexdigest()[:context.DIGEST_CHARS]}/{name}"


def _sources(template: dict, node: str) -> dict[str, str]:
    """Destination on the instance -> key in the bucket, of the files the node's instance gets."""
    instance = template["Resources"][f"Vm{node}"]
    files = instance["Metadata"]["AWS::CloudFormation::Init"][f"App{node}Files"]["files"]
    return {path: entry["source"]["Fn::Sub"].split(".amazonaws.com/", 1)[1] for path, entry in files.items()}


@pytest.mark.parametrize("limit", [context.SMALL_FILE, 4])  # kept in memory, or streamed
def test_one_file_per_content_shared_by_every_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
):
    monkeypatch.setattr(context, "SMALL_FILE", limit)
    script = "#!/bin/bash\necho created\n"
    body = "topology_template:\n  node_templates:\n" + "".join(
        APP.format(i=i, script="scripts/create.sh") for i in range(3))
    source = write_template(tmp_path / "src", body, files={"scripts/create.sh": script})
    result = transform_tosca(source, tmp_path / "out")
    key = _key(script.encode(), "create.sh")
    runner = _key(runner_script().encode(), "formwright-run")
    assert _files(tmp_path / "out") == {key: script.encode(), runner: runner_script().encode()}
    for i in range(3):  # each node's own destination, one shared key
        assert _sources(result.template, str(i)) == {f"/opt/formwright/app_{i}/scripts/create.sh": key}


def test_same_content_under_other_paths_is_one_file_and_same_names_differing_are_two(tmp_path: Path):
    same, other = "#!/bin/bash\necho same\n", "#!/bin/bash\necho other\n"
    scripts = ["a/create.sh", "b/setup.sh", "c/create.sh"]
    body = "topology_template:\n  node_templates:\n" + "".join(
        APP.format(i=i, script=script) for i, script in enumerate(scripts))
    source = write_template(tmp_path / "src", body, files={"a/create.sh": same, "b/setup.sh": same,
                                                          "c/create.sh": other})
    result = transform_tosca(source, tmp_path / "out")
    files = _files(tmp_path / "out")
    assert files[_key(same.encode(), "create.sh")] == same.encode()
    assert files[_key(other.encode(), "create.sh")] == other.encode()
    assert len(files) == 3  # the two scripts and the runner
    assert _sources(result.template, "0")["/opt/formwright/app_0/a/create.sh"] == _key(
        same.encode(), "create.sh"
    )
    assert _sources(result.template, "1")["/opt/formwright/app_1/b/setup.sh"] == _key(
        same.encode(), "create.sh"
    )
    assert _sources(result.template, "2")["/opt/formwright/app_2/c/create.sh"] == _key(
        other.encode(), "create.sh"
    )
    run = result.template["Resources"]["Vm1"]["Metadata"]["AWS::CloudFormation::Init"]["App1Create"][
        "commands"
    ]
    assert run["run"]["command"].endswith(" app_1 create b/setup.sh")  # the node's own path on the instance


def test_a_bytecode_cache_that_cannot_be_saved_does_not_fail_the_transform(tmp_path: Path):
    """The scripts' compiled templates are cached between runs; a cache that cannot be written (a full or
    missing temp folder) only means compiling again."""
    import jinja2

    from formwright.transform.cloudformation.write import _BestEffortCache

    cache = _BestEffortCache(directory=str(tmp_path / "missing"))
    env = jinja2.Environment(bytecode_cache=cache, loader=jinja2.DictLoader({"t": "{{ x }}"}))
    assert env.get_template("t").render(x=1) == "1"
