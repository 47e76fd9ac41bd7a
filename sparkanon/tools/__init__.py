"""Tools shipped with sparkanon that are not the job: the independent release check.

:mod:`sparkanon.tools.verify_release` (``sparkanon-verify``) checks a published table
against its config's privacy models with code of its own, so that a bug in the job's
``verify`` stage cannot hide itself. It imports nothing else of sparkanon.
"""
