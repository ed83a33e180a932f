"""`--macros remote`: the Original template goes to CloudFormation with CAPABILITY_AUTO_EXPAND.

The local cloud does not run macros, so what is sent is checked here, at the engine's boundary.
"""

from __future__ import annotations

from pathlib import Path

from formwright.engine.stack import prepare_stacks
from formwright.model import load_project


def project_with_macro(root: Path) -> Path:
    (root / "t.yaml").write_text("Transform: Count\nResources:\n  Q: {Type: AWS::SQS::Queue, Count: 2}\n")
    (root / "formwright.yaml").write_text("name: p\nstacks:\n  s: {template: t.yaml}\n")
    return root


def test_remote_sends_the_original_with_auto_expand(tmp_path: Path) -> None:
    stack = prepare_stacks(load_project(project_with_macro(tmp_path)), remote_macros=True)["s"]
    template, body = stack.processed({})
    assert "CAPABILITY_AUTO_EXPAND" in stack.capabilities
    assert template["Transform"] == "Count" and '"Count":2' in body


def test_local_expansion_is_the_default(tmp_path: Path) -> None:
    (tmp_path / "macros").mkdir()
    (tmp_path / "macros" / "Count.py").write_text(
        "def handler(event, context):\n"
        "    fragment = event['fragment']\n"
        "    q = fragment['Resources'].pop('Q')\n"
        "    q.pop('Count')\n"
        "    fragment['Resources'].update({'Q1': q, 'Q2': dict(q)})\n"
        "    return {'requestId': event['requestId'], 'status': 'success', 'fragment': fragment}\n")
    stack = prepare_stacks(load_project(project_with_macro(tmp_path)), macros_dir=tmp_path / "macros")["s"]
    template, _ = stack.processed({})
    assert "CAPABILITY_AUTO_EXPAND" not in stack.capabilities
    assert "Transform" not in template and set(template["Resources"]) == {"Q1", "Q2"}
