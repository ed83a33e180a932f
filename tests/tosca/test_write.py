"""files/ of the artifact: every node ships its own copy of each file, small or big."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.transform.cloudformation import transform_tosca, write

from .conftest import write_template

APP = """
    vm_{i}:
      type: tosca.nodes.Compute
    app_{i}:
      type: tosca.nodes.SoftwareComponent
      requirements:
        - host: vm_{i}
      interfaces:
        Standard:
          create: scripts/create.sh
"""


@pytest.mark.parametrize("limit", [write.SMALL_FILE, 4])  # kept in memory, or streamed
def test_each_node_gets_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int):
    monkeypatch.setattr(write, "SMALL_FILE", limit)
    script = "#!/bin/bash\necho created\n"
    body = "topology_template:\n  node_templates:\n" + "".join(APP.format(i=i) for i in range(3))
    source = write_template(tmp_path / "src", body, files={"scripts/create.sh": script})
    transform_tosca(source, tmp_path / "out")
    for i in range(3):
        assert (tmp_path / "out" / "files" / f"app_{i}" / "scripts" / "create.sh").read_text() == script
