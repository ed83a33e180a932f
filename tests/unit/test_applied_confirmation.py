"""formwright records a stack as applied only when the target's description confirms it (issue 9, item 7).

A pure function over what DescribeStacks said and what was sent: no cloud needed, nothing mocked.
"""

from __future__ import annotations

from formwright.engine.cfn import StackInfo
from formwright.engine.runner import Prepared, unconfirmed

TEMPLATE = {"Parameters": {"Env": {"Type": "String"}, "Size": {"Type": "Number", "Default": 2},
                           "Key": {"Type": "String", "NoEcho": True}}}


def _prep(**params: str) -> Prepared:
    return Prepared(dict(params), TEMPLATE, "{}", "hash", {"Key"})


def test_a_description_matching_what_was_sent_confirms() -> None:
    info = StackInfo("s", "id", "UPDATE_COMPLETE", parameters={"Env": "prod", "Size": "2", "Key": "****"},
                     tags={"team": "blue"})
    assert unconfirmed({"team": "blue"}, info, _prep(Env="prod", Key="secret")) is None


def test_a_dropped_tag_is_not_confirmed() -> None:
    info = StackInfo("s", "id", "UPDATE_COMPLETE", parameters={"Env": "prod", "Size": "2", "Key": "****"},
                     tags={})
    assert unconfirmed({"team": "blue"}, info, _prep(Env="prod", Key="k")) == "tag team is None, not 'blue'"


def test_a_dropped_parameter_value_is_not_confirmed() -> None:
    info = StackInfo("s", "id", "UPDATE_COMPLETE", parameters={"Env": "dev", "Size": "2", "Key": "****"})
    assert unconfirmed({}, info, _prep(Env="prod", Key="k")) == "parameter Env is 'dev', not 'prod'"
