"""``python -m hippo_bench ...`` is the same as ``hippo bench ...``."""

from hippo_bench import main

raise SystemExit(main())
