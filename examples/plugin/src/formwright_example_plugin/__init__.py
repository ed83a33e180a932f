"""formwright's worked plugin example: `!toml FILE#dotted.key`, the `note` hook, the `queues` template."""
