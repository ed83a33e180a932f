"""sceptre's config inheritance as formwright.sceptre.reader.merge applies it (sceptre 4's
sceptre/config/reader.py and config/strategies.py): `dependencies` joined parent first; `stack_tags`,
`parameters`, `sceptre_user_data` dicts (and `hooks`, `notifications` lists) replaced by the child's unless
`<key>_inheritance: merge` (the child's setting, else the parent's); any other key the child's."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formwright.sceptre.reader import MERGEABLE, merge

KEYS = st.sampled_from(["region", "profile", "project_code", "protect", "stack_timeout", "template_path"])
SCALARS = st.one_of(st.text(max_size=5), st.integers(), st.booleans())
PLAIN = st.dictionaries(KEYS, SCALARS, max_size=4)
TAGS = st.dictionaries(st.text(min_size=1, max_size=3), st.text(max_size=3), max_size=4)
DEPENDENCIES = st.lists(st.text(min_size=1, max_size=6), max_size=3)
RELAXED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a shared, busy machine


@RELAXED
@given(PLAIN, PLAIN)
def test_any_other_key_is_the_childs_else_the_parents(parent: dict, child: dict) -> None:
    merged = merge(parent, child)
    assert merged == {**parent, **child}
    assert merge(parent, {}) == parent


@RELAXED
@given(DEPENDENCIES, DEPENDENCIES)
def test_dependencies_are_joined_parent_first(parent: list, child: list) -> None:
    assert merge({"dependencies": parent}, {"dependencies": child})["dependencies"] == parent + child
    overridden = merge({"dependencies": parent, "dependencies_inheritance": "override"},
                       {"dependencies": child})
    assert overridden["dependencies"] == child


@RELAXED
@given(TAGS, TAGS, st.sampled_from([None, "merge", "override"]), st.sampled_from([None, "merge", "override"]))
def test_dicts_are_replaced_unless_inheritance_says_merge(parent: dict, child: dict, above: str | None,
                                                          here: str | None) -> None:
    upper = {"stack_tags": parent, **({"stack_tags_inheritance": above} if above else {})}
    lower = {"stack_tags": child, **({"stack_tags_inheritance": here} if here else {})}
    chosen = here or above  # sceptre's child_or_parent
    expected = {**parent, **child} if chosen == "merge" else child
    assert merge(upper, lower)["stack_tags"] == expected
    assert "stack_tags" in MERGEABLE
