"""Issue #17 item 7: any input to the template and project loaders ends in the project's own error
type or a result, never another exception. Bounded in examples so `make test` stays fast.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formwright.errors import FormwrightError
from formwright.model.project import load_project
from formwright.template.document import dump_json, loads

# YAML/JSON-ish fragments: indicators, tags, anchors, numbers and escapes the campaign used
_PIECES = st.sampled_from([
    "a", ": ", "- ", "[", "]", "{", "}", ",", "\n", "  ", "\t", "&x ", "*x", "!!set ", "!!int ", "!!bool ",
    "!!float ", "!!binary ", "!Ref ", "!GetAtt ", "!Sub ", "!ref ", ".nan", ".inf", "9" * 50, '"\\ud800"',
    '"', "'", "#", "? ", "|", ">", "%YAML 1.1\n", "---\n", "...\n", "\x00", "\ufeff", "\u2028", "{{ 1/0 }}",
    "{{ x }}", "Resources", "stacks", "name", "template", "parameters",
])
_TEXT = st.one_of(st.text(max_size=200), st.lists(_PIECES, max_size=40).map("".join))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT)
def test_template_loader_never_crashes(text: str) -> None:
    try:
        data = loads(text, file="fuzz.yaml")
    except FormwrightError:
        return
    dump_json(data)  # whatever loads can be written back as JSON (no NaN, no lone surrogate, no set)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(_TEXT)
def test_project_loader_never_crashes(tmp_path: Path, text: str) -> None:
    (tmp_path / "t.yaml").write_text("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n")
    (tmp_path / "formwright.yaml").write_text(text, encoding="utf-8", errors="surrogatepass")
    with contextlib.suppress(FormwrightError):
        load_project(tmp_path)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_project_values_never_crash(tmp_path: Path, value: str) -> None:
    """Well-formed project files whose values are arbitrary (Jinja, tags, numbers)."""
    (tmp_path / "t.yaml").write_text("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n")
    body = f"name: p\nregion: us-east-1\nstacks:\n  a:\n    template: t.yaml\n    tags: {{k: {value!r}}}\n" \
           f"    parameters: {{P: {value!r}}}\n    stack_name: {value!r}\n"
    (tmp_path / "formwright.yaml").write_text(body)
    with contextlib.suppress(FormwrightError):
        load_project(tmp_path)
