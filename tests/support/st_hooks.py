"""schemathesis hooks (SCHEMATHESIS_HOOKS=tests.support.st_hooks).

- The ingest operations document their NDJSON body as a string: send it as text,
  as an agent does.
- `GET /agent/commands?wait=` long-polls up to 25 s; valid waits are cut to a
  fraction of a second so the run stays short (invalid ones still reach the server).
"""

from typing import Any

import schemathesis

schemathesis.serializer.alias("application/x-ndjson", "text/plain")

SHORTEST_WAIT = 0.1


@schemathesis.hook
def map_query(ctx: Any, query: dict[str, Any] | None) -> dict[str, Any] | None:
    wait = query.get("wait") if query else None
    if isinstance(wait, int | float) and not isinstance(wait, bool):
        query["wait"] = min(wait, SHORTEST_WAIT)  # type: ignore[index]
    return query
