"""Engines: the local (pandas) engine and the Spark engine behind one interface.

Only :mod:`sparkanon.engine.spark`, :mod:`sparkanon.engine.session` and
:mod:`sparkanon.engine.streaming` (stateful Structured Streaming) import pyspark;
importing this package does not.
"""
