"""`formwright completion bash|zsh|fish`: the scripts are generated, and the bash one, loaded in a real
bash, completes commands, flags, stack names and instance names."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent  # the venv's bin holds the `formwright` console script


def complete(words: list[str], cwd: Path) -> list[str]:
    """What bash offers after `words` (the last one is being completed), through the generated script."""
    script = subprocess.run([str(BIN / "formwright"), "completion", "bash"], capture_output=True, text=True,
                            check=True).stdout
    quoted = " ".join(f"'{w}'" for w in words)
    program = (f"{script}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n"
               "_formwright_completion formwright\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return [line.split(":")[0] for line in done.stdout.splitlines() if line]


pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_every_shell_gets_a_script(shell: str) -> None:
    script = subprocess.run([str(BIN / "formwright"), "completion", shell], capture_output=True, text=True,
                            check=True).stdout
    assert "_FORMWRIGHT_COMPLETE" in script


def test_bash_completes_commands_flags_and_stack_names(tmp_path: Path) -> None:
    (tmp_path / "formwright.yaml").write_text(
        "name: p\nstacks:\n  network: {template: t.yaml}\n  app: {template: t.yaml}\n")
    (tmp_path / "t.yaml").write_text("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n")
    assert "deploy" in complete(["formwright", "dep"], tmp_path)
    assert {"--stack", "--yes"} <= set(complete(["formwright", "deploy", "--"], tmp_path))
    assert set(complete(["formwright", "deploy", "-s", ""], tmp_path)) == {"network", "app"}
    assert complete(["formwright", "plan", "--stack", "ne"], tmp_path) == ["network"]


def test_bash_completes_the_stacks_of_the_project_named_as_dir(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"  # elsewhere: no project upward
    project.mkdir()
    elsewhere.mkdir()
    (project / "formwright.yaml").write_text("name: p\nstacks:\n  web: {template: t.yaml}\n")
    (project / "t.yaml").write_text("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n")
    assert complete(["formwright", "deploy", str(project), "-s", ""], elsewhere) == ["web"]
    assert complete(["formwright", "plan", str(project), "--stack", "w"], elsewhere) == ["web"]


def test_bash_completes_instance_names(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "q.yaml").write_text("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n")
    (tmp_path / "formwright.yaml").write_text("name: ic\nstacks:\n  q: {template: q.yaml}\n")
    assert run_cli("instance", "create", "demo", cwd=tmp_path).code == 0
    assert complete(["formwright", "instance", "show", ""], tmp_path) == ["demo"]
    assert complete(["formwright", "instance", "history", "d"], tmp_path) == ["demo"]


def test_bash_completes_folders_and_scopes_where_dir_or_a_scope_may_stand(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.yaml").write_text("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n")
    (tmp_path / "formwright.yaml").write_text(
        "name: p\nstacks:\n  web: {template: templates/t.yaml}\n"
        "groups:\n  net:\n    stacks:\n      vpc: {template: templates/t.yaml}\n")
    # inside the project the first word may be DIR or a scope (`formwright deploy web`)
    assert set(complete(["formwright", "deploy", ""], tmp_path)) == {"templates/", "net", "vpc", "web"}
    assert complete(["formwright", "deploy", "te"], tmp_path) == ["templates/"]
    assert complete(["formwright", "status", ".", "n"], tmp_path) == ["net"]  # after DIR: scopes
    assert complete(["formwright", "validate", ""], tmp_path) == ["templates/"]  # takes no scopes
