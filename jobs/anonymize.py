"""spark-submit entry point: ``spark-submit jobs/anonymize.py CONFIG [--set key=value ...]``.

Runs on the session spark-submit creates (cluster or local mode) and exits
with the job's exit code (0 ok, 2 bad config or input, 3 privacy verification
failed).
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    from sparkanon.cli import main
except ModuleNotFoundError:  # running from a source checkout without `pip install`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from sparkanon.cli import main

if __name__ == "__main__":
    sys.exit(main(["run", *sys.argv[1:]]))
