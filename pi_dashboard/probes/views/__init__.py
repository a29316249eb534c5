"""Probe pages (htmx): viewers read; operators change endpoints, schedules, channels."""
