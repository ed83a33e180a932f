"""The first hour of a newcomer (issue 31): each test runs a command a sceptre, rain, Helm, Flux or kubectl
user typed on a first-use walk, and checks it now gives what they expect. Real child processes against the
session's local cloud (the run_cli fixture)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .workspace import QUEUE


def project(folder: Path, body: str = "", *, name: str = "walk", stacks: tuple[str, ...] = ("app",)) -> Path:
    """A project of queue stacks (`body` is more formwright.yaml, before `stacks:`)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "queue.yaml").write_text(QUEUE)
    (folder / "formwright.yaml").write_text(
        f"name: {name}\n{body}stacks:\n" + "".join(f"  {s}: {{template: queue.yaml}}\n" for s in stacks))
    return folder


# ---- point 2: an unknown region is exit 2 naming the nearest known ones ------------------------------
@pytest.mark.parametrize("argv", [["status", "--region", "us-east-7"],
                                  ["deploy", "--region", "us-eest-1", "-y"],
                                  ["expand", "queue.yaml", "--region", "us-east-7"]])
def test_an_unknown_region_flag_is_exit_2_naming_the_nearest(run_cli, tmp_path, argv) -> None:
    folder = project(tmp_path / "p")
    done = run_cli(*argv, cwd=folder)
    assert done.code == 2, done.err
    assert "unknown region" in done.err and "us-east-1" in done.err, done.err
    assert "Traceback" not in done.err and "proxy" not in done.err


def test_an_unknown_region_in_formwright_yaml_is_exit_2_at_its_line(run_cli, tmp_path) -> None:
    folder = project(tmp_path / "p", "region: us-east-7\n")
    done = run_cli("validate", cwd=folder)
    assert done.code == 2, done.err
    assert "formwright.yaml:2: unknown region 'us-east-7'" in done.err and "us-east-1" in done.err
    assert "internal error" not in done.err and "Traceback" not in done.err


# ---- point 5: `-o json` is the format for kubectl users: refused with the flag meant -------------------
@pytest.mark.parametrize("argv", [["graph", "-o", "json"], ["status", "-o", "json"], ["build", "-oyaml"]])
def test_dash_o_with_a_format_word_says_did_you_mean_output(run_cli, tmp_path, argv) -> None:
    folder = project(tmp_path / "p")
    done = run_cli(*argv, cwd=folder)
    assert done.code == 2
    word = argv[-1].removeprefix("-o") if argv[-1].startswith("-o") else argv[-1]
    assert f"did you mean --output {word}?" in done.err
    assert not (folder / word).exists()  # no file named `json` written
    done = run_cli("graph", "--output", "json", cwd=folder)
    assert done.code == 0 and json.loads(done.out)["nodes"]


# ---- point 7: a project with environments and no --env is refused, listing them ----------------------
ENVIRONMENTS = "environments:\n  dev: {vars: {size: small}}\n  prod: {vars: {size: large}}\n"


def test_environments_without_env_are_refused_listing_them(run_cli, tmp_path) -> None:
    folder = project(tmp_path / "p", ENVIRONMENTS)
    done = run_cli("plan", cwd=folder)
    assert done.code == 2, done.out + done.err
    assert "formwright.yaml:2: the project has environments (dev, prod); name one with --env" in done.err
    assert "--env dev" in done.err and "default_environment" in done.err
    planned = run_cli("plan", "--env", "dev", "--output", "json", cwd=folder)
    assert planned.code == 0, planned.err
    assert "walk-dev-app" in planned.out


def test_default_environment_is_used_without_env(run_cli, tmp_path) -> None:
    folder = project(tmp_path / "p", ENVIRONMENTS + "default_environment: dev\n")
    done = run_cli("plan", "--output", "json", cwd=folder)
    assert done.code == 0, done.err
    assert "walk-dev-app" in done.out
    (folder / "formwright.yaml").write_text(
        (folder / "formwright.yaml").read_text().replace("default_environment: dev",
                                                         "default_environment: qa"))
    bad = run_cli("plan", cwd=folder)
    assert bad.code == 2 and "formwright.yaml:5: default_environment 'qa' is not one of" in bad.err, bad.err


