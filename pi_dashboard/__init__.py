"""pi-dashboard: dashboard and control plane for a fleet of pi coding agents."""

__version__ = "0.1.0"
