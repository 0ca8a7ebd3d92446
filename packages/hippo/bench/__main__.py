"""``python -m hippo.bench ...`` is the same as ``hippo bench ...``."""

from hippo.bench import main

raise SystemExit(main())
