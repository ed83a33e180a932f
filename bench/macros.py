"""Benchmark: local macro expansion against aws-sam-cli's LanguageExtensions processor.

    .venv/bin/python bench/macros.py [--repeat 3] [--scales 1,4,16]

A generated template: ~2,000 resources from Fn::ForEach nested 3 levels (AWS::LanguageExtensions)
plus 20 Fn::Transform sites of a user macro (the String example, a Python handler), both scaled
1×, 4× and 16×. Every user-macro invocation is a child process, as a Lambda invocation is (issue #12), so
the "all" column is dominated by process starts; `--sites N` changes how many there are per scale.
The ForEach part is timed against `samcli.lib.cfn_language_extensions.api.
process_template`, run in a bench-only venv (bench/.venv-samcli, created with `python -m venv` and
`pip install aws-sam-cli` when missing) in a child process that times only the call.
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import formwright.macros.engine as engine  # noqa: E402
from formwright.macros import MacroRegistry, expand  # noqa: E402

# At 4× and 16× the processed template is over CloudFormation's 1 MB (expand rightly refuses it);
# to time the growth we keep the size computation but not the refusal.
engine.check_size = lambda body, **_: len(body.encode("utf-8"))

SAMCLI_VENV = ROOT / "bench" / ".venv-samcli"
SAMCLI_MODULE = "samcli.lib.cfn_language_extensions.api"
OUTER, MIDDLE, INNER = 10, 10, 20  # 2,000 resources at 1×
SITES = 20

SAMCLI_TIMER = f"""
import json, sys, time
from {SAMCLI_MODULE} import process_template
from samcli.lib.cfn_language_extensions.models import PseudoParameterValues
template = json.load(open(sys.argv[1]))
repeat = int(sys.argv[2])
best = None
for _ in range(repeat):
    start = time.perf_counter()
    out = process_template(json.loads(json.dumps(template)), parameter_values={{}},
                           pseudo_parameters=PseudoParameterValues(region="us-east-1",
                                                                   account_id="123456789012"))
    took = time.perf_counter() - start
    best = took if best is None else min(best, took)
print(json.dumps({{"seconds": best, "resources": len(out["Resources"])}}))
"""


def foreach_template(scale: int) -> dict:
    """Resources from three nested Fn::ForEach loops; the inner collection grows with the scale."""
    inner = [f"i{n}" for n in range(INNER * scale)]
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Transform": "AWS::LanguageExtensions",
        "Resources": {
            "Fn::ForEach::Outer": [
                "A",
                [f"a{n}" for n in range(OUTER)],
                {
                    "Fn::ForEach::Middle": [
                        "B",
                        [f"b{n}" for n in range(MIDDLE)],
                        {
                            "Fn::ForEach::Inner": [
                                "C",
                                inner,
                                {
                                    "Queue${A}${B}${C}": {
                                        "Type": "AWS::SQS::Queue",
                                        "Properties": {
                                            "QueueName": {"Fn::Sub": "${AWS::StackName}-${A}-${B}-${C}"},
                                            "Tags": [
                                                {"Key": "outer", "Value": "${A}"},
                                                {"Key": "inner", "Value": "${C}"},
                                            ],
                                            "DelaySeconds": {"Fn::Length": [1, 2, 3]},
                                        },
                                    }
                                },
                            ],
                        },
                    ],
                },
            ],
        },
    }


def full_template(scale: int, sites: int = SITES) -> dict:
    """The ForEach template plus Fn::Transform sites of the String user macro."""
    template = foreach_template(scale)
    for n in range(sites * scale):
        template["Resources"][f"Topic{n}"] = {
            "Type": "AWS::SNS::Topic",
            "Properties": {
                "TopicName": {
                    "Fn::Transform": {
                        "Name": "String",
                        "Parameters": {"InputString": f"topic-{n}", "Operation": "Upper"},
                    }
                }
            },
        }
    return template


def best_of(repeat: int, action) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def ensure_samcli() -> Path:
    """The bench venv's python with aws-sam-cli installed (created on first run)."""
    python = SAMCLI_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(SAMCLI_VENV)], check=True, timeout=600)
    probe = subprocess.run([str(python), "-c", f"import {SAMCLI_MODULE}"], capture_output=True, timeout=120)
    if probe.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "aws-sam-cli"], check=True, timeout=1800)
        subprocess.run([str(python), "-c", f"import {SAMCLI_MODULE}"], check=True, timeout=120)
    return python


def samcli_seconds(python: Path, template: dict, repeat: int) -> tuple[float, int]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(template, handle)
    done = subprocess.run([str(python), "-c", SAMCLI_TIMER, handle.name, str(repeat)], capture_output=True,
                          text=True, timeout=3600, check=True)
    Path(handle.name).unlink()
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["seconds"], result["resources"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scales", default="1,4,16")
    parser.add_argument("--sites", type=int, default=SITES, help="user-macro sites per scale (processes)")
    args = parser.parse_args()
    scales = [int(s) for s in args.scales.split(",")]
    python = ensure_samcli()
    registry = MacroRegistry.build(
        project_macros={"String": "examples/macros/string_functions.py"}, base_dir=ROOT
    )
    rows = []
    for scale in scales:
        foreach = foreach_template(scale)
        full = full_template(scale, args.sites)
        resources = len(expand(foreach, registry=registry)["Resources"])
        fw_foreach = best_of(args.repeat, functools.partial(expand, foreach, registry=registry))
        fw_full = best_of(args.repeat, functools.partial(expand, full, registry=registry))
        sam, sam_resources = samcli_seconds(python, foreach, args.repeat)
        assert sam_resources == resources, (sam_resources, resources)
        rows.append((scale, resources, args.sites * scale, fw_foreach, sam, fw_full))
    print(f"{'scale':>5} {'resources':>9} {'sites':>6} {'formwright ForEach':>19} {'sam-cli ForEach':>16} "
          f"{'speed-up':>8} {'formwright all':>15}")
    for scale, resources, sites, fw, sam, full in rows:
        print(f"{scale:>4}× {resources:>9} {sites:>6} {fw * 1000:>16.1f} ms {sam * 1000:>13.1f} ms "
              f"{sam / fw:>7.1f}× {full * 1000:>12.1f} ms")
    base = rows[0]
    print("\ngrowth against 1× (linear = the scale):")
    for scale, _, _, fw, sam, full in rows[1:]:
        print(f"  {scale:>2}×: formwright ForEach {fw / base[3]:.1f}×, all {full / base[5]:.1f}×, "
              f"sam-cli {sam / base[4]:.1f}×")


if __name__ == "__main__":
    main()
