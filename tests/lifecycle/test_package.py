"""A packaged version: package → install → upgrade from a second package (checksums verified, safe
extraction); `history` shows each revision's package digest."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from formwright.errors import InputError
from formwright.lifecycle.package import build_package


def _sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def test_package_install_and_upgrade_from_a_second_package(lifecycle, recorder, tmp_path: Path, h,
                                                           cloud) -> None:
    v1 = h.write_project(tmp_path / "v1", {"a": {"params": {"Label": "one"}}}, project_triggers=False)
    v2 = h.write_project(tmp_path / "v2", {"a": {"params": {"Label": "two"}}, "b": {}}, version="2.0",
                         project_triggers=False)
    built = h.cli(["package", str(v1), "-o", str(tmp_path / "life-1.0.tar.gz"), "--output", "json"], tmp_path)
    code, out, err = built.wait(timeout=120), *built.communicate()
    assert code == 0, err
    first = tmp_path / "life-1.0.tar.gz"
    assert json.loads(out)["digest"] == _sha(first) and json.loads(out)["version"] == "1.0"
    with tarfile.open(first) as archive:
        names = archive.getnames()
    assert {"life-1.0/formwright.yaml", "life-1.0/formwright-package.json", "life-1.0/hooks/record.py",
            "life-1.0/templates/queue.yaml"} <= set(names)
    second, _ = build_package(v2, tmp_path / "life-2.0.tar.gz")
    assert build_package(v2, tmp_path / "again.tar.gz")[1].digest == _sha(second)  # reproducible

    lifecycle.create("i1", first, {})
    lifecycle.upgrade("i1", second, {})
    assert set(h.cfn_stacks(cloud)) == {"i1-a", "i1-b"}
    assert recorder()[:2] == ["a/PreCreate", "a/PostCreate"]  # the packaged hooks ran
    shown = h.cli(["history", "i1", "--output", "json"], lifecycle.home)
    code, out, err = shown.wait(timeout=120), *shown.communicate()
    assert code == 0, err
    revisions = json.loads(out)["revisions"]
    assert [(r["version"], r["package"]["digest"]) for r in revisions] == \
        [("1.0", _sha(first)), ("2.0", _sha(second))]


def _tar(path: Path, entries: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for info, data in entries:
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return path


def test_altered_or_unsafe_archives_are_refused(lifecycle, tmp_path: Path, h) -> None:
    v1 = h.write_project(tmp_path / "v1", {"a": {}}, project_triggers=False)
    good, _ = build_package(v1, tmp_path / "good.tar.gz")
    with tarfile.open(good) as archive:
        entries = [(m, archive.extractfile(m).read()) for m in archive.getmembers() if m.isfile()]
    altered = [(m, data.replace(b"Queue", b"Queeu") if m.name.endswith("queue.yaml") else data)
               for m, data in entries]
    escaping = [*entries, (tarfile.TarInfo("life-1.0/../../evil.txt"), b"x")]
    link = tarfile.TarInfo("life-1.0/link")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    cases = {
        "the checksum of 'templates/queue.yaml' does not match": altered,
        "points outside its folder": escaping,
        "is not a regular file or folder": [*entries, (link, b"")],
        "is not in its checksum manifest": [*entries, (tarfile.TarInfo("life-1.0/extra.sh"), b"x")],
    }
    for message, members in cases.items():
        bad = _tar(tmp_path / "bad.tar.gz", members)
        with pytest.raises(InputError, match=message) as err:
            lifecycle.create("i1", bad, {})
        assert err.value.exit_code == 2
    assert lifecycle.instances() == [] and not (tmp_path / "evil.txt").exists()
