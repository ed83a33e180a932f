"""Project hygiene (issue #16, item 7): `init` keeps secrets out of git, `outputs STACK KEY` is one value
for scripts."""

from __future__ import annotations

import subprocess
from pathlib import Path

QUEUE = "Resources:\n  Q:\n    Type: AWS::SQS::Queue\nOutputs:\n  Name:\n    Value: !GetAtt Q.QueueName\n"


def test_init_writes_a_gitignore_that_keeps_the_state_folder_out(tmp_path: Path, run_cli) -> None:
    folder = tmp_path / "fresh"
    folder.mkdir()
    assert run_cli("init", cwd=folder).code == 0
    assert ".formwright/" in (folder / ".gitignore").read_text().splitlines()
    (folder / ".formwright").mkdir()
    (folder / ".formwright" / "secret").write_text("x")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    ignored = subprocess.run(["git", "-C", str(folder), "check-ignore", ".formwright/secret"],
                             capture_output=True, text=True, check=False)
    assert ignored.returncode == 0  # git itself agrees the state folder is ignored


def test_init_keeps_the_users_files(tmp_path: Path, run_cli) -> None:
    (tmp_path / ".gitignore").write_text("node_modules/")
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "app.yaml").write_text("mine")
    refused = run_cli("init", str(tmp_path))
    assert refused.code == 2 and "app.yaml: init would overwrite this file" in refused.err
    assert (tmp_path / "templates" / "app.yaml").read_text() == "mine"
    assert not (tmp_path / "formwright.yaml").exists()  # nothing was written
    (tmp_path / "templates" / "app.yaml").unlink()
    assert run_cli("init", str(tmp_path)).code == 0
    assert (tmp_path / ".gitignore").read_text() == "node_modules/\n.formwright/\n"  # added to, not replaced


def test_outputs_stack_key_prints_just_the_value(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "q.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text("name: hyg\nstacks:\n  q: {template: q.yaml}\n")
    assert run_cli("deploy", str(tmp_path), "-y").code == 0
    value = run_cli("outputs", str(tmp_path), "q", "Name")
    assert value.code == 0 and value.out.strip().startswith("hyg-q-") and len(value.out.splitlines()) == 1
    from_inside = run_cli("outputs", "q", "Name", cwd=tmp_path)  # DIR found upward, as git does
    assert from_inside.out == value.out
    missing = run_cli("outputs", str(tmp_path), "q", "Nope", "--output", "json")
    assert missing.code == 2
    assert missing.json()["errors"][0]["hint"] == "outputs: Name"
