"""`formwright import-sceptre` through the CLI: a sceptre project of our own (tests/sceptre/fixtures.py)
converted, the written formwright.yaml read back and validated; what cannot be mapped listed with file:line;
--strict; bad input. The behaviour followed is sceptre's (4.x): config.yaml files merged from config/ down
with `dependencies` joined and every other key replaced by the child's unless `<key>_inheritance: merge`
(sceptre/config/reader.py), the stack name `<project_code>-<path with dashes>`, `!stack_output
path.yaml::Key` reading a stack of the project, a list parameter passed comma-joined, `.j2` templates rendered
by Jinja with `sceptre_user_data`."""

from __future__ import annotations

from pathlib import Path

import yaml

from formwright.model.references import OutputRef, load_yaml

from .fixtures import EXTRA, FILES, write


def converted(tmp_path: Path, run_cli, files: dict[str, str], *flags: str, env: dict | None = None):
    source = write(tmp_path / "shop-sceptre", files)
    out = tmp_path / "shop"
    result = run_cli("import-sceptre", str(source), "-o", str(out), *flags, cwd=tmp_path, env=env)
    return source, out, result


def test_a_sceptre_project_becomes_a_formwright_project_with_sceptres_stack_names(tmp_path: Path,
                                                                                  run_cli) -> None:
    _, out, result = converted(tmp_path, run_cli, FILES, "--output", "json")
    assert result.code == 0, result.out + result.err
    answer = result.json()
    assert answer["ok"] is True and answer["unmapped"] == []
    assert {s["name"]: s["stack_name"] for s in answer["stacks"]} == {
        "dev-app-service": "shop-dev-app-service",
        "dev-network-params": "shop-dev-network-params",
        "dev-network-queue": "shop-dev-network-queue",
    }
    project = load_yaml((out / "formwright.yaml").read_text(), "formwright.yaml")
    assert project["name"] == "shop" and project["region"] == "us-east-1"  # the root config.yaml's
    # the stacks keep sceptre's tags: formwright adds its ownership tags only with --tag (as adopt)
    assert project["ownership_tags"] is False and answer["tag"] is False
    stacks = project["stacks"]
    queue, params = stacks["dev-network-queue"], stacks["dev-network-params"]
    service = stacks["dev-app-service"]
    # the stack config is rendered with the merged config of its folders (stack_group_config)
    assert queue["parameters"] == {"QueueName": "shop-dev-orders"}
    # stack_tags: the dev folder's replace the root's; with `stack_tags_inheritance: merge` the app folder's
    # are merged into dev's and the service's own into those (what `sceptre dump config` shows)
    assert queue["tags"] == {"team": "platform", "env": "dev"}
    assert service["tags"] == {"env": "dev", "team": "apps", "tier": "app"}
    # !stack_output dev/network/queue.yaml::QueueArn -> !ref; a list parameter comma-joined
    assert isinstance(params["parameters"]["Value"], OutputRef)
    assert str(params["parameters"]["Value"]) == "!ref dev-network-queue.outputs.QueueArn"
    assert params["parameters"]["Zones"] == "a,b"
    assert str(service["parameters"]["QueueUrl"]) == "!ref dev-network-queue.outputs.QueueUrl"
    assert service["depends_on"] == ["dev-network-params"] and service["stack_timeout"] == 30
    # the Jinja template rendered with the stack's sceptre_user_data (trim_blocks from j2_environment)
    rendered = yaml.safe_load((out / service["template"]).read_text().replace("!Ref ", ""))
    assert sorted(rendered["Resources"]) == ["Alpha", "Beta"]
    assert (out / queue["template"]).read_text() == FILES["templates/queue.yaml"]
    valid = run_cli("validate", str(out))
    assert valid.code == 0, valid.out + valid.err


