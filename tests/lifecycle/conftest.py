"""Lifecycle fixtures: projects written on the fly, a recording action, the Lifecycle on the local cloud."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from formwright.lifecycle.operations import Lifecycle

QUEUE = """\
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Label:
    Type: String
    Default: none
Resources:
  Queue:
    Type: AWS::SQS::Queue
Outputs:
  Name:
    Value: !Ref Label
  QueueUrl:
    Value: !Ref Queue
"""

# The recording action: appends "<element or -> <event>" to $RECORD_FILE; behaviour is steered by
# $CONTROL_FILE (JSON): {"fail": ["element/Event"], "sleep": {"element/Event": seconds}, "props": {...},
# "fail_once": {"element/Event": marker} (fails while the marker file is missing, creating it),
# "seen": path (appends "<where> <inputs as JSON>": what the action really received, secrets included)}.
RECORDER = """\
import json, os, sys, time
ctx = json.load(sys.stdin)
where = (ctx["element"] or "-") + "/" + ctx["event"]
with open(os.environ["RECORD_FILE"], "a") as f:
    f.write(where + "\\n")
if os.environ.get("FLOW_FILE"):
    with open(os.environ["FLOW_FILE"], "a") as f:
        f.write(json.dumps([ctx["event"], ctx["element"], ctx["operation"], ctx.get("retry_of"),
                            ctx["execution"]["attempt"]]) + "\\n")
control = {}
if os.environ.get("CONTROL_FILE") and os.path.exists(os.environ["CONTROL_FILE"]):
    control = json.load(open(os.environ["CONTROL_FILE"]))
for name, value in control.get("props", {}).get(where, {}).items():
    print("property:" + json.dumps({"name": name, "value": value, "secure": name.startswith("secret")}))
print("log:" + json.dumps({"level": "info", "msg": "ran " + where}))
print("plain output: inputs " + json.dumps(ctx["inputs"]))
print("transaction:" + json.dumps({"where": where, "attempt": ctx["execution"]["attempt"]}))
if control.get("seen"):
    with open(control["seen"], "a") as f:
        f.write(where + " " + json.dumps(ctx["inputs"], sort_keys=True) + "\\n")
if where in control.get("wait", {}):
    open(control["wait"][where] + ".ready", "w").close()
    while not os.path.exists(control["wait"][where]):
        time.sleep(0.05)
time.sleep(control.get("sleep", {}).get(where, 0))
once = control.get("fail_once", {}).get(where)
if once and not os.path.exists(once):
    open(once, "w").close()
    print("failing once on purpose", file=sys.stderr)
    sys.exit(3)
if where in control.get("fail", []):
    print("failing on purpose", file=sys.stderr)
    sys.exit(3)
