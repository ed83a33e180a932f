"""The CLI's own parameter coercion (cli/coercion.py): plain values without pydantic, typer's adapter and
typer's wording for everything else (issue #16, start-up)."""

from __future__ import annotations

import subprocess
import sys
from enum import Enum
from pathlib import Path

import typer
from typer.testing import CliRunner

from formwright.cli import coercion


class Colour(str, Enum):  # noqa: UP042 - as the CLI's Output enum
    red = "red"
    blue = "blue"


FOLDER = typer.Argument(None)
NAME, COUNT, RATIO = typer.Option("x", "--name"), typer.Option(1, "--count"), typer.Option(0.5, "--ratio")
COLOUR, TAG = typer.Option(Colour.red, "--colour"), typer.Option(None, "--tag")
FILE, LOW = typer.Option(None, "--file"), typer.Option(1, "--low", min=1)


def _app() -> typer.Typer:
    coercion.install()
    app = typer.Typer(add_completion=False, rich_markup_mode=None)

    @app.command()
    def show(folder: Path | None = FOLDER, name: str = NAME, count: int = COUNT, ratio: float = RATIO,
             colour: Colour = COLOUR, tag: list[str] | None = TAG, file: list[Path] | None = FILE,
             low: int = LOW) -> None:
        print(repr((folder, name, count, ratio, colour, tag, file, low)))

    return app


def test_plain_values_come_through_typed() -> None:
    result = CliRunner().invoke(_app(), ["d", "--name", "n", "--count", "-3", "--ratio", "2.5e1", "--colour",
                                         "blue", "--tag", "a", "--tag", "b", "--file", "f.txt", "--low", "4"])
    assert result.exit_code == 0, result.output
    expected = (Path("d"), "n", -3, 25.0, Colour.blue, ["a", "b"], [Path("f.txt")], 4)
    assert result.output.strip() == repr(expected)


def test_defaults_are_kept() -> None:
    result = CliRunner().invoke(_app(), [])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == repr((None, "x", 1, 0.5, Colour.red, None, None, 1))


def test_bad_values_read_as_typer_writes_them() -> None:
    runner = CliRunner()
    bad_int = runner.invoke(_app(), ["--count", "many"])
    assert bad_int.exit_code == 2 and "Invalid value for '--count'" in bad_int.output
    bad_choice = runner.invoke(_app(), ["--colour", "green"])
    assert bad_choice.exit_code == 2 and "'green' is not one of 'red', 'blue'" in bad_choice.output
    too_low = runner.invoke(_app(), ["--low", "0"])  # bounds stay with typer's adapter
    assert too_low.exit_code == 2 and "Invalid value for '--low'" in too_low.output


def test_a_command_runs_without_importing_pydantic(tmp_path: Path) -> None:
    # `completion bash` parses an enum argument: the whole parse must do without pydantic (~0.1 s)
    code = ("import sys\nfrom formwright.cli.main import main\n"
            "sys.argv = ['formwright', 'completion', 'bash']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(str('pydantic' in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60, check=False)
    assert proc.stderr.strip().endswith("False"), proc.stderr
