"""Metrics and the formulas behind them.

* :mod:`~sparkanon.metrics.entropy` - level entropy and HEC, PSI (Shi et al. 2024, eq. 1-2, 21),
  R_IL (eq. 23), the sensitive entropy Ent and EA/ILA/APF (Yang et al. 2014, eq. 13-16), CAVG.
* :mod:`~sparkanon.metrics.ncp` - NCP (Xu et al. 2006) and GCP (Ghinita et al. 2007).
* :mod:`~sparkanon.metrics.utility` - the discernibility metric.
* :mod:`~sparkanon.metrics.registry` - the metrics a job reports, each a class with
  per-class terms and a finishing step, run by the summarise and measure stages.
"""
