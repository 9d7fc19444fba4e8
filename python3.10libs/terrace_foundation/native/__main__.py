"""``python3 -m terrace_foundation.native``: build the native kernels (:mod:`.build`)."""

import sys

from .build import main

sys.exit(main())
