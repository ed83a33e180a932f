"""Benchmark: `formwright transform tosca` against OpenStack's heat-translator (TOSCA → HOT).

Generated topologies of about 10, 100 and 1,000 nodes: groups of a Compute hosting a web server
hosting an application that connects to a database (in a DBMS on the same Compute). Both tools get
the same service template. heat-translator runs in its own venv (bench/.venv-heat, created with
`python -m venv` and `pip install heat-translator` when missing).

    .venv/bin/python bench/tosca.py [--sizes 10,100,1000] [--repeat 5]

Prints per size: formwright's time writing the whole artifact (and how much of it is tosca-parser),
its time in memory (parse, transform, template.yaml text: what heat-translator's timing covers,
whose `translate()` returns the HOT text and writes nothing), heat-translator's time, the ratios,
and the growth per 10× nodes (each tool in process after one warm-up run, median of --repeat); then
each CLI as a user runs it (a process per run, the two tools interleaved, formwright's modules
byte-compiled first as an installed package's are), per size. heat-translator's CLI logs each
record to syslog (/dev/log) and to /tmp/heat-translator.log; where /dev/log is missing (containers) every
syslog write fails and prints a 'Logging error' traceback. So its CLI is run as its console script does
(`translator.shell.main` in its venv's python) with its SysLogHandler replaced by one that formats each
record and discards it: what a working syslog would cost it, give or take the socket send, and nothing
in /dev or the system touched. files/ of the artifact is content-addressed
(`<sha256 prefix>/<name>`, each distinct content once), so whatever the size it holds three files here
(the two scripts and the formwright-run wrapper): writing the artifact is template.yaml, those three
files, the scripts and the README. Not a test.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from startup import compile_bytecode  # bench/ is the script's folder: the one bytecode helper

HERE = Path(__file__).resolve().parent
HEAT_VENV = HERE / ".venv-heat"
GROUP = 5  # nodes per group

HEAT_TIMER = r"""
import json, sys, time, logging
logging.disable(logging.CRITICAL)
from toscaparser.tosca_template import ToscaTemplate
from translator.hot.tosca_translator import TOSCATranslator
path, repeat = sys.argv[1], int(sys.argv[2])
TOSCATranslator(ToscaTemplate(path, {}, True), {}).translate()  # warm-up, as formwright gets
times, parse_times = [], []
for _ in range(repeat):
    start = time.perf_counter()
    tosca = ToscaTemplate(path, {}, True)
    parsed = time.perf_counter()
    TOSCATranslator(tosca, {}).translate()
    times.append(time.perf_counter() - start)
    parse_times.append(parsed - start)
print(json.dumps({"times": times, "parse": parse_times}))
"""

# heat-translator's console script, with a syslog handler that formats and discards (see the docstring);
# it has to be in place before translator.shell configures logging at import
HEAT_CLI = r"""
import logging.handlers, sys

class DiscardingSysLogHandler(logging.handlers.SysLogHandler):
    def __init__(self, *args, **kwargs):
        logging.Handler.__init__(self)

    def emit(self, record):
        self.format(record)

    def close(self):
        logging.Handler.close(self)

