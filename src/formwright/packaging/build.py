"""`formwright build`'s packaging output: each stack's packaged template, its nested templates, the artifacts
themselves and one manifest of them (path, hash, size, bucket, key), so another tool can upload and deploy
exactly what formwright would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from formwright.state.applied import write_atomic
from formwright.template import dump_json, plain

MANIFEST = "artifacts.json"


def write_packaged(build_root: Path, stacks: dict[str, Any]) -> dict[str, Any]:
    """Write `<stack>/packaged.json`, `<stack>/nested/<key name>`, `artifacts/<key name>` and
    `artifacts.json` under `build_root`; the manifest."""
    manifest: dict[str, Any] = {"stacks": {}}
    store = build_root / "artifacts"
    for name, stack in stacks.items():
        if stack.config.template is None:
            continue  # a TOSCA stack's artifacts are the transform's (`tosca/`)
        folder = stack.build_dir
        folder.mkdir(parents=True, exist_ok=True)
        packaged = folder / "packaged.json"
        write_atomic(packaged, dump_json(plain(stack.original)))
        for nested in stack.nested:
            target = folder / "nested" / Path(nested.key).name
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, dump_json(plain(nested.template)))
        bucket = stack.packaged_bucket
        entries = []
        for artifact in stack.artifacts:
            copy = store / Path(artifact.key).name
            if not copy.is_file() or copy.stat().st_size != artifact.size:
                store.mkdir(parents=True, exist_ok=True)
                copy.write_bytes(artifact.data)
            entries.append({**artifact.to_json(bucket), "file": str(copy)})
        manifest["stacks"][name] = {"template": str(packaged), "bucket": bucket, "artifacts": entries}
    build_root.mkdir(parents=True, exist_ok=True)
    write_atomic(build_root / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest
