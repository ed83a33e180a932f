"""TOSCA corpus: a `reject` case is refused; a `transform` case transforms, lints, shellchecks, deploys.

What the corpus README asks (a transform exits 0 and writes template.yaml; a reject exits non-zero and writes
nothing), plus what issue 13 (item 5) asks of every template that transforms, each its own count:

- lint: cfn-lint (the one installed beside this interpreter) finds no error-level problem in template.yaml.
  One cfn-lint run takes every template, after the cases ran: loading its rules costs more than linting.
- shellcheck: every shell script formwright wrote passes shellcheck, at every severity: the deploy scripts
  (`scripts/`), the files it generated for the instances (a file under `files/` that is no copy of one of the
  source's; the source's own artifacts are the template author's, not formwright's), each Linux instance's
  user data and each cfn-init command (with its `env`). `${...}` of an `Fn::Sub` reads as a plain word.
- deploy: a temporary project whose one stack is `tosca: <case path>` with the case's inputs as the stack's
  `inputs:` is deployed by `formwright deploy` to a local cloud this runner starts on 127.0.0.1 (in a private
  FORMWRIGHT_HOME) and stops at the end; the stack must be CREATE_COMPLETE with every output of the template.
  Only what the local cloud cannot run is stubbed (`local_cloud: {stub: [...]}`), see `CANNOT_RUN`; the score
  line counts the stubs.
- runs (with `--runs` only: it boots instances and installs their packages, minutes per case): the case
  deployed again with `local_cloud: {instances: boot}`, its application run for real (`tosca_runs.py`).
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from common import Outcome, exit_detail, formwright, last_line, run
from tosca_runs import not_run
from tosca_runs import runs as run_application

DEPLOY_TIMEOUT = 300
# What the local cloud cannot run (docs/local-cloud.md), and why: stubbed only when the template has it
CANNOT_RUN = {
    # no instance boots here, so none sends the cfn-signal a CreationPolicy waits for
    "AWS::EC2::Instance": "cfn-signal",
    # ... nor the operation outputs a WaitCondition waits for (transform/cloudformation/outputs.py)
    "AWS::CloudFormation::WaitCondition": "signals",
    # moto has no Elastic Beanstalk
    "AWS::ElasticBeanstalk::Application": "Beanstalk",
    "AWS::ElasticBeanstalk::ApplicationVersion": "Beanstalk",
    "AWS::ElasticBeanstalk::Environment": "Beanstalk",
}
_SUB_VARIABLE = re.compile(r"\$\{(!?)([^}]*)\}")


# ---------------------------------------------------------------- the local cloud


@contextmanager
def local_cloud(home: Path, needed: bool) -> Iterator[tuple[dict[str, str], str]]:
    """Start a local cloud in the private `home` (when `needed`); yield the environment that targets it and,
    when it did not start, why. Stopped on the way out."""
    env = {"FORMWRIGHT_HOME": str(home), "FORMWRIGHT_TARGET": "local"}
    if not needed:
        yield env, "no local cloud"
        return
    started = formwright(["local-cloud", "start"], env=env, timeout=120)
    try:
        yield env, "" if started.returncode == 0 else f"the local cloud did not start: {exit_detail(started)}"
    finally:
        formwright(["local-cloud", "stop"], env=env, timeout=60)


# ---------------------------------------------------------------- transform


def transform(base: Path, case: dict[str, Any], out: Path) -> Outcome:
    """`formwright transform tosca <path> -o <out>` with the case's inputs."""
    args = ["transform", "tosca", str(base / case["path"]), "-o", str(out)]
    for key, value in (case.get("inputs") or {}).items():
        args += ["--input", f"{key}={value}"]
    proc = formwright(args)
    written = (out / "template.yaml").is_file()
    if case["expect"] == "transform":
        ok = proc.returncode == 0 and written
        detail = "" if ok else (exit_detail(proc) if proc.returncode else "exit 0 but no template.yaml")
        return Outcome(case["id"], "transform", ok, detail)
    ok = proc.returncode != 0 and not written
    detail = (f"accepted (exit {proc.returncode})" if proc.returncode == 0
              else "template written" if written else "")
    extra = {"message": last_line(proc.stderr), "reason": case.get("reason", "")}
    return Outcome(case["id"], "reject", ok, detail, extra=extra)


