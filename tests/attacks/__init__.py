"""Attacks on published releases, as an outsider would run them (issue 38's threat model).

Each attack module holds one attack: a function that reads only what an attacker holds (a
release folder: its data files, ``config.yaml``, ``metrics.json``, ``noise.json``; the
public source; the job's config) and returns an :class:`~tests.attacks.release.Outcome`:
the attack's success rate and the rate the same attack reaches on data it cannot exploit
(its chance level), each measured, never assumed. The tests run every attack twice: on a
deliberately weak release built in the test (it must succeed: the attack works) and on a
release of each family's job (it must be no better than chance). See
``docs/threat-model.md``.
"""
