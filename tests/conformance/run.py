"""Run formwright against the conformance corpora and print one score line per corpus.

The corpora live outside the project (`../shared/conformance/<corpus>/manifest.json`, see its README) and are
read in place, never copied. Every case runs the real CLI in a child process, the way the README says.

    python tests/conformance/run.py [CORPUS ...] [--root DIR] [--case ID] [-j N] [--verbose] [--output json]
                                    [--runs]

`--runs` adds the tosca corpus's `runs` column (tosca_runs.py): each case deployed with booting instances.

Exit status: 0 when the run completed (whatever the score; `--strict` makes any failing case exit 1),
2 when there is nothing to run (no corpus folder, an unknown corpus name).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling modules, however this file is run

from common import PROJECT, Outcome, exit_detail, formwright
from tosca_corpus import run_tosca


def find_root(explicit: str | None) -> Path | None:
    """The conformance folder: --root, $FORMWRIGHT_CONFORMANCE, or `shared/conformance` beside the project
    or one of its ancestors (a git worktree sits one level deeper than the main checkout)."""
    if explicit:
        return Path(explicit)
    if os.environ.get("FORMWRIGHT_CONFORMANCE"):
        return Path(os.environ["FORMWRIGHT_CONFORMANCE"])
    for folder in PROJECT.parents:
        candidate = folder / "shared" / "conformance"
        if candidate.is_dir():
            return candidate
    return None

# ---------------------------------------------------------------- comparison helpers


def normalise_numbers(value: Any) -> Any:
    """The langext harness's normalize_template: an integral float is that int, others round to 10 places."""
    if isinstance(value, dict):
        return {k: normalise_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise_numbers(v) for v in value]
    if isinstance(value, float) and not isinstance(value, bool):
        return int(value) if value.is_integer() else round(value, 10)
    return value


def deep_sort_lists(value: Any) -> Any:
    """SAM's deep_sort_lists: every list compared as a multiset, recursively."""
    if isinstance(value, dict):
        return {k: deep_sort_lists(v) for k, v in value.items()}
    if isinstance(value, list):
        members = [deep_sort_lists(v) for v in value]
        return sorted(members, key=lambda v: (type(v).__name__, json.dumps(v, sort_keys=True)))
    return value


def canonical(value: Any) -> str:
    """A text form where key order does not matter and true differs from 1."""
    return json.dumps(value, sort_keys=True)


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """The first path where two documents differ, for a failure line."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if key not in a:
                return f"{path}/{key}: missing in output"
            if key not in b:
                return f"{path}/{key}: not expected"
            if canonical(a[key]) != canonical(b[key]):
                return first_difference(a[key], b[key], f"{path}/{key}")
        return path
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            if canonical(x) != canonical(y):
                return first_difference(x, y, f"{path}/{index}")
    return f"{path or '/'}: got {canonical(a)[:160]} expected {canonical(b)[:160]}"


def parse_json(text: str) -> Any:
    """The CLI's JSON output, or None when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def dig(document: Any, path: list[Any]) -> tuple[bool, Any]:
    """The value at `path` (keys or list indexes) in `document`."""
    for key in path:
        in_list = isinstance(document, list) and isinstance(key, int) and 0 <= key < len(document)
        if in_list or (isinstance(document, dict) and key in document):
            document = document[key]
        else:
            return False, None
    return True, document


# ---------------------------------------------------------------- langext


def run_langext_case(base: Path, case: dict[str, Any]) -> Outcome:
    """One AWS::LanguageExtensions case: `formwright expand` and the README's rules."""
    kind = case["kind"]
    group = "expand-equal" if kind == "expand" else kind
    args = ["expand", str(base / case["input"]), "--format", "json"]
    for key, value in (case.get("params") or {}).items():
        args += ["--param", f"{key}={value}"]
    if case.get("pseudo", {}).get("region"):
        args += ["--region", case["pseudo"]["region"]]
    proc = formwright(args)
    if kind == "reject":
        ok = proc.returncode == 2
        detail = "" if ok else (f"accepted (exit {proc.returncode})" if proc.returncode == 0
                                else exit_detail(proc))
        return Outcome(case["id"], group, ok, detail)
    if proc.returncode != 0:
        return Outcome(case["id"], group, False, exit_detail(proc))
    output = parse_json(proc.stdout)
    if not isinstance(output, dict):
        return Outcome(case["id"], group, False, "stdout is not a JSON template")
    if kind == "expand":
        expected = json.loads((base / case["expected"]).read_text(encoding="utf-8"))
        got, want = (normalise_numbers(d) for d in (output, expected))
        for document in (got, want):
            document.pop("Transform", None)
        if case.get("compare"):
            got = {k: got.get(k) for k in case["compare"]}
            want = {k: want.get(k) for k in case["compare"]}
        if canonical(got) != canonical(want):
            return Outcome(case["id"], group, False, "differs at " + first_difference(got, want))
    for check in case.get("checks") or []:
        found, value = dig(output, check["path"])
        path = "/".join(str(p) for p in check["path"])
        if not found:
            return Outcome(case["id"], group, False, f"check: {path} missing")
        if "equals" in check and canonical(normalise_numbers(value)) != canonical(check["equals"]):
            return Outcome(case["id"], group, False, f"check: {path} is {value!r}, not {check['equals']!r}")
        if "contains" in check and check["contains"] not in str(value):
            return Outcome(case["id"], group, False, f"check: {path} lacks {check['contains']!r}")
    return Outcome(case["id"], group, True)


