"""Whose a stack is, read from its tags only (model/owners.py, issue 23)."""

from __future__ import annotations

import pytest

from formwright.lifecycle.ownership import owner_tags, shared_tags
from formwright.model.owners import owned_by, stack_tags


def test_a_project_stack_is_owned_by_its_project_and_environment_only() -> None:
    tags = {"team": "web", **stack_tags("shop", "queue", None)}
    assert owned_by(tags, "shop", None)
    assert not owned_by(tags, "shop", "prod")  # another environment's project
    assert not owned_by(tags, "shop2", None)
    assert owned_by(stack_tags("shop", "queue", "prod"), "shop", "prod")
    assert not owned_by(stack_tags("shop", "queue", "prod"), "shop", None)
    assert not owned_by({"formwright:project": "shop"}, "shop", None)  # no stack tag: not a project stack
    assert not owned_by({}, "shop", None)


def test_an_instance_or_shared_element_is_never_the_projects() -> None:
    instance = {**owner_tags("shop", "demo", "queue", "/home"), **stack_tags("shop", "queue", None)}
    shared = {**shared_tags("shop", "queue", "demo", "/home"), **stack_tags("shop", "queue", None)}
    assert not owned_by(instance, "shop", None) and not owned_by(shared, "shop", None)


def test_ownership_tags_false_leaves_the_stacks_own_tags(tmp_path) -> None:
    # `formwright adopt` writes it: deploying an adopted stack must not change its tags (issue 25)
    from formwright.errors import ProjectError
    from formwright.model import load_project

    (tmp_path / "q.yaml").write_text("Resources:\n  Q: {Type: AWS::SQS::Queue}\n")
    (tmp_path / "formwright.yaml").write_text(
        "name: shop\nownership_tags: false\ntags: {team: web}\nstacks:\n  a: {template: q.yaml}\n"
        "  b: {template: q.yaml, ownership_tags: true}\n")
    project = load_project(tmp_path)
    assert project.stacks["a"].tags == {"team": "web"}
    assert project.stacks["b"].tags == {"team": "web", **stack_tags("shop", "b", None)}
    (tmp_path / "formwright.yaml").write_text(
        "name: shop\nownership_tags: maybe\nstacks:\n  a: {template: q.yaml}\n")
    with pytest.raises(ProjectError, match="`ownership_tags` must be true or false") as caught:
        load_project(tmp_path)
    assert caught.value.line == 2
