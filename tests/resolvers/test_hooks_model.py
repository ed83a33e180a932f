"""Issue 24: `hooks:` flows project -> group -> stack, the nearest level's list winning per event (as every
other key does); `before_deploy: ~` switches off what a level above set."""

from __future__ import annotations

from pathlib import Path

from formwright.model.project import load_project


def test_hooks_flow_down_and_the_nearest_list_wins_per_event(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("Resources:\n  Q: {Type: AWS::SQS::Queue}\n")
    (tmp_path / "formwright.yaml").write_text("""\
name: hm
hooks:
  before_deploy: [project-check]
  after_deploy: [project-smoke]
groups:
  data:
    hooks:
      after_deploy: [{run: data.hooks:smoke, timeout: 30, always: true}]
    stacks:
      db: {template: t.yaml}
      cache:
        template: t.yaml
        hooks: {before_deploy: ~}
stacks:
  app: {template: t.yaml}
""")
    stacks = load_project(tmp_path).stacks
    shown = {name: {event: [h.shown() for h in hooks] for event, hooks in s.hooks.items()}
             for name, s in stacks.items()}
    assert shown["app"] == {"before_deploy": ["project-check"], "after_deploy": ["project-smoke"]}
    assert shown["db"] == {"before_deploy": ["project-check"], "after_deploy": ["data.hooks:smoke"]}
    assert shown["cache"] == {"after_deploy": ["data.hooks:smoke"]}
    smoke = stacks["db"].hooks["after_deploy"][0]
    assert smoke.is_python and smoke.always and smoke.timeout == 30
