"""`formwright instance upgrade|rollback|update|delete NAME --dry-run`: what the operation would do, in its
order, changing nothing; at a terminal without --yes the preview is shown and confirmed (issue #22,
item 6). Through the CLI on the local cloud."""

from __future__ import annotations

from pathlib import Path

from tests.cli.terminal import answer_in_terminal

V1 = {"base": {"events": ["PreUpgrade", "PostUpgrade"]},
      "change": {"params": {"Label": "one"}, "depends": ["base"]},
      "gone": {}}
V2 = {"base": {"events": ["PreUpgrade", "PostUpgrade"]},
      "change": {"params": {"Label": "two"}, "depends": ["base"]},
      "new": {"depends": ["change"]}}


def state(run_cli, home: Path, cloud, h) -> tuple[dict[str, str], int]:
    """The stacks in the cloud and the number of operations journaled: what a dry run must not change."""
    history = run_cli("instance", "history", "i1", str(home), "--output", "json")
    assert history.code == 0, history.err
    return h.cfn_stacks(cloud), len(history.json()["operations"])


def main_steps(answer: dict) -> list[tuple[str, str, str]]:
    return [(s["phase"], s["element"], s["action"]) for s in answer["steps"] if s["element"]]


def test_upgrade_and_rollback_dry_runs_show_their_order_and_change_nothing(tmp_path: Path, run_cli, cloud,
                                                                          recorder, h) -> None:
    home = h.write_project(tmp_path / "v1", V1, stack_triggers=True)
    assert run_cli("instance", "create", "i1", str(home)).code == 0
    v2 = h.write_project(tmp_path / "v2", V2, version="2.0")
    recorder()
    before = state(run_cli, home, cloud, h)

    dry = run_cli("instance", "upgrade", "i1", str(home), "--to", str(v2), "--dry-run", "--output", "json")
    assert dry.code == 0, dry.err
    answer = dry.json()
    assert answer["dry_run"] is True and answer["kind"] == "upgrade"
    # the add-on's PreUpgrade first, the elements in the manifest's order (a stack after what it needs),
    # PostUpgrade, then the clean-up deleting the stack the new version dropped
    assert [s["phase"] for s in answer["steps"]] == ["pre", "main", "main", "main", "post", "cleanup"]
    assert main_steps(answer) == [("main", "base", "skip"), ("main", "change", "update"),
                                  ("main", "new", "create"), ("cleanup", "gone", "delete")]
    assert answer["steps"][0]["events"][0]["event"] == "PreUpgrade"
    change = answer["steps"][2]
    assert [e["event"] for e in change["events"]] == ["PreUpgrade", "PostUpgrade"]
    assert change["plan"]["parameters"] == [{"key": "Label", "old": "one", "new": "two"}]
    assert [r["action"] for r in answer["steps"][3]["plan"]["resources"]] == ["Add"]
    assert answer["totals"]["add"] == 1
    text = run_cli("instance", "upgrade", "i1", str(home), "--to", str(v2), "--dry-run")
    assert text.code == 0 and "nothing was changed" in text.out
    assert text.out.index("update") < text.out.index("create i1-new") < text.out.index("delete i1-gone")
    assert recorder() == []  # no hook ran
    assert state(run_cli, home, cloud, h) == before

    assert run_cli("instance", "upgrade", "i1", str(home), "--to", str(v2), "-y").code == 0
    recorder()
    before = state(run_cli, home, cloud, h)
    back = run_cli("instance", "rollback", "i1", str(home), "--dry-run", "--output", "json")
    assert back.code == 0, back.err
    answer = back.json()
    # a rollback walks the elements in reverse: the stack the upgrade created is deleted in its turn,
    # before the stack it needs is updated back (lifecycle/upgrade.py rollback_plan, executor.py)
    assert [s["phase"] for s in answer["steps"]] == ["pre", "main", "main", "main", "main", "post"]
    steps = main_steps(answer)
    assert set(steps) == {("main", "gone", "create"), ("main", "change", "update"), ("main", "base", "skip"),
                          ("main", "new", "delete")}
    assert steps.index(("main", "new", "delete")) < steps.index(("main", "change", "update"))
    assert answer["steps"][-1]["events"][0]["event"] == "PreUpgrade"  # and its last
    assert answer["steps"][0]["events"][0]["event"] == "PostUpgrade"  # a rollback's first event
    assert recorder() == [] and state(run_cli, home, cloud, h) == before

    # at a terminal without --yes: the preview, then the question; declined, nothing changes
    code, shown = answer_in_terminal("instance", "rollback", "i1", str(home), answer="n")
    assert code == 4, shown
    assert "nothing was changed" in shown and "Roll back instance 'i1'?" in shown
    assert "Cancelled; nothing changed." in shown
    assert recorder() == [] and state(run_cli, home, cloud, h) == before


def test_delete_dry_run_lists_the_stacks_in_reverse_order(tmp_path: Path, run_cli, cloud, recorder,
                                                          h) -> None:
    home = h.write_project(tmp_path / "v1", V1, stack_triggers=False)
    assert run_cli("instance", "create", "i1", str(home)).code == 0
    before = state(run_cli, home, cloud, h)
    dry = run_cli("instance", "delete", "i1", str(home), "--dry-run", "--output", "json")
    assert dry.code == 0, dry.err
    order = [s["element"] for s in dry.json()["steps"] if s["element"]]
    assert order.index("change") < order.index("base")  # dependents first
    assert {s["action"] for s in dry.json()["steps"] if s["element"]} == {"delete"}
    assert state(run_cli, home, cloud, h) == before
