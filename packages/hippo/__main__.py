"""``python -m hippo``: the same command line as the ``hippo`` console script."""

import sys

from hippo.cli import main

sys.exit(main())