# ---------------------------------------------------------------- sam

# An AWS::Serverless::Application whose Location names a Serverless Application Repository app is looked up
# over the network by samtranslator (its ServerlessAppPlugin); such a case cannot pass offline.
_SAR_LOCATION = re.compile(r"ApplicationId", re.MULTILINE)


def needs_network(text: str) -> bool:
    """Whether a SAM input needs a network call to translate (a SAR application)."""
    return "AWS::Serverless::Application" in text and bool(_SAR_LOCATION.search(text))


def run_sam_case(base: Path, case: dict[str, Any]) -> Outcome:
    """One AWS::Serverless case: `formwright expand --region` against SAM's expected output."""
    source = base / case["input"]
    network = needs_network(source.read_text(encoding="utf-8"))
    args = ["expand", str(source), "--format", "json", "--region", case["region"]]
    for key, value in (case.get("params") or {}).items():
        args += ["--param", f"{key}={value}"]
    proc = formwright(args)
    if proc.returncode != 0:
        return Outcome(case["id"], "equal", False, exit_detail(proc), network=network)
    output = parse_json(proc.stdout)
    if not isinstance(output, dict):
        return Outcome(case["id"], "equal", False, "stdout is not a JSON template", network=network)
    output.pop("Transform", None)
    expected = json.loads((base / case["expected"]).read_text(encoding="utf-8"))
    expected.pop("Transform", None)
    got, want = deep_sort_lists(output), deep_sort_lists(expected)
    if canonical(got) != canonical(want):
        detail = "differs at " + first_difference(got, want)
        return Outcome(case["id"], "equal", False, detail, network=network)
    return Outcome(case["id"], "equal", True, network=network)


# ---------------------------------------------------------------- the corpora


CorpusRunner = Callable[[Path, list[dict[str, Any]], int], list[Outcome]]


def each_case(runner: Callable[[Path, dict[str, Any]], Outcome]) -> CorpusRunner:
    """A corpus runner from a one-case runner: the cases `jobs` at a time, in their order."""

    def run_all(base: Path, cases: list[dict[str, Any]], jobs: int) -> list[Outcome]:
        def one(case: dict[str, Any]) -> Outcome:
            try:
                return runner(base, case)
            except Exception as exc:  # noqa: BLE001 - a broken case must not hide the others' scores
                return Outcome(case.get("id", "?"), case.get("kind", case.get("expect", "?")), False,
                               f"runner error: {type(exc).__name__}: {exc}")

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(one, cases))

    return run_all


RUNNERS: dict[str, CorpusRunner] = {
    "langext": each_case(run_langext_case),
    "sam": each_case(run_sam_case),
    "tosca": run_tosca,
}


def corpus_kind(folder: Path, manifest: dict[str, Any]) -> str:
    """langext / sam / tosca, from the manifest's `corpus` (e.g. "langext-visible") or the folder name."""
    name = str(manifest.get("corpus") or folder.name)
    for kind in RUNNERS:
        if name == kind or name.startswith(kind + "-") or folder.name == kind:
            return kind
    return name


# ---------------------------------------------------------------- report


# Columns reported beside a corpus's total, not in it: the tosca `runs` column measures the local
# instance image (a Debian root standing in for the templates' Ubuntu) as much as the transform, and the
# corpus's own score is transform and reject (../shared/conformance/README.md).
BESIDE_TOTAL = {"runs"}