def load_template(out: Path) -> dict[str, Any]:
    """The produced template.yaml (short-form tags read as their long form)."""
    from formwright.template import loads

    return loads((out / "template.yaml").read_text(encoding="utf-8"))


# ---------------------------------------------------------------- shellcheck


def source_digests(source: Path, names: set[str]) -> set[str]:
    """sha256 of every file of the TOSCA source (a file's folder, a folder, or a CSAR's members) whose base
    name is in `names`: what a copied artifact may be a copy of."""
    digests: set[str] = set()
    if source.is_file() and zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as archive:
            for member in archive.namelist():
                if member.rsplit("/", 1)[-1] in names:
                    digests.add(hashlib.sha256(archive.read(member)).hexdigest())
        return digests
    folder = source if source.is_dir() else source.parent
    for path in folder.rglob("*"):
        if path.name in names and path.is_file():
            digests.add(hashlib.sha256(path.read_bytes()).hexdigest())
    return digests


def generated_files(out: Path, source: Path) -> list[Path]:
    """Shell scripts under `out/files` that formwright wrote (no copy of a file of the source)."""
    candidates = [p for p in sorted((out / "files").rglob("*"))
                  if p.is_file() and p.read_bytes()[:2] == b"#!"]
    copies = source_digests(source, {p.name for p in candidates})
    return [p for p in candidates if hashlib.sha256(p.read_bytes()).hexdigest() not in copies]


def as_text(value: Any) -> str | None:
    """A template value as the shell text it becomes: `Fn::Sub` variables and references as plain words,
    `Fn::Join` joined; None for what is not text."""
    if isinstance(value, str | int | float):
        return str(value)
    if not isinstance(value, dict) or len(value) != 1:
        return None
    (function, argument), = value.items()
    if function == "Fn::Sub":
        text = argument[0] if isinstance(argument, list) else argument
        return _SUB_VARIABLE.sub(lambda m: "${" + m.group(2) + "}" if m.group(1) else "substituted",
                                 text) if isinstance(text, str) else None
    if function == "Fn::Join" and isinstance(argument, list) and len(argument) == 2:
        parts = [as_text(part) for part in argument[1]] if isinstance(argument[1], list) else [None]
        return None if None in parts else str(argument[0]).join(p for p in parts if p is not None)
    if function in ("Ref", "Fn::GetAtt", "Fn::ImportValue", "Fn::Select", "Fn::If"):
        return "substituted"
    return None


def inline_scripts(template: dict[str, Any], folder: Path) -> list[Path]:
    """Each instance's Linux user data and each cfn-init command, written to `folder` as bash scripts."""
    folder.mkdir(parents=True, exist_ok=True)
    scripts: list[Path] = []
    for logical, resource in (template.get("Resources") or {}).items():
        if not isinstance(resource, dict) or resource.get("Type") != "AWS::EC2::Instance":
            continue
        user_data = (resource.get("Properties") or {}).get("UserData")
        if isinstance(user_data, dict) and "Fn::Base64" in user_data:
            user_data = user_data["Fn::Base64"]
        text = as_text(user_data)
        if text is not None and text.startswith("#!"):  # <powershell> user data is not shell
            scripts.append(folder / f"{logical}-user-data.sh")
            scripts[-1].write_text(text, encoding="utf-8")
        init = ((resource.get("Metadata") or {}).get("AWS::CloudFormation::Init") or {})
        for config_name, config in init.items():
            if not isinstance(config, dict):
                continue
            for command_name, command in (config.get("commands") or {}).items():
                text = as_text(command.get("command"))
                if text is None:  # a list is an argv, run without a shell
                    continue
                lines = ["#!/bin/bash", f"# {logical} {config_name} {command_name}"]
                for key, value in (command.get("env") or {}).items():
                    lines.append(f"export {key}={shlex.quote(as_text(value) or 'substituted')}")
                scripts.append(folder / f"{logical}-{config_name}-{command_name}.sh")
                scripts[-1].write_text("\n".join([*lines, text, ""]), encoding="utf-8")
    return scripts


