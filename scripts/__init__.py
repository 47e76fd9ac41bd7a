"""Developer tools of the repository: data generators, golden pins, checks, CI helpers.

Not shipped in the wheel. Each is run from the repository root as a module
(``python -m scripts.NAME``); ``scripts/README.md`` says what each one is for.
"""
