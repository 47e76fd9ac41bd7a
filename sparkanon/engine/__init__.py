"""Engines: the local (pandas) engine and the Spark engine behind one interface.

Only :mod:`sparkanon.engine.spark` and :mod:`sparkanon.engine.session` import
pyspark; importing this package does not.
"""