logging.handlers.SysLogHandler = DiscardingSysLogHandler
from translator.shell import main
sys.argv[0] = "heat-translator"
sys.exit(main())
"""


def generate(folder: Path, groups: int) -> Path:
    """Write a service template with `groups` × 5 nodes (and its scripts) into `folder`."""
    (folder / "scripts").mkdir(parents=True, exist_ok=True)
    (folder / "scripts" / "create.sh").write_text("#!/bin/bash\necho create\n")
    (folder / "scripts" / "configure.sh").write_text("#!/bin/bash\necho configure \"$db_host\"\n")
    lines = ["tosca_definitions_version: tosca_simple_yaml_1_0", "", "topology_template:",
             "  node_templates:"]
    for i in range(groups):
        lines += [
            f"    vm_{i}:",
            "      type: tosca.nodes.Compute",
            "      capabilities:",
            "        host:",
            "          properties:",
            "            num_cpus: 2",
            "            mem_size: 2 GB",
            "            disk_size: 10 GB",
            "        os:",
            "          properties:",
            "            type: linux",
            "            distribution: fedora",
            "            version: 18.0",
            "            architecture: x86_64",
            f"    server_{i}:",
            "      type: tosca.nodes.WebServer",
            "      requirements:",
            f"        - host: vm_{i}",
            f"    app_{i}:",
            "      type: tosca.nodes.WebApplication",
            "      requirements:",
            f"        - host: server_{i}",
            "        - database_endpoint:",
            f"            node: db_{i}",
            "            relationship: tosca.relationships.ConnectsTo",
            "      interfaces:",
            "        Standard:",
            "          create: scripts/create.sh",
            "          configure:",
            "            implementation: scripts/configure.sh",
            "            inputs:",
            f"              db_host: {{ get_attribute: [ vm_{i}, private_address ] }}",
            f"    dbms_{i}:",
            "      type: tosca.nodes.DBMS",
            "      properties:",
            "        port: 5432",
            "        root_password: secret-root",
            "      requirements:",
            f"        - host: vm_{i}",
            f"    db_{i}:",
            "      type: tosca.nodes.Database",
            "      properties:",
            "        name: app",
            "        user: app",
            "        password: secret-app",
            "        port: 5432",
            "      requirements:",
            f"        - host: dbms_{i}",
        ]
    path = folder / "service.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def ensure_heat_translator() -> Path | None:
    """The python of bench/.venv-heat with heat-translator installed (created when missing)."""
    python = HEAT_VENV / "bin" / "python"
    if python.exists() and subprocess.run([str(python), "-c", "import translator"], capture_output=True,
                                          check=False, timeout=120).returncode == 0:
        return python
    print("creating bench/.venv-heat with heat-translator …", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(HEAT_VENV)], check=True, timeout=300)
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "heat-translator"], check=False,
                          timeout=900, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"cannot install heat-translator: {done.stderr.strip()[-500:]}", file=sys.stderr)
        return None
    return python


def time_formwright(path: Path, repeat: int) -> tuple[list[float], list[float], list[float]]:
    """In-process timings of the transform writing the artifact, of tosca-parser within it, and of the
    transform in memory (template.yaml text made, nothing written)."""
    import formwright.tosca.loader as loader
    from formwright.transform.cloudformation import transform_tosca
    from formwright.transform.cloudformation.yaml_out import template_yaml

    parse_times: list[float] = []
    original = loader.run_tosca_parser

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            parse_times.append(time.perf_counter() - start)

    with tempfile.TemporaryDirectory() as out:  # warm-up: imports and first-use caches
        transform_tosca(path, Path(out) / "cfn")
    times, in_memory = [], []
    for _ in range(repeat):
        loader.run_tosca_parser = timed
        try:
            with tempfile.TemporaryDirectory() as out:
                start = time.perf_counter()
                transform_tosca(path, Path(out) / "cfn")
                times.append(time.perf_counter() - start)
        finally:
            loader.run_tosca_parser = original
        start = time.perf_counter()
        template_yaml(transform_tosca(path, None).template)
        in_memory.append(time.perf_counter() - start)
    return times, parse_times, in_memory


def time_heat(python: Path, path: Path, repeat: int) -> tuple[list[float], list[float]]:
    """In-process timings of heat-translator (parse + translate to HOT) in its own venv."""
    done = subprocess.run(
        [str(python), "-c", HEAT_TIMER, str(path), str(repeat)],
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"heat-translator failed: {done.stderr.strip()[-800:]}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return data["times"], data["parse"]


def time_cli(command: list[str]) -> tuple[float, str]:
    """Wall time of one CLI run (process start included), and what it wrote to stderr."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed: {(done.stderr or done.stdout).strip()[-800:]}")
    return elapsed, done.stderr


