"""The work folder `.formwright/`: applied cache, build output, journal."""