# ---- point 3: an instance operation shows its actions' output as they run; history --logs later -------
ACTION = """\
import json, sys
json.load(sys.stdin)
print("backing up the queue", flush=True)
print("log:" + json.dumps({"level": "info", "msg": "backup written"}), flush=True)
print("almost done", file=sys.stderr, flush=True)
"""


def test_instance_run_prints_its_actions_output_and_history_logs_keeps_it(run_cli, tmp_path) -> None:
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "queue.yaml").write_text(QUEUE)
    (folder / "backup.py").write_text(ACTION)
    (folder / "formwright.yaml").write_text(
        "name: shop\nregion: us-east-1\n"
        f"operations:\n  backup:\n    action: [{sys.executable}, backup.py]\n"
        "stacks:\n  app: {template: queue.yaml, stack_name: \"{{ instance.name }}-app\"}\n")
    assert run_cli("instance", "create", "demo", "-q", cwd=folder).code == 0
    done = run_cli("instance", "run", "demo", "backup", cwd=folder)
    assert done.code == 0, done.err
    shown = done.out + done.err
    assert "backing up the queue" in shown and "backup written" in shown and "almost done" in shown
    quiet = run_cli("instance", "run", "demo", "backup", "--quiet", cwd=folder)
    assert quiet.code == 0 and "backing up the queue" not in quiet.out + quiet.err
    history = run_cli("history", "demo", "--logs", cwd=folder)
    assert history.code == 0, history.err
    assert history.out.count("backing up the queue") == 2 and "backup written" in history.out
    logs = run_cli("history", "demo", "--logs", "--output", "json", cwd=folder).json()
    assert any("almost done" in line for op in logs["operations"] for line in op["log"])


# ---- point 15: stacks outside any project: `ls`, and --stack-name on status, events, outputs, diff -----
def _made_elsewhere(cloud, name: str, tags: dict[str, str]) -> None:
    """A stack made by another tool (boto3 here), with the tags its owner writes."""
    cloud.client("cloudformation").create_stack(
        StackName=name, TemplateBody=QUEUE, Tags=[{"Key": k, "Value": v} for k, v in tags.items()])


