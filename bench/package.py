"""Packaging benchmark: formwright's deploy of a project with 20 functions against the AWS CLI's
`aws cloudformation package` + `aws cloudformation deploy` of the same template, on one local cloud.

Three steps each: the first deploy, a no-op re-deploy and a re-deploy with one function's code changed.
formwright's no-op is also compared with the no-op of the same project whose functions carry their code
inline (`ZipFile`, no artifacts at all). Targets (issue 28): the no-op uploads nothing and takes <= 1.2x
the no-op without artifacts; one changed function <= 0.5x the AWS CLI's package + deploy.

    .venv/bin/python bench/package.py [--functions 20] [--rounds 3]

Plain `AWS::Lambda::Function` resources (`Code: fnNN/`), as the local cloud runs no SAM transform for
the AWS CLI's `deploy` (formwright expands SAM itself). Every tool runs as its own process with the same
environment (the local cloud's endpoint through AWS_ENDPOINT_URL); the best of `--rounds` is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FW = [sys.executable, "-m", "formwright"]
AWS = [sys.executable, "-m", "awscli"]
BUCKET = "bench-artifacts"
ROLE = {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {
    "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                            "Principal": {"Service": "lambda.amazonaws.com"}}]}}}


def template(count: int, inline: bool) -> dict:
    """`count` functions, their code in fnNN/ (or inline), sharing one role."""
    resources: dict = {"Role": ROLE}
    for i in range(count):
        code = {"ZipFile": f"def handler(e, c):\n    return {i}\n"} if inline else f"fn{i:02d}/"
        resources[f"Fn{i:02d}"] = {"Type": "AWS::Lambda::Function", "Properties": {
            "Code": code, "Handler": "app.handler", "Runtime": "python3.12",
            "Role": {"Fn::GetAtt": ["Role", "Arn"]}}}
    return {"Resources": resources}


def make_project(root: Path, count: int, inline: bool) -> Path:
    """A formwright project with one stack of `count` functions; their folders beside the template."""
    root.mkdir(parents=True)
    (root / "formwright.yaml").write_text(f"name: {root.name}\nstacks:\n  fns:\n    template: template.json\n"
                                          "    capabilities: [CAPABILITY_IAM]\n")
    (root / "template.json").write_text(json.dumps(template(count, inline), indent=1))
    for i in range(count):
        folder = root / f"fn{i:02d}"
        folder.mkdir()
        body = f"def handler(event, context):\n    return {i}\n" + "# padding\n" * 200
        (folder / "app.py").write_text(body)
    return root


def run(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, str]:
    """Run a command; its wall time and stdout; fail loudly if it fails."""
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=1800, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:5])} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, proc.stdout


def change_one(project: Path, round_: int) -> None:
    with open(project / "fn07" / "app.py", "a") as handle:
        handle.write(f"# change {round_}\n")


def formwright_steps(project: Path, env: dict[str, str], rounds: int) -> dict:
    deploy = [*FW, "deploy", str(project), "-y", "--output", "json"]
    first, _ = run(deploy, env)
    noops, changed, puts = [], [], []
    for round_ in range(rounds):
        wall, out = run(deploy, env)
        data = json.loads(out)
        assert data["write_calls"] == 0 and "put_object" not in data["calls"], data
        noops.append(wall)
        change_one(project, round_)
        wall, out = run(deploy, env)
        data = json.loads(out)
        assert data["stacks"]["fns"]["outcome"] == "updated", data
        puts.append(data["calls"].get("put_object", 0))
        changed.append(wall)
    return {"first": first, "noop": min(noops), "changed": min(changed), "changed_puts": max(puts)}


def awscli_steps(project: Path, env: dict[str, str], rounds: int, name: str) -> dict:
    packaged = project / "packaged.yaml"
    package = [*AWS, "cloudformation", "package", "--template-file", str(project / "template.json"),
               "--s3-bucket", BUCKET, "--output-template-file", str(packaged)]
    deploy = [*AWS, "cloudformation", "deploy", "--template-file", str(packaged), "--stack-name", name,
              "--capabilities", "CAPABILITY_IAM", "--no-fail-on-empty-changeset"]

    def both() -> float:
        return run(package, env)[0] + run(deploy, env)[0]

    first = both()
    noops, changed = [], []
    for round_ in range(rounds):
        noops.append(both())
        change_one(project, round_)
        changed.append(both())
    return {"first": first, "noop": min(noops), "changed": min(changed)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from startup import compile_bytecode  # bench/ is the script's folder: the one bytecode helper

    from formwright.cloud import local

    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="fw-bench-package-") as tmp:
        root = Path(tmp)
        os.environ["FORMWRIGHT_HOME"] = str(root / "home")
        cloud, _ = local.start()
        try:
            env = {**os.environ, "FORMWRIGHT_TARGET": "local", "AWS_ENDPOINT_URL": cloud.endpoint,
                   "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                   "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1"}
            env.pop("AWS_PROFILE", None)
            run([*AWS, "s3", "mb", f"s3://{BUCKET}"], env)
            fw = formwright_steps(make_project(root / "fwcode", args.functions, False), env, args.rounds)
            inline = formwright_steps_inline(make_project(root / "fwinline", args.functions, True), env,
                                             args.rounds)
            aws = awscli_steps(make_project(root / "awscli", args.functions, False), env, args.rounds,
                               "awscli-fns")
        finally:
            local.stop()
            shutil.rmtree(root / "home", ignore_errors=True)
    print(f"{args.functions} functions, best of {args.rounds}; seconds (wall, each tool its own process)")
    print(f"{'':34}{'first':>8}{'no-op':>8}{'1 changed':>11}")
    print(f"{'formwright deploy':34}{fw['first']:8.2f}{fw['noop']:8.2f}{fw['changed']:11.2f}")
    print(f"{'formwright, code inline (no-op)':34}{'':8}{inline['noop']:8.2f}")
    awscli = "aws cloudformation package+deploy"
    print(f"{awscli:34}{aws['first']:8.2f}{aws['noop']:8.2f}{aws['changed']:11.2f}")
    noop_ratio = fw["noop"] / inline["noop"]
    changed_ratio = fw["changed"] / aws["changed"]
    print(f"no-op: 0 uploads, 0 writes; {noop_ratio:.2f}x the no-op without artifacts (target <= 1.2x)")
    print(f"one changed: {fw['changed_puts']} upload(s); {changed_ratio:.2f}x the AWS CLI's package+deploy "
          "(target <= 0.5x)")


def formwright_steps_inline(project: Path, env: dict[str, str], rounds: int) -> dict:
    """The same project with its code inline: its no-op is the floor of a no-op."""
    deploy = [*FW, "deploy", str(project), "-y", "--output", "json"]
    run(deploy, env)
    return {"noop": min(run(deploy, env)[0] for _ in range(rounds))}


if __name__ == "__main__":
    main()
