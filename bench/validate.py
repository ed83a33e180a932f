"""validate benchmark: `formwright validate` on 30 stacks sharing one 50-resource template, against
running cfn-lint once on that template (the floor: linting it at all).

Target (issue 16): <= 3 s for the whole project. Both run as their own process, each paying its own
start-up, on a quiet machine for the target to mean anything. formwright's bytecode is compiled first, as
`pip install` does (cfn-lint's is, being installed).

    .venv/bin/python bench/validate.py [--stacks 30] [--resources 50] [--runs 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from startup import compile_bytecode, load_note, timed  # bench/ is the script's folder: one set of helpers

FW = [sys.executable, "-m", "formwright"]
CFN_LINT = [str(Path(sys.executable).parent / "cfn-lint")]  # its console script, as a user runs it


def template(resources: int) -> str:
    """A YAML template of `resources` resources: queues, topics and SSM parameters that reference them."""
    lines = ['AWSTemplateFormatVersion: "2010-09-09"', "Parameters:", "  Env:", "    Type: String",
             "    Default: dev", "Resources:"]
    for i in range(resources):
        kind = i % 3
        if kind == 0:
            lines += [f"  Queue{i}:", "    Type: AWS::SQS::Queue",
                      "    Properties:", "      VisibilityTimeout: 60"]
        elif kind == 1:
            lines += [f"  Topic{i}:", "    Type: AWS::SNS::Topic"]
        else:
            lines += [f"  Param{i}:", "    Type: AWS::SSM::Parameter", "    Properties:",
                      "      Type: String", f"      Name: !Sub /${{Env}}/${{AWS::StackName}}/p{i}",
                      f"      Value: !GetAtt Queue{i - 2}.Arn"]
    lines += ["Outputs:", "  First:", "    Value: !Ref Queue0"]
    return "\n".join(lines) + "\n"


def project(folder: Path, stacks: int, resources: int) -> None:
    """formwright.yaml with `stacks` stacks, all on templates/shared.yaml."""
    (folder / "templates").mkdir(parents=True)
    (folder / "templates" / "shared.yaml").write_text(template(resources))
    body = ["name: bench-validate", "region: us-east-1", "stacks:"]
    for i in range(stacks):
        body += [f"  s{i:02d}:", "    template: templates/shared.yaml", "    parameters:", f"      Env: e{i}"]
    (folder / "formwright.yaml").write_text("\n".join(body) + "\n")


def main() -> None:
    """Run both, print the times and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stacks", type=int, default=30)
    parser.add_argument("--resources", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    compile_bytecode()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "project"
        project(folder, args.stacks, args.resources)
        fw, fw_cpu = timed([*FW, "validate", str(folder)], args.runs)
        floor, floor_cpu = timed([*CFN_LINT, str(folder / "templates" / "shared.yaml")], args.runs)
    print(f"formwright validate, {args.stacks} stacks on one {args.resources}-resource template: {fw:.2f} s "
          f"(CPU {fw_cpu:.2f} s)")
    print(f"cfn-lint once on the template:                                   {floor:.2f} s "
          f"(CPU {floor_cpu:.2f} s)")
    verdict = "met" if fw <= 3 else "NOT met"
    print(f"ratio formwright / cfn-lint: {fw / floor:.2f}x   target: <= 3 s -> {verdict}")
    print(load_note())


if __name__ == "__main__":
    main()
