"""`python -m pi_dashboard.agent` is the same as the `pi-dashboard-agent` script."""

import sys

from pi_dashboard.agent.cli import main

sys.exit(main())