def shellcheck(case_id: str, out: Path, source: Path, template: dict[str, Any], work: Path) -> Outcome:
    """Every script formwright wrote for the case, through shellcheck (all severities)."""
    program = shutil.which("shellcheck")
    if program is None:
        return Outcome(case_id, "shellcheck", False, "not installed (apt-get install shellcheck)")
    scripts = [*sorted((out / "scripts").rglob("*.sh")), *generated_files(out, source),
               *inline_scripts(template, work / "inline")]
    proc = run([program, "-x", "-s", "bash", "-f", "gcc", *map(str, scripts)], cwd=out)
    if proc.returncode == 0:
        return Outcome(case_id, "shellcheck", True)
    findings = [line.replace(str(work) + "/", "").replace(str(out) + "/", "")
                for line in proc.stdout.splitlines() if line.strip()]
    detail = f"{len(findings)} finding(s) in {len(scripts)} scripts: " + " | ".join(findings[:3])
    return Outcome(case_id, "shellcheck", False, detail or exit_detail(proc))


# ---------------------------------------------------------------- deploy


def stubs_for(template: dict[str, Any]) -> list[str]:
    """The types of `template` the local cloud cannot run (an instance only when it waits for cfn-signal)."""
    types = set()
    for resource in (template.get("Resources") or {}).values():
        kind = resource.get("Type") if isinstance(resource, dict) else None
        if kind in CANNOT_RUN and (kind != "AWS::EC2::Instance" or "CreationPolicy" in resource):
            types.add(kind)
    return sorted(types)


def project_name(index: int, case_id: str) -> str:
    """A project (and so stack) name for the case: unique, and valid as a CloudFormation stack name."""
    return f"c{index:02d}-" + re.sub(r"[^a-z0-9]+", "-", case_id.lower()).strip("-")[:60]


def deploy(base: Path, case: dict[str, Any], index: int, template: dict[str, Any], work: Path,
           cloud: tuple[dict[str, str], str]) -> Outcome:
    """The case as the `tosca:` stack of a new project, deployed by `formwright deploy` to the local cloud."""
    env, broken = cloud
    stubbed = stubs_for(template)
    if broken:
        return Outcome(case["id"], "deploy", False, broken)
    project = work / "project"
    project.mkdir()
    inputs = {str(k): str(v) for k, v in (case.get("inputs") or {}).items()}
    lines = [f"name: {project_name(index, case['id'])}", "region: us-east-1", "stacks:", "  app:",
             f"    tosca: {json.dumps(str(base / case['path']))}", f"    inputs: {json.dumps(inputs)}"]
    if stubbed:
        lines += ["local_cloud:", f"  stub: {json.dumps(stubbed)}"]
    (project / "formwright.yaml").write_text("\n".join([*lines, ""]), encoding="utf-8")
    proc = formwright(["deploy", str(project), "--yes", "--output", "json"], env=env, timeout=DEPLOY_TIMEOUT)
    extra = {"stubbed": stubbed}
    try:
        stack = json.loads(proc.stdout)["stacks"]["app"]
    except (ValueError, KeyError, TypeError):
        return Outcome(case["id"], "deploy", False, exit_detail(proc), extra=extra)
    if proc.returncode != 0 or stack.get("status") != "CREATE_COMPLETE":
        why = stack.get("error") or last_line(proc.stderr)
        return Outcome(case["id"], "deploy", False, f"exit {proc.returncode}, {stack.get('status')}: {why}",
                       extra=extra)
    missing = sorted(set(template.get("Outputs") or {}) - set(stack.get("outputs") or {}))
    if missing:
        return Outcome(case["id"], "deploy", False, f"outputs missing: {', '.join(missing)}", extra=extra)
    return Outcome(case["id"], "deploy", True, extra=extra)


# ---------------------------------------------------------------- lint


