"""`formwright package [DIR] -o NAME-VERSION.tar.gz`: a project version in one verifiable archive."""

from __future__ import annotations

from pathlib import Path

import typer

from formwright.cli.common import DirArgument, Output, OutputOption, console, emit_json, project_dir


def register(app: typer.Typer) -> None:
    """Add `package` to the application."""

    @app.command()
    def package(
        directory: Path | None = DirArgument,
        out: Path | None = typer.Option(None, "-o", "--out", metavar="PATH",
                                        help="The archive to write (default: ./NAME-VERSION.tar.gz)."),
        output: Output = OutputOption,
    ) -> None:
        """Pack the manifest, templates, actions and hooks with a checksum manifest; install it with
        `formwright instance create NAME --from ARCHIVE` (or `instance upgrade NAME --from ARCHIVE`)."""
        from formwright.lifecycle.package import build_package

        path, info = build_package(project_dir(directory), out)
        if output is Output.json:
            emit_json({"ok": True, "archive": str(path), **info.to_json()})
            return
        console.print(f"packaged {info.name} {info.version}: {path} ({info.files} files, {info.digest})",
                      highlight=False)
