"""``python -m hippo.cli``: the same command line as the ``hippo`` console script, entered the same way."""

import sys

from _hippo_cli import main

sys.exit(main())