def test_ls_lists_every_stack_with_its_owner(run_cli, cloud, tmp_path) -> None:
    _made_elsewhere(cloud, "shop-prod-app", {"formwright:project": "shop", "formwright:environment": "prod"})
    _made_elsewhere(cloud, "flux-app", {"cfn-flux-controller/name": "app",
                                        "cfn-flux-controller/namespace": "flux-system"})
    _made_elsewhere(cloud, "by-hand", {})
    done = run_cli("ls", cwd=tmp_path)
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0].split() == ["STACK", "STATUS", "OWNER", "UPDATED"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert "formwright shop/prod" in rows["shop-prod-app"] and "CREATE_COMPLETE" in rows["shop-prod-app"]
    assert "sync flux-system/app" in rows["flux-app"]
    assert rows["by-hand"].split()[2] == "none"
    listed = run_cli("ls", "--region", "us-east-1", "--region", "eu-west-1", "--output", "json").json()
    assert {s["stack_name"] for s in listed["stacks"]} == {"shop-prod-app", "flux-app", "by-hand"}
    assert {s["region"] for s in listed["stacks"]} == {"us-east-1"}


def test_stack_name_reads_a_stack_in_no_project(run_cli, cloud, tmp_path) -> None:
    _made_elsewhere(cloud, "by-hand", {})
    status = run_cli("status", "--stack-name", "by-hand", cwd=tmp_path)
    assert status.code == 0 and "by-hand" in status.out and "CREATE_COMPLETE" in status.out, status.err
    events = run_cli("events", "--stack-name", "by-hand", cwd=tmp_path)
    assert events.code == 0 and "AWS::SQS::Queue" in events.out, events.err
    outputs = run_cli("outputs", "--stack-name", "by-hand", "QueueName", cwd=tmp_path)
    assert outputs.code == 0 and outputs.out.strip(), outputs.err
    (tmp_path / "local.yaml").write_text(QUEUE.replace("Type: AWS::SQS::Queue", "Type: AWS::SNS::Topic"))
    diff = run_cli("diff", "--stack-name", "by-hand", "--template", "local.yaml", "--exit-code", cwd=tmp_path)
    assert diff.code == 1, diff.err
    assert "-    Type: AWS::SQS::Queue" in diff.out and "+    Type: AWS::SNS::Topic" in diff.out
    missing = run_cli("status", "--stack-name", "nope", cwd=tmp_path)
    assert missing.code == 1 and "stack 'nope' does not exist" in missing.err
    assert "formwright ls" in missing.err


# ---- point 6: events and diff take a SCOPE inside a project, as deploy does ---------------------------
def test_events_and_diff_take_a_scope_inside_the_project(run_cli, cloud, tmp_path) -> None:
    folder = project(tmp_path / "p", "region: us-east-1\n", stacks=("app", "db"))
    assert run_cli("deploy", "app", "-y", cwd=folder).code == 0
    events = run_cli("events", "app", cwd=folder)
    assert events.code == 0 and "walk-app" in events.out, events.err
    diff = run_cli("diff", "app", cwd=folder)
    assert diff.code == 0 and "app: no differences" in diff.out, diff.err
    # point 14: events of a stack never deployed say so (exit 1), not an empty exit 0
    undeployed = run_cli("events", "-s", "db", cwd=folder)
    assert undeployed.code == 1 and "not deployed: db" in undeployed.err, undeployed.err


# ---- point 1: `make demo`, then `formwright status examples/three-tier` in the user's shell ------------
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_the_demo_cloud_is_the_one_the_users_shell_finds(tmp_path) -> None:
    """`make demo`'s formwright commands (read with `make -n`, run as the Makefile would, without its
    pip install), then the README's next command from a shell that sets nothing: the same local cloud."""
    shutil.copytree(ROOT / "examples" / "three-tier", tmp_path / "examples" / "three-tier",
                    ignore=shutil.ignore_patterns(".formwright"))
    fw = f"{sys.executable} -m formwright"
    listed = subprocess.run(["make", "-s", "-n", "-f", str(ROOT / "Makefile"), "demo", f"FW={fw}"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    steps = [line for line in listed.splitlines() if line.startswith(fw)]
    assert steps and "FORMWRIGHT_HOME" not in listed
    shell = {k: v for k, v in os.environ.items() if k not in ("FORMWRIGHT_HOME", "FORMWRIGHT_TARGET")}
    shell["HOME"] = str(tmp_path / "user")  # the user's default home: ~/.formwright
    try:
        for step in steps:
            done = subprocess.run(step, shell=True, cwd=tmp_path, env=shell, capture_output=True, text=True,
                                  timeout=600)
            assert done.returncode == 0, done.stderr
        status = subprocess.run([*fw.split(), "status", "examples/three-tier"], cwd=tmp_path, env=shell,
                                capture_output=True, text=True, timeout=300)
        assert status.returncode == 0, status.stderr
        assert status.stdout.count("CREATE_COMPLETE") == 3, status.stdout
    finally:
        subprocess.run([*fw.split(), "local-cloud", "stop"], env=shell, capture_output=True, timeout=120)


# ---- point 8: what a sceptre, terraform or helm user types maps to formwright's command -----------------
@pytest.mark.parametrize(("typed", "ours"), [("destroy", "delete"), ("launch", "deploy"), ("list", "ls"),
                                             ("apply", "deploy")])
def test_other_tools_commands_say_formwrights_name(run_cli, tmp_path, typed, ours) -> None:
    done = run_cli(typed, cwd=tmp_path)
    assert done.code == 2
    assert f"no command '{typed}'" in done.err and f"did you mean `formwright {ours}`?" in done.err


# ---- point 4 and point 14: an undefined name says what defines it --------------------------------------
def test_status_of_a_project_of_instances_points_at_the_instance_commands(run_cli, tmp_path) -> None:
    done = run_cli("status", str(ROOT / "examples" / "lifecycle"), cwd=tmp_path)
    assert done.code == 2
    assert "a project of instances" in done.err and "formwright instance list" in done.err.replace("`", "")
    assert "--var" not in done.err


def test_an_undefined_environment_variable_says_export_not_var(run_cli, tmp_path) -> None:
    folder = project(tmp_path / "p", 'tags: {stage: "{{ env.FW_STAGE_X }}"}\n')
    done = run_cli("validate", cwd=folder)
    assert done.code == 2
    assert "export FW_STAGE_X=" in done.err and "--var" not in done.err


# ---- point 14: init of a folder whose name is no stack name; local-cloud stop says what it drops ---------
def test_init_of_a_folder_with_a_space_makes_a_project_that_validates(run_cli, tmp_path) -> None:
    done = run_cli("init", "bad name", cwd=tmp_path)
    assert done.code == 0, done.err
    assert "name: bad-name" in (tmp_path / "bad name" / "formwright.yaml").read_text()
    assert "formwright validate 'bad name'" in done.out
    assert run_cli("validate", "bad name", "--no-lint", cwd=tmp_path).code == 0
    refused = run_cli("init", "other", "--name", "bad name", cwd=tmp_path)
    assert refused.code == 2 and "--name bad-name" in refused.err and not (tmp_path / "other").exists()


def test_local_cloud_stop_says_what_it_keeps(run_cli, tmp_path) -> None:
    # point 14 ("drops every stack without a word"): since issue 30 a stop keeps the state for the next
    # start, and says how many stacks it keeps and where
    home = {"FORMWRIGHT_HOME": str(tmp_path / "home")}
    assert run_cli("local-cloud", "start", env=home).code == 0
    try:
        folder = project(tmp_path / "p", "region: us-east-1\n")
        assert run_cli("deploy", "-y", cwd=folder, env=home).code == 0
    finally:
        done = run_cli("local-cloud", "stop", env=home)
    assert done.code == 0, done.err
    assert "1 stack(s) kept in" in done.out and "`start --reset` starts empty" in done.out


# ---- point 14: every error of a bad formwright.yaml in one run, each at its line ------------------------
def test_every_error_of_a_bad_project_file_is_reported_at_its_line(run_cli, tmp_path) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "queue.yaml").write_text(QUEUE)
    (folder / "formwright.yaml").write_text(
        "name: x\nregoin: us-east-1\nstacks:\n  a: {template: queue.yaml, paramters: {}}\n"
        "  b: {template: missing.yaml}\n  c: {template: queue.yaml, region: us-east-7}\n"
        + "".join(f"  s{i}: {{template: queue.yaml, bad{i}: 1}}\n" for i in range(30)))
    done = run_cli("validate", cwd=folder)
    assert done.code == 2
    lines = done.err.splitlines()
    assert "formwright.yaml:2: unknown key 'regoin' in the project (did you mean 'region'?)" in lines[0]
    assert "formwright.yaml:4: unknown key 'paramters' in stack 'a'" in lines[1]
    assert "formwright.yaml:5: template 'missing.yaml' of stack 'b' not found" in lines[2]
    assert "formwright.yaml:6: unknown region 'us-east-7'" in lines[3]
    assert len([line for line in lines if line.startswith("error:")]) == 20 and lines[-1] == "20 errors"
    answer = run_cli("validate", "--output", "json", cwd=folder).json()
    assert [e["line"] for e in answer["errors"][:4]] == [2, 4, 5, 6] and len(answer["errors"]) == 20


# ---- point 9: the macros example's folder, as passed to --macros, points at its executables -------------
def test_expand_with_the_macros_example_folder_points_at_its_bin(run_cli, tmp_path) -> None:
    (tmp_path / "counted.yaml").write_text(
        "Transform: Count\nResources:\n  Queue:\n    Type: AWS::SQS::Queue\n    Count: 3\n")
    macros = ROOT / "examples" / "macros"
    done = run_cli("expand", "counted.yaml", "--macros", str(macros), cwd=tmp_path)
    assert done.code == 2
    assert f"Count is in {macros / 'bin'}: pass --macros {macros / 'bin'}" in done.err, done.err
    assert "did you mean count?" not in done.err
    works = run_cli("expand", "counted.yaml", "--macros", str(macros / "bin"), cwd=tmp_path)
    assert works.code == 0 and "Queue3" in works.out, works.err


# ---- point 10: transform tosca ends with a way to deploy that works from where the user is ----------------
def test_transform_tosca_ends_with_a_deploy_that_works(run_cli, tmp_path) -> None:
    done = run_cli("transform", "tosca", str(ROOT / "examples" / "tosca" / "nodejs"), "-o", "out",
                   cwd=tmp_path)
    assert done.code == 0, done.err
    assert "or formwright deploy\n" not in done.out
    assert "out/scripts/deploy.sh" in done.out and "tosca:" in done.out


# ---- point 12: Ctrl-C during a deploy lists the right stacks and leaves the lock free --------------------
def test_ctrl_c_during_a_deploy_lists_what_runs_and_what_never_started(run_cli, cloud, tmp_path) -> None:
    import signal

    folder = project(tmp_path / "p", "region: us-east-1\n", stacks=tuple(f"s{i:02d}" for i in range(12)))
    proc = subprocess.Popen([sys.executable, "-m", "formwright", "deploy", "-y", "--max-concurrency", "1"],
                            cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:  # plain progress lines off a terminal; Ctrl-C once the first stack is done
        seen.append(line)
        if ": done" in line:
            proc.send_signal(signal.SIGINT)
            break
    rest = proc.communicate(timeout=120)[1]
    assert proc.returncode == 130, "".join(seen) + rest
    said = next(line for line in rest.splitlines() if "interrupted:" in line)
    assert said.startswith("interrupted:"), rest  # on a line of its own
    assert "not started: " in said and "s11" in said.split("not started: ")[1]
    assert "s00" not in said  # done: neither running nor unstarted
    running = said.split("cloud: ")[1].split(";")[0].split(", ") if "cloud: " in said else []
    for status in [part.rsplit(" (", 1)[1] for part in running]:
        assert "IN_PROGRESS" in status or status.rstrip(")") in ("creating", "updating", "planning"), said
    again = run_cli("deploy", "-y", cwd=folder)
    assert again.code == 0, again.err
    assert "stale lock" not in again.err


def test_a_finished_stack_is_not_listed_as_in_progress_on_ctrl_c(tmp_path) -> None:
    script = (
        "import os, signal, sys, time\n"
        "from formwright.cli.progress import Progress\n"
        "from formwright.engine.results import ProgressEvent\n"
        "with Progress(['s10', 's11', 's12'], interruptible=True) as progress:\n"
        "    progress(ProgressEvent('s10', 'updating', 'UPDATE_IN_PROGRESS', ''))\n"
        "    progress(ProgressEvent('s11', 'updating', 'UPDATE_COMPLETE', ''))\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(30)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 130
    assert "still in progress in the cloud: s10 (UPDATE_IN_PROGRESS); not started: s12" in done.stderr


# ---- point 13: the live display's words agree; the end of a deploy has totals ----------------------------
def test_the_live_row_never_says_updating_create_complete() -> None:
    import io

    from rich.console import Console

    from formwright.cli.progress import Progress
    from formwright.engine.results import ProgressEvent

    console = Console(file=io.StringIO(), width=120, height=30, force_terminal=True, color_system=None)
    progress = Progress(["s19"], console=console)
    progress(ProgressEvent("s19", "planning", "CREATE_COMPLETE", "creating change set"))
    progress(ProgressEvent("s19", "updating", "", "executing 1 change(s)"))
    progress(ProgressEvent("s19", "updating", "CREATE_COMPLETE", ""))  # read before the update began
    console.print(progress.render(30))
    row = next(line for line in console.file.getvalue().splitlines() if line.startswith("s19"))
    assert "updating" in row and "CREATE_COMPLETE" not in row
    progress(ProgressEvent("s19", "updating", "UPDATE_IN_PROGRESS", ""))
    console.print(progress.render(30))
    assert "UPDATE_IN_PROGRESS" in console.file.getvalue().splitlines()[-1] or \
        "UPDATE_IN_PROGRESS" in console.file.getvalue()


def test_the_end_of_a_deploy_counts_instead_of_listing_unchanged_stacks(run_cli, cloud, tmp_path) -> None:
    folder = project(tmp_path / "p", "region: us-east-1\n", stacks=tuple(f"s{i:02d}" for i in range(6)))
    first = run_cli("deploy", "-y", cwd=folder)
    assert first.code == 0, first.err
    assert "6 stack(s): 6 created, 0 failed" in first.out
    changed = QUEUE.replace("Type: AWS::SQS::Queue",
                            "Type: AWS::SQS::Queue\n    Properties: {DelaySeconds: 5}")
    (folder / "other.yaml").write_text(changed)
    text = (folder / "formwright.yaml").read_text().replace("s03: {template: queue.yaml}",
                                                             "s03: {template: other.yaml}")
    (folder / "formwright.yaml").write_text(text)
    again = run_cli("deploy", "-y", cwd=folder)
    assert again.code == 0, again.err
    assert "6 stack(s): 1 updated, 5 unchanged, 0 failed" in again.out, again.out
    assert "s00" not in again.out and "s03" in again.out  # the unchanged ones are counted, not listed


# ---- point 14: a misspelt field of a sync object says which one was meant -------------------------------
def test_a_misspelt_sync_object_field_says_did_you_mean(run_cli, tmp_path) -> None:
    folder = tmp_path / "objects"
    folder.mkdir()
    (folder / "app.yaml").write_text(
        "apiVersion: cloudformation.contrib.fluxcd.io/v1alpha1\nkind: CloudFormationStack\n"
        "metadata: {name: app, namespace: default}\n"
        "spec:\n  stackName: app\n  templatePath: t.yaml\n  interval: 1m\n"
        "  sourceRef: {kind: GitRepository, name: repo}\n  stackParameter: []\n")
    done = run_cli("sync", "status", str(folder))
    assert done.code == 2
    assert "app.yaml:9" in done.err and "unknown field 'stackParameter'" in done.err, done.err
    assert "did you mean 'stackParameters'?" in done.err and "Extra inputs" not in done.err


# ---- point 11: `sync status` at 80 columns keeps every cell whole, as `flux get` does --------------------
def test_sync_status_in_an_80_column_terminal_cuts_no_cell(run_cli, tmp_path) -> None:
    from .terminal import run_in_terminal

    folder = tmp_path / "objects"
    folder.mkdir()
    (folder / "app.yaml").write_text(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\n"
        "metadata: {name: repo, namespace: flux-system}\n"
        "spec: {url: https://example.com/r.git, ref: {branch: main}, interval: 1m}\n---\n"
        "apiVersion: cloudformation.contrib.fluxcd.io/v1alpha1\nkind: CloudFormationStack\n"
        "metadata: {name: a-rather-long-stack-object-name, namespace: flux-system}\n"
        "spec: {stackName: app, templatePath: t.yaml, interval: 1m,\n"
        "       sourceRef: {kind: GitRepository, name: repo}}\n")
    code, screen = run_in_terminal("sync", "status", str(folder), columns=80)
    assert code == 0, screen
    assert "flux-system/a-rather-long-stack-object-name" in screen and "…" not in screen, screen
    assert screen.splitlines()[0].split() == ["NAME", "READY", "REASON", "REVISION", "NEXT", "RUN", "MESSAGE"]


# ---- point 16: bad input is exit 2 at once, never an internal error or a late failure --------------------
def test_a_template_that_is_a_device_is_bad_input(run_cli, tmp_path) -> None:
    done = run_cli("expand", "/dev/zero", cwd=tmp_path, timeout=120)
    assert done.code == 2 and "/dev/zero: the template is not a regular file" in done.err, done.err


@pytest.mark.parametrize(("out", "said"), [("missing/dir/out.json", "no folder missing/dir"),
                                           ("existing", "a folder")])
def test_expand_out_into_a_missing_folder_or_onto_a_folder_is_bad_input(run_cli, tmp_path, out, said) -> None:
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "existing").mkdir()
    done = run_cli("expand", "queue.yaml", "-o", out, cwd=tmp_path)
    assert done.code == 2 and said in done.err and "internal error" not in done.err, done.err


def test_a_csar_whose_meta_is_a_folder_is_bad_input(run_cli, tmp_path) -> None:
    import zipfile

    with zipfile.ZipFile(tmp_path / "bad.csar", "w") as archive:
        archive.writestr("TOSCA-Metadata/TOSCA.meta/", "")
    done = run_cli("transform", "tosca", "bad.csar", "-o", "out", cwd=tmp_path)
    assert done.code == 2 and "TOSCA.meta is a folder" in done.err, done.err


def test_unused_bad_macros_of_formwright_yaml_fail_validate(run_cli, tmp_path) -> None:
    folder = project(tmp_path / "p", "macros:\n  Missing: nope.py\n  NotExec: plain\n  Num: 123\n"
                                     "  AWS::Foo: x.py\n")
    (folder / "plain").write_text("not a program\n")
    done = run_cli("validate", "--no-lint", cwd=folder)
    assert done.code == 2
    assert "formwright.yaml:3: macro Missing:" in done.err and "is not a file" in done.err
    assert "formwright.yaml:4: macro NotExec:" in done.err and "is not executable" in done.err
    assert "formwright.yaml:5: macro Num: 123 is not a path" in done.err
    assert "formwright.yaml:6: macro name 'AWS::Foo'" in done.err


@pytest.mark.parametrize(("action", "said"), [
    ("[hooks/missing.sh]", "action program 'hooks/missing.sh' not found"),
    ("[hooks/plain.sh]", "action program 'hooks/plain.sh' is not executable"),
    ("[./hooks]", "action program './hooks' is a folder"),
    ("nosuchmodule_fw.hooks:seed", "Python hook module 'nosuchmodule_fw.hooks' not found"),
])
def test_a_broken_instance_action_fails_validate_and_create_writes_nothing(run_cli, tmp_path, action,
                                                                          said) -> None:
    folder = project(tmp_path / "p",
                     f"region: us-east-1\ntriggers:\n  - {{event: PreCreate, action: {action}}}\n")
    (folder / "hooks").mkdir()
    (folder / "hooks" / "plain.sh").write_text("echo hi\n")
    (folder / "formwright.yaml").write_text((folder / "formwright.yaml").read_text().replace(
        "app: {template: queue.yaml}", 'app: {template: queue.yaml, stack_name: "{{ instance.name }}-app"}'))
    checked = run_cli("validate", "--no-lint", cwd=folder)
    assert checked.code == 2 and f"formwright.yaml:4: {said}" in checked.err, checked.err
    created = run_cli("instance", "create", "demo", cwd=folder)
    assert created.code == 2 and said in created.err, created.err
    listed = run_cli("instance", "list", "--output", "json", cwd=folder)
    assert listed.code == 0 and listed.json()["instances"] == []


# ---- point 14: status of a multi-region project says which copy is where --------------------------------
def test_status_of_a_multi_region_project_has_a_region_column(run_cli, cloud, tmp_path) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "queue.yaml").write_text(QUEUE)
    (folder / "formwright.yaml").write_text(
        "name: walk\nregion: us-east-1\nstacks:\n"
        "  app: {template: queue.yaml, regions: [us-east-1, eu-west-1]}\n")
    done = run_cli("status", cwd=folder)
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0].split() == ["STACK", "CLOUD", "NAME", "REGION", "STATUS", "UPDATED"]
    assert ["app@eu-west-1", "walk-app-eu-west-1", "eu-west-1"] in [line.split()[:3] for line in lines]


@pytest.mark.parametrize(("snippet", "said"), [
    ("A: " + "[" * 5000 + "]" * 5000 + "\n", "is nested more than 100 levels deep"),
    ("A: " + "9" * 5000 + "\n", "holds a number too long to read"),
])
def test_a_hostile_include_snippet_is_bad_input(run_cli, tmp_path, snippet, said) -> None:
    (tmp_path / "snippet.yaml").write_text(snippet)
    (tmp_path / "t.yaml").write_text("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n"
                                     "      Fn::Transform:\n        Name: AWS::Include\n"
                                     "        Parameters: {Location: snippet.yaml}\n")
    done = run_cli("expand", "t.yaml", cwd=tmp_path)
    assert done.code == 2 and said in done.err and "internal error" not in done.err, done.err


def test_a_property_of_an_unknown_stack_fails_validate_and_create(run_cli, tmp_path) -> None:
    folder = project(tmp_path / "p", "region: us-east-1\n", stacks=("net",))
    (folder / "formwright.yaml").write_text((folder / "formwright.yaml").read_text() + (
        '  app:\n    template: queue.yaml\n    stack_name: "{{ instance.name }}-app"\n'
        "    tags: {from: \"{{ property('nte.QueueName') }}\"}\n").replace(
        "net: {template: queue.yaml}", 'net: {template: queue.yaml, stack_name: "{{ instance.name }}-net"}'))
    checked = run_cli("validate", "--no-lint", cwd=folder)
    assert checked.code == 2, checked.err
    assert "formwright.yaml:8: property('nte.QueueName'): the project has no stack 'nte'" in checked.err
    assert "did you mean 'net'?" in checked.err
    created = run_cli("instance", "create", "demo", cwd=folder)
    assert created.code == 2 and "no stack 'nte'" in created.err, created.err
    assert run_cli("instance", "list", "--output", "json", cwd=folder).json()["instances"] == []
