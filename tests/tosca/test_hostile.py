"""Hostile and broken TOSCA input (issue 17): one clean error, exit 2, bounded work, nothing big written."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from formwright.errors import InputError
from formwright.tosca import source as csar_source
from formwright.transform.cloudformation import transform_tosca

from .conftest import write_template

SERVICE = "tosca_definitions_version: tosca_simple_yaml_1_0\ntopology_template:\n  node_templates:\n" \
          "    vm:\n      type: tosca.nodes.Compute\n"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "formwright", "transform", "tosca", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("body, message", [
    ("node_types:\n  my.Self:\n    derived_from: my.Self\n",
     "type 'my.Self' derives from itself: my.Self -> my.Self"),
    ("node_types:\n  my.A:\n    derived_from: my.B\n  my.B:\n    derived_from: my.A\n",
     "derives from itself: my.A -> my.B -> my.A"),
])
def test_type_deriving_from_itself_is_an_error_not_a_hang(tmp_path: Path, body: str, message: str):
    src = write_template(tmp_path, body + "topology_template:\n  node_templates:\n    vm:\n"
                                          "      type: tosca.nodes.Compute\n")
    with pytest.raises(InputError) as err:
        transform_tosca(src, None)
    assert message in str(err.value) and str(err.value).startswith(f"{src}:")


def test_corrupt_csar_is_one_line(tmp_path: Path):
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("service.yaml", SERVICE * 50)
    data = bytearray(good.read_bytes())
    data[40:80] = b"\xff" * 40  # inside the compressed member
    bad = tmp_path / "bad.csar"
    bad.write_bytes(bytes(data))
    truncated = tmp_path / "truncated.zip"
    truncated.write_bytes(good.read_bytes()[:60])
    for path in (bad, truncated):
        result = _cli(str(path), "-o", str(tmp_path / "out"))
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert "internal error" not in result.stderr and str(path) in result.stderr
    assert not (tmp_path / "out").exists()


def test_zip_bomb_is_refused_before_anything_big_is_written(tmp_path: Path, monkeypatch):
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("service.yaml", SERVICE)
        archive.writestr("Scripts/zeros.bin", b"\0" * (8 << 20))  # 8 MB of zeros: ~1000x compression
    temp_before = set(Path(tempfile.gettempdir()).glob("formwright-csar-*"))
    with pytest.raises(InputError) as err:
        transform_tosca(bomb, None)
    assert "zip bomb" in str(err.value)
    assert set(Path(tempfile.gettempdir()).glob("formwright-csar-*")) == temp_before, "extraction cleaned up"


def test_total_size_and_entry_count_are_bounded(tmp_path: Path, monkeypatch):
    many = tmp_path / "many.zip"
    with zipfile.ZipFile(many, "w") as archive:
        archive.writestr("service.yaml", SERVICE)
        for i in range(30):
            archive.writestr(f"files/{i}.txt", "x" * 1000)
    monkeypatch.setattr(csar_source, "MAX_ENTRIES", 20)
    with pytest.raises(InputError, match="more than 20"):
        transform_tosca(many, None)
    monkeypatch.setattr(csar_source, "MAX_ENTRIES", 10_000)
    monkeypatch.setattr(csar_source, "MAX_TOTAL", 10_000)  # the headers say little; the bytes are counted
    with pytest.raises(InputError, match="more than 10,000 bytes"):
        transform_tosca(many, None)