def score_line(name: str, outcomes: list[Outcome]) -> str:
    """`langext  84/138  expand-equal 11/30, succeed 39/52, reject 34/56` (plus network-needing cases).

    The total counts cases that passed every check but those in BESIDE_TOTAL; each group (a check) has its
    own count, followed by the resource types the local cloud stubbed for it, if any."""
    cases: dict[str, bool] = {}
    groups: dict[str, list[Outcome]] = {}
    left_out: dict[str, dict[str, int]] = {}  # group -> why -> how many (the tosca runs column's "not run")
    for outcome in outcomes:
        why = outcome.extra.get("not_run")
        if why:
            left_out.setdefault(outcome.group, {})[why] = left_out.get(outcome.group, {}).get(why, 0) + 1
            groups.setdefault(outcome.group, [])
            continue
        cases[outcome.case] = cases.get(outcome.case, True) and (outcome.ok or outcome.group in BESIDE_TOTAL)
        groups.setdefault(outcome.group, []).append(outcome)
    parts = []
    for group, items in groups.items():
        part = f"{group} {sum(o.ok for o in items)}/{len(items)}"
        if group in left_out:
            part += f" (not run: {sum(left_out[group].values())}: " + ", ".join(
                f"{why} {count}" for why, count in sorted(left_out[group].items())) + ")"
        stubbed: dict[str, int] = {}
        for outcome in items:
            for kind in outcome.extra.get("stubbed") or []:
                stubbed[kind] = stubbed.get(kind, 0) + 1
        if stubbed:
            part += " (stubbed in the local cloud: " + ", ".join(
                f"{kind} in {count}" for kind, count in sorted(stubbed.items())) + ")"
        parts.append(part)
    line = f"{name:<8} {sum(cases.values())}/{len(cases)}  " + ", ".join(parts)
    network = [o for o in outcomes if o.network]
    if network:
        failing = [o.case for o in network if not o.ok]
        line += f"; need the network: {len(network)} ({len(failing)} failing: {', '.join(failing) or '-'})"
    return line


def run_corpus(folder: Path, only: set[str], jobs: int,
               runners: dict[str, CorpusRunner] | None = None) -> tuple[str, list[Outcome]] | None:
    """Run every case of one corpus (or those named by --case)."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    kind = corpus_kind(folder, manifest)
    runner = (runners or RUNNERS).get(kind)
    cases = [c for c in manifest.get("cases", []) if not only or c["id"] in only]
    if runner is None:
        print(f"{folder.name:<8} NOT RUN: no runner for corpus kind {kind!r} ({len(cases)} cases)",
              flush=True)
        return None
    if not cases:
        return None
    return folder.name, runner(folder, cases, jobs)


def main(argv: list[str] | None = None) -> int:
    """Parse the flags, run the corpora, print the scores."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="*",
                        help="corpus folder names (default: every folder with a manifest)")
    parser.add_argument("--root", help="the conformance folder (default: ../shared/conformance)")
    parser.add_argument("--case", action="append", default=[], help="run only this case id (repeatable)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="cases run at once (default 2)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every failing case and why")
    parser.add_argument("--output", choices=["text", "json"], default="text")
    parser.add_argument("--strict", action="store_true", help="exit 1 when any case fails")
    parser.add_argument("--runs", action="store_true",
                        help="tosca: also deploy each case with booting instances and report whether "
                             "its application runs (the `runs` column; needs root and the instance image; "
                             "minutes per case)")
    args = parser.parse_args(argv)
    runners = {**RUNNERS, "tosca": functools.partial(run_tosca, runs=True)} if args.runs else RUNNERS

    root = find_root(args.root)
    if root is None or not root.is_dir():
        print("conformance: no corpus folder found (looked for shared/conformance beside the project; "
              "set FORMWRIGHT_CONFORMANCE or --root)", file=sys.stderr)
        return 2
    folders = sorted(p.parent for p in root.glob("*/manifest.json"))
    if args.corpora:
        unknown = set(args.corpora) - {f.name for f in folders}
        if unknown:
            print(f"conformance: no corpus {', '.join(sorted(unknown))} in {root}", file=sys.stderr)
            return 2
        folders = [f for f in folders if f.name in args.corpora]

    results: dict[str, list[Outcome]] = {}
    for folder in folders:
        ran = run_corpus(folder, set(args.case), args.jobs, runners)
        if ran is None:
            continue
        name, outcomes = ran
        results[name] = outcomes
        if args.output == "text":
            print(score_line(name, outcomes), flush=True)
            for outcome in outcomes:
                if args.verbose and (not outcome.ok or outcome.extra.get("message")):
                    mark = "ok  " if outcome.ok else "skip" if outcome.extra.get("not_run") else "FAIL"
                    line = f"  {mark} {outcome.group:<12} {outcome.case}: {outcome.detail}"
                    print(line.rstrip(), flush=True)
                    if outcome.extra.get("message"):
                        print(f"         message: {outcome.extra['message']}")
                        print(f"         reason:  {outcome.extra['reason'][:200]}")
    if args.output == "json":
        print(json.dumps({name: {"score": score_line(name, outs),
                                 "cases": [o.__dict__ for o in outs]} for name, outs in results.items()},
                         indent=2))
    failing = any(not o.ok and not o.extra.get("not_run") for outs in results.values() for o in outs)
    return 1 if args.strict and failing else 0


if __name__ == "__main__":
    sys.exit(main())
