"""`formwright adopt`: write a project that manages existing stacks as they are (live.py reads them,
infer.py finds what they need and how they feed each other, write.py writes the project)."""
