"""The spark-submit application: ``spark-submit <this file> [COMMAND] CONFIG [--set ...]``.

Shipped inside the package, so that an installed wheel carries its own entry point:

.. code-block:: bash

    APP=$(python -c 'import sparkanon.submit as s; print(s.__file__)')
    spark-submit --py-files sparkanon-0.1.0-py3-none-any.whl "$APP" conf/JOB.yaml

Runs on the session spark-submit creates (cluster or local mode) and exits with the
job's exit code (0 ok, 2 bad config or input, 3 privacy verification failed, 1 a bug).
With no command, ``run`` is meant; ``backfill`` and ``validate`` may come first.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

COMMANDS = ("run", "backfill", "validate")
"""Commands the application takes as its first argument."""


def submit_main(argv: Sequence[str]) -> int:
    """Run the command line on spark-submit's arguments (``run`` unless a command is given)."""
    from sparkanon.cli import main

    args = list(argv)
    return main(args if args and args[0] in COMMANDS else ["run", *args])


if __name__ == "__main__":
    sys.exit(submit_main(sys.argv[1:]))
