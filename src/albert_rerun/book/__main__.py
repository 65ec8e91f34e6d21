from .build import main

raise SystemExit(main())
