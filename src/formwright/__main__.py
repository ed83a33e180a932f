"""`python -m formwright` runs the CLI."""

from formwright.cli.main import main

main()
