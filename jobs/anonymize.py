"""spark-submit entry point of a source checkout: ``spark-submit jobs/anonymize.py CONFIG``.

The same application as :mod:`sparkanon.submit` (which an installed wheel carries):
``spark-submit jobs/anonymize.py [COMMAND] CONFIG [--set key=value ...]``, ``run`` unless
``backfill`` or ``validate`` comes first. Runs on the session spark-submit creates
(cluster or local mode) and exits with the job's exit code (0 ok, 2 bad config or input,
3 privacy verification failed).
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    from sparkanon.submit import submit_main
except ModuleNotFoundError:  # running from a source checkout without `pip install`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from sparkanon.submit import submit_main

if __name__ == "__main__":
    sys.exit(submit_main(sys.argv[1:]))