def test_what_cannot_be_mapped_is_listed_with_file_and_line_and_the_rest_written(tmp_path: Path,
                                                                                  run_cli) -> None:
    _, out, result = converted(tmp_path, run_cli, {**FILES, **EXTRA}, env={"WORKER_QUEUE": "jobs"})
    assert result.code == 0, result.out + result.err
    listed = [line for line in result.err.splitlines() if line.startswith("not mapped:")]
    assert any("config/dev/app/worker.yaml:8" in line and "!my_resolver" in line for line in listed)
    assert any("config/dev/app/worker.yaml:18" in line and "!my_hook" in line for line in listed)
    assert any("config/dev/app/worker.yaml:11" in line and "parses a JSON or YAML file" in line
               for line in listed)
    assert any("config/dev/app/legacy.yaml:1" in line and "Python template" in line for line in listed)
    assert any("config/dev/app/worker.yaml:10" in line and "!my_resolver b" in line for line in listed)
    assert len(listed) == 5, listed
    text = (out / "formwright.yaml").read_text()
    # formwright's resolvers and hooks, written by name for the engine that reads them (issue 24)
    for written in ("QueueName: '{{ env.WORKER_QUEUE }}'", "Token: !secret 'app/token'",
                    "Host: !ssm '/app/db/host'", "Other: !stack_output 'other-stack.Url'",
                    "Motd: !file 'files/motd.txt'", "Joined: x,y", "before_deploy:", "- echo creating",
                    "- - /bin/bash\n        - -c\n        - echo $0"):
        assert written in text, written
    assert "Custom" not in text and "Mixed" not in text  # a value with an unmapped part is left out
    # sceptre's protect refuses every change to the stack; the nearest formwright has guards its deletion
    assert "termination_protection: true" in text and "protect: true" in result.out
    assert (out / "files" / "motd.txt").read_text() == "hello\n"
    assert "dev-app-skipped" not in text  # ignore: true - sceptre never launches it
    assert "ignore: true" in result.out
    old = yaml.safe_load(text.split("  dev-app-old:\n", 1)[1].split("\n  dev-app-service", 1)[0])
    assert old["obsolete"] is True and old["stack_name"] == "shop-dev-app-old"
    # the Python template is not mapped: its stack is left out (formwright needs a template)
    assert "dev-app-legacy" not in text and "config/dev/app/legacy.yaml: left out" in result.out


def test_strict_exits_2_on_the_first_construct_and_writes_nothing(tmp_path: Path, run_cli) -> None:
    _, out, result = converted(tmp_path, run_cli, {**FILES, **EXTRA}, "--strict")
    assert result.code == 2 and "Traceback" not in result.err
    assert "config/dev/app/legacy.yaml:1" in result.err and "5 construct(s) cannot be mapped" in result.err
    assert not out.exists()
    answer = run_cli("import-sceptre", str(tmp_path / "shop-sceptre"), "-o", str(out), "--strict",
                     "--output", "json")
    assert answer.code == 2
    error = answer.json()["errors"][0]
    assert (error["file"], error["line"]) == ("config/dev/app/legacy.yaml", 1)
    _, _, clean = converted(tmp_path / "clean", run_cli, FILES, "--strict")
    assert clean.code == 0, clean.err


def test_bad_input_is_one_line_with_file_and_line(tmp_path: Path, run_cli) -> None:
    missing = run_cli("import-sceptre", str(tmp_path), "-o", str(tmp_path / "out"))
    assert missing.code == 2 and "no config/ folder" in missing.err and "Traceback" not in missing.err
    broken = {**FILES, "config/dev/network/queue.yaml": "template_path: queue.yaml\nparameters: [\n"}
    _, out, result = converted(tmp_path, run_cli, broken)
    assert result.code == 2 and "config/dev/network/queue.yaml:3" in result.err, result.err
    assert not out.exists()
    shapeless = {**FILES, "config/dev/network/queue.yaml": "template_path: queue.yaml\nstack_tags: [a]\n"}
    _, _, wrong = converted(tmp_path / "shape", run_cli, shapeless)
    assert wrong.code == 2 and "config/dev/network/queue.yaml" in wrong.err and "Traceback" not in wrong.err
    _, out, first = converted(tmp_path / "again", run_cli, FILES)
    assert first.code == 0
    second = run_cli("import-sceptre", str(tmp_path / "again" / "shop-sceptre"), "-o", str(out))
    assert second.code == 2 and "already exists" in second.err  # never overwritten without --force
    # the default folder is ./<project_code>: here the sceptre project's own folder, refused
    write(tmp_path / "here" / "shop", FILES)
    clash = run_cli("import-sceptre", "shop", cwd=tmp_path / "here")
    assert clash.code == 2 and "into the sceptre project" in clash.err, clash.err
    assert not (tmp_path / "here" / "shop" / "formwright.yaml").exists()


def test_tag_lets_the_next_deploy_add_the_ownership_tags(tmp_path: Path, run_cli) -> None:
    _, out, result = converted(tmp_path, run_cli, FILES, "--tag")
    assert result.code == 0, result.err
    assert "ownership_tags" not in (out / "formwright.yaml").read_text()
    assert "but the ownership tags (--tag)" in " ".join(result.out.split())  # rich wraps long paths' lines