def main() -> None:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    heat = ensure_heat_translator()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for size in sizes:
            groups = max(1, size // GROUP)
            path = generate(Path(work) / f"n{size}", groups)
            fw, fw_parse, fw_memory = time_formwright(path, args.repeat)
            row = {"nodes": groups * GROUP, "formwright": statistics.median(fw),
                   "fw_parser": statistics.median(fw_parse), "fw_memory": statistics.median(fw_memory)}
            if heat is not None:
                ht, ht_parse = time_heat(heat, path, args.repeat)
                row["heat"] = statistics.median(ht)
                row["heat_parser"] = statistics.median(ht_parse)
            rows.append(row)
        print(f"{'nodes':>6} {'formwright s':>13} {'(tosca-parser)':>15} {'(in memory)':>12} "
              f"{'heat-translator s':>18} {'(tosca-parser)':>15} {'heat/fw':>8} {'in memory':>10}")
        for row in rows:
            heat_s = (
                (
                    f"{row['heat']:18.3f} {row['heat_parser']:15.3f} {row['heat'] / row['formwright']:8.2f} "
                    f"{row['heat'] / row['fw_memory']:10.2f}"
                )
                if "heat" in row
                else f"{'n/a':>18}"
            )
            print(
                f"{row['nodes']:6d} {row['formwright']:13.3f} {row['fw_parser']:15.3f} "
                f"{row['fw_memory']:12.3f} "
                f"{heat_s}"
            )
        for previous, current in itertools.pairwise(rows):
            factor = current["nodes"] / previous["nodes"]
            growth = (
                f"growth ×{factor:g} nodes: formwright ×{current['formwright'] / previous['formwright']:.1f}"
                f" (in memory ×{current['fw_memory'] / previous['fw_memory']:.1f})"
            )
            if "heat" in current:
                growth += f", heat-translator ×{current['heat'] / previous['heat']:.1f}"
            print(growth)
        print_cli_comparison(Path(work), sizes, rows, heat is not None, args.repeat)


def print_cli_comparison(
    work: Path, sizes: list[int], rows: list[dict], with_heat: bool, repeat: int
) -> None:
    """What a user waits for: each CLI run as a process (start-up included), per size the median of
    `repeat` runs, the two tools' runs interleaved so that a change of load hits both alike."""
    compile_bytecode()
    formwright_cli = shutil.which("formwright") or str(Path(sys.executable).parent / "formwright")
    heat_cli = [str(HEAT_VENV / "bin" / "python"), "-c", HEAT_CLI]
    print(f"\n{'nodes':>6} {'formwright CLI s':>17} {'heat-translator CLI s':>22} {'heat/fw':>8}")
    for size, row in zip(sizes, rows, strict=True):
        service = work / f"n{size}" / "service.yaml"
        fw_times, heat_times = [], []
        for i in range(repeat):
            fw_times.append(time_cli([formwright_cli, "transform", "tosca", str(service), "-o",
                                      str(work / f"cli-out-{size}-{i}")])[0])
            if with_heat:
                elapsed, stderr = time_cli([*heat_cli, "--template-file", str(service), "--template-type",
                                            "tosca", "--output-file", str(work / f"out-{size}.hot.yaml")])
                if "Logging error" in stderr:
                    raise RuntimeError(f"heat-translator still failed to log: {stderr.strip()[-800:]}")
                heat_times.append(elapsed)
        fw = statistics.median(fw_times)
        line = f"{row['nodes']:6d} {fw:17.3f}"
        if with_heat:
            ht = statistics.median(heat_times)
            line += f" {ht:22.3f} {ht / fw:8.2f}"
        print(line)
    if with_heat:
        print("note: heat-translator's CLI run with its syslog handler formatting and discarding each record "
              "(as if syslog worked; /dev/log is missing here), its log file written as usual")


if __name__ == "__main__":
    main()
