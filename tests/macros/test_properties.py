"""Property: expanding arbitrary nested documents raises nothing but formwright's own errors."""

from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formwright.errors import FormwrightError
from formwright.macros import MacroRegistry, expand
from tests.macros.conftest import EXAMPLES

REGISTRY = MacroRegistry.build(project_macros={"String": "string_functions.py", "Count": "count.py"},
                               base_dir=EXAMPLES)
KEYS = st.sampled_from(["Resources", "Transform", "Fn::Transform", "Name", "Parameters", "Type", "Properties",
                        "Fn::ForEach::L", "Fn::Length", "Fn::ToJsonString", "Fn::FindInMap", "Ref",
                        "Fn::ImportValue", "DeletionPolicy", "Conditions", "Outputs", "Mappings", "Count",
                        "${X}", "&{X}"])
NAMES = st.sampled_from(["AWS::LanguageExtensions", "AWS::Include", "AWS::Serverless-2016-10-31", "String",
                         "Count", "Nope", "X", "Location"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=5), NAMES)
DOCS = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(KEYS, inner, max_size=4)), max_leaves=25)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(KEYS, DOCS, max_size=5))
def test_expansion_raises_only_formwright_errors(doc):
    with contextlib.suppress(FormwrightError):
        expand(doc, registry=REGISTRY)