def cfn_lint_program() -> list[str] | None:
    """The cfn-lint installed beside this interpreter (the project's), else the one on PATH."""
    beside = Path(sys.executable).parent / "cfn-lint"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("cfn-lint")
    return [found] if found else None


def lint(templates: dict[str, Path]) -> dict[str, Outcome]:
    """One cfn-lint run over every case's template; a case passes with no error-level finding."""
    program = cfn_lint_program()
    if not templates:
        return {}
    if program is None:
        return {case: Outcome(case, "lint", False, "cfn-lint is not installed") for case in templates}
    proc = run([*program, "--format", "json", "--regions", "us-east-1", "--", *map(str, templates.values())],
               timeout=600)
    try:
        findings = json.loads(proc.stdout or "[]")
    except ValueError:
        return {case: Outcome(case, "lint", False, exit_detail(proc)) for case in templates}
    errors: dict[str, list[str]] = {}
    for finding in findings:
        if finding.get("Level") == "Error":
            line = finding.get("Location", {}).get("Start", {}).get("LineNumber")
            text = f"{finding['Rule']['Id']} line {line}: {finding.get('Message', '')[:160]}"
            errors.setdefault(str(Path(finding.get("Filename", "")).resolve()), []).append(text)
    outcomes = {}
    for case, path in templates.items():
        found = errors.get(str(path.resolve()), [])
        outcomes[case] = Outcome(case, "lint", not found,
                                 f"{len(found)} error(s): " + " | ".join(found[:3]) if found else "")
    return outcomes


# ---------------------------------------------------------------- the corpus


def run_case(base: Path, case: dict[str, Any], index: int, work: Path,
             cloud: tuple[dict[str, str], str], runs: bool = False) -> list[Outcome]:
    """A case's outcomes: reject, or transform, shellcheck, deploy and (with `runs`) runs; lint comes later,
    for all at once."""
    out = work / "out"
    done = transform(base, case, out)
    if case["expect"] != "transform":
        return [done]
    if not done.ok:
        return [done, *(Outcome(case["id"], check, False, "not transformed")
                        for check in ("shellcheck", "deploy")),
                *([not_run(case["id"], "not transformed", "not transformed")] if runs else [])]
    template = load_template(out)
    found = [done, shellcheck(case["id"], out, base / case["path"], template, work),
             deploy(base, case, index, template, work, cloud)]
    if runs:
        found.append(run_application(case, index, template, work, base / case["path"], cloud, CANNOT_RUN))
    return found


def run_tosca(base: Path, cases: list[dict[str, Any]], jobs: int, runs: bool = False) -> list[Outcome]:
    """Every case of the corpus, `jobs` at a time, then one cfn-lint over the templates; in case order, each
    case's outcomes as transform, lint, shellcheck, deploy, runs (with `runs`) or reject."""
    with tempfile.TemporaryDirectory(prefix="fw-conformance-tosca-") as tmp:
        root = Path(tmp)
        with local_cloud(root / "home", any(c["expect"] == "transform" for c in cases)) as cloud:

            def one(item: tuple[int, dict[str, Any]]) -> list[Outcome]:
                index, case = item
                work = root / f"case-{index:02d}"
                work.mkdir()
                try:
                    return run_case(base, case, index, work, cloud, runs)
                except Exception as exc:  # noqa: BLE001 - a broken case must not hide the others' scores
                    return [Outcome(case.get("id", "?"), case.get("expect", "?"), False,
                                    f"runner error: {type(exc).__name__}: {exc}")]

            with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
                per_case = list(pool.map(one, enumerate(cases)))
        templates = {case["id"]: root / f"case-{index:02d}" / "out" / "template.yaml"
                     for index, case in enumerate(cases) if case["expect"] == "transform"}
        linted = lint({case: path for case, path in templates.items() if path.is_file()})
        outcomes: list[Outcome] = []
        for case, found in zip(cases, per_case, strict=True):
            if case["expect"] == "transform" and found and found[0].group == "transform":
                found.insert(1, linted.get(case["id"], Outcome(case["id"], "lint", False, "not transformed")))
            outcomes.extend(found)
        return outcomes
