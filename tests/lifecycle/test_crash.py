"""Crash safety: SIGKILL the CLI right after each journal boundary of a 6-stack create, then `retry`.

The final cloud state must equal an uninterrupted run's, with no stack created twice.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

SIX = {"s1": {}, "s2": {"params": {"Label": "!ref s1.outputs.Name"}}, "s3": {"depends": ["s1"]},
       "s4": {"depends": ["s2", "s3"]}, "s5": {"params": {"Label": "!ref s4.outputs.Name"}},
       "s6": {"depends": ["s5"]}}
BOUNDARIES = 1 + 2 + 2 * 6 + 2 + 1 + 1  # begin, pre, 6 stacks, post, revision, finish


def _run_all(procs: list) -> list[tuple[int, str, str]]:
    return [(p.wait(timeout=300), *p.communicate()) for p in procs]


def _state(cloud, h, prefix: str) -> dict[str, str]:
    return {name.removeprefix(prefix): status for name, status in h.cfn_stacks(cloud).items()
            if name.startswith(prefix)}


def _elements(home: Path, instance: str) -> dict[str, tuple[str, ...]]:
    db = sqlite3.connect(home / ".formwright" / "journal.db")
    row = db.execute("SELECT elements FROM revisions WHERE instance = ?", (instance,)).fetchall()
    db.close()
    assert len(row) == 1, f"{instance}: {len(row)} revisions"
    # the stacks' hashes differ by instance (each carries its formwright:instance tag): compare what they
    # are made of instead, the instance's own tag aside
    return {e: (r["template"], json.dumps(r["parameters"], sort_keys=True),
                json.dumps({k: v for k, v in r["tags"].items() if k != "formwright:instance"},
                           sort_keys=True), r["stack_name"].removeprefix(instance))
            for e, r in json.loads(row[0][0]).items()}


def test_sigkill_at_every_journal_boundary_then_retry(cloud, tmp_path: Path, h, recorder) -> None:
    home = h.write_project(tmp_path / "home", SIX, stack_triggers=False)
    reference = h.cli(["instance", "create", "ref", "--output", "json"], home)
    code, out, err = _run_all([reference])[0]
    assert code == 0, err
    expected = _state(cloud, h, "ref-")
    assert len(expected) == 6 and set(expected.values()) == {"CREATE_COMPLETE"}

    ks = list(range(1, BOUNDARIES + 1))
    for batch in (ks[i:i + 4] for i in range(0, len(ks), 4)):
        crashed = _run_all([h.cli(["instance", "create", f"c{k}"], home, env={"FORMWRIGHT_CRASH_AT": str(k)})
                            for k in batch])
        assert [c[0] for c in crashed] == [-9] * len(batch), [c[2] for c in crashed]
        retried = _run_all([h.cli(["instance", "retry", f"c{k}", "--output", "json"], home) for k in batch])
        for k, (code, out, err) in zip(batch, retried, strict=True):
            if k == BOUNDARIES:  # killed after the operation was recorded done: nothing left to do
                assert code == 2 and "nothing to retry" in out + err, out + err  # JSON error on stdout
            else:
                assert code == 0, f"K={k}: {err}"
                assert json.loads(out)["status"] == "done"
    for k in ks:
        assert _state(cloud, h, f"c{k}-") == expected, f"K={k}"
        assert _elements(home, f"c{k}") == _elements(home, "ref"), f"K={k}"
    every = h.cfn_stacks(cloud)
    assert len(every) == 6 * (len(ks) + 1)  # no stray or duplicate stack anywhere
    db = sqlite3.connect(home / ".formwright" / "journal.db")
    assert db.execute("SELECT COUNT(*) FROM steps WHERE status != 'done'").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM locks").fetchone()[0] == 0
    db.close()
