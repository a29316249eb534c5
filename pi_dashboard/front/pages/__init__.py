"""Read queries behind the fleet pages (one module per page).

The ingest app's `fleet/selectors.py` serves the API; these shape data for templates and
read rollups and current state only, never raw events for aggregates.
"""
