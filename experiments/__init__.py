"""Experiments and benchmarks: each reproduces a table or figure of the docs it names.

Not shipped in the wheel. Each is run from the repository root as a module
(``python -m experiments.NAME``); ``experiments/README.md`` lists them with the table of
``docs/`` each reproduces.
"""
