"""pi-dashboard-agent: ships a host's pi state to the dashboard, applies its commands.

Standard library only, so it installs light on any machine that runs pi
(`pip install --no-deps pi-dashboard`). Never import Django (or anything outside the
standard library) from this package.
"""

AGENT_VERSION = "0.1.0"
