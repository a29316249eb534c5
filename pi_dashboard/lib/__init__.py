"""Helpers with no models: environment readers, JSON safety, errors."""
