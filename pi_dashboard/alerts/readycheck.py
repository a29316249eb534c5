"""Container healthcheck: exit 0 when /readyz reports the named checks ok.

    python -m pi_dashboard.alerts.readycheck http://web:8000/readyz worker

Standard library only (it runs in the worker and beat containers, no Django set up).
"""

import json
import sys
import urllib.error
import urllib.request


def main(argv: list[str]) -> int:
    url, names = argv[0], argv[1:]
    try:
        with urllib.request.urlopen(url, timeout=4) as response:  # noqa: S310
            body = response.read()
    except urllib.error.HTTPError as exc:  # 503 still carries the checks
        body = exc.read()
    except OSError as exc:
        sys.stderr.write(f"{url}: {exc}\n")
        return 1
    checks = json.loads(body).get("checks", {})
    failing = [n for n in names if not checks.get(n, {}).get("ok")]
    for name in failing:
        detail = checks.get(name, {}).get("detail", "missing")
        sys.stderr.write(f"{name}: {detail}\n")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
