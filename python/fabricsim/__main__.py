"""``python -m fabricsim``: the same as the ``fabricsim`` command."""

import sys

from .cli import main

sys.exit(main())