"""

ALL_EVENTS = ["PreCreate", "PostCreate", "PreUpdate", "PostUpdate", "PreUpgrade", "PostUpgrade", "PreDelete",
              "PostDelete", "PreScope", "PostScope", "OnError"]


def triggers(indent: int, events: list[str] | None = None, timeout: float | None = None) -> str:
    """YAML for recording triggers on these events."""
    lines = []
    for event in events or ALL_EVENTS:
        lines.append(f"- event: {event}\n  action: [{sys.executable}, hooks/record.py]")
        if timeout:
            lines.append(f"  timeout: {timeout}")
    return textwrap.indent("\n".join(lines), " " * indent)


def write_project(
    folder: Path,
    stacks: dict[str, dict[str, Any]],
    *,
    version: str = "1.0",
    multiple: bool = True,
    inputs: str = "",
    extra: str = "",
    project_triggers: bool = True,
    stack_triggers: bool = True,
) -> Path:
    """A project of SQS-queue stacks; each stack: {params: {...}, depends: [...], immutable, regions}."""
    (folder / "templates").mkdir(parents=True, exist_ok=True)
    (folder / "hooks").mkdir(exist_ok=True)
    (folder / "templates" / "queue.yaml").write_text(QUEUE)
    (folder / "hooks" / "record.py").write_text(RECORDER)
    text = (f'name: life\nversion: "{version}"\nregion: us-east-1\n'
            f'policies:\n  multiple_instances: {str(multiple).lower()}\n')
    if inputs:
        text += "inputs:\n" + textwrap.indent(textwrap.dedent(inputs), "  ")
    if project_triggers:
        text += "triggers:\n" + triggers(2) + "\n"
    text += textwrap.dedent(extra)
    text += "stacks:\n"
    for name, spec in stacks.items():
        text += f"  {name}:\n    template: templates/queue.yaml\n"
        text += f"    stack_name: \"{spec.get('stack_name', '{{ instance.name }}-' + name)}\"\n"
        if spec.get("params"):
            text += "    parameters:\n" + "".join(f"      {k}: {v}\n" for k, v in spec["params"].items())
        if spec.get("depends"):
            text += f"    depends_on: [{', '.join(spec['depends'])}]\n"
        if spec.get("immutable"):
            text += "    immutable: true\n"
        if spec.get("regions"):
            text += f"    regions: {spec['regions']}\n"
        if stack_triggers and not spec.get("quiet"):
            text += "    triggers:\n" + triggers(6, spec.get("events")) + "\n"
    (folder / "formwright.yaml").write_text(text)
    return folder


@pytest.fixture
def recorder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    """Point the recording action at a file;
    calling the fixture's value returns what was recorded (and clears)."""
    record = tmp_path / "record.txt"
    control = tmp_path / "control.json"
    monkeypatch.setenv("RECORD_FILE", str(record))
    monkeypatch.setenv("CONTROL_FILE", str(control))

    def read() -> list[str]:
        lines = record.read_text().splitlines() if record.exists() else []
        record.unlink(missing_ok=True)
        return lines

    flow = tmp_path / "flow.jsonl"
    monkeypatch.setenv("FLOW_FILE", str(flow))

    def read_flow() -> list[tuple]:
        """(event, element, operation, retry_of, attempt) of every action run since the last read."""
        lines = flow.read_text().splitlines() if flow.exists() else []
        flow.unlink(missing_ok=True)
        record.unlink(missing_ok=True)
        return [tuple(json.loads(line)) for line in lines]

    read.control = control  # type: ignore[attr-defined]
    read.flow = read_flow  # type: ignore[attr-defined]
    return read


def set_control(recorder: Any, data: dict[str, Any]) -> None:
    """Steer the recording action."""
    recorder.control.write_text(json.dumps(data))


@pytest.fixture
def lifecycle(cloud, tmp_path: Path):
    """A Lifecycle whose home is tmp_path/home, on the clean local cloud."""
    home = tmp_path / "home"
    home.mkdir()
    lc = Lifecycle(home, cloud)
    yield lc
    lc.close()


def cfn_stacks(cloud, region: str = "us-east-1") -> dict[str, str]:
    """Live stacks in the local cloud: name -> status."""
    client = cloud.session().client("cloudformation", endpoint_url=cloud.endpoint, region_name=region)
    return {s["StackName"]: s["StackStatus"] for s in client.list_stacks()["StackSummaries"]
            if s["StackStatus"] != "DELETE_COMPLETE"}


def cli(args: list[str], cwd: Path, env: dict[str, str] | None = None, warm: Any = None,
        **kwargs: Any) -> Any:
    """Start the formwright CLI (its console script) as a child process: forked from the worker's warm
    formwright when `warm` is given (tests/warm_cli.py; stdin is then /dev/null), a Popen either way."""
    full = {**os.environ, "FORMWRIGHT_TARGET": "local", **(env or {})}
    script = str(Path(sys.executable).parent / "formwright")
    if warm is not None and not kwargs and warm.serves(full):
        return warm.popen(args, full, cwd, script=script)
    return subprocess.Popen([script, *args], cwd=cwd, env=full,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


@pytest.fixture
def h(warm_cli) -> SimpleNamespace:
    """The helpers above, for test modules (importlib import mode cannot import conftest)."""
    return SimpleNamespace(
        write_project=write_project,
        set_control=set_control,
        cfn_stacks=cfn_stacks,
        cli=functools.partial(cli, warm=warm_cli),
        triggers=triggers,
    )
