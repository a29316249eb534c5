"""A second process that holds pi's lock on a store the way pi does, then writes.

Usage: python lock_holder.py <store> <hold seconds> <model> <marker>
mkdir `<store>.lock`, refresh its mtime every 0.5 s (proper-lockfile's update),
after <hold seconds> set hosts[*][model].at = marker, temp + rename, release.
Prints "locked" once it holds the lock.
"""

import json
import os
import sys
import time
from pathlib import Path


def main() -> None:
    store, hold, model, marker = Path(sys.argv[1]), float(sys.argv[2]), *sys.argv[3:5]
    lock = Path(os.path.realpath(store) + ".lock")
    os.mkdir(lock)
    print("locked", flush=True)
    deadline = time.monotonic() + hold
    while time.monotonic() < deadline:
        os.utime(lock)
        time.sleep(0.5)
    doc = json.loads(store.read_text())
    for bucket in doc["hosts"].values():
        if model in bucket:
            bucket[model]["at"] = marker
    tmp = store.with_name(f"{store.name}.{os.getpid()}.holder.tmp")
    tmp.write_text(json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n")
    os.replace(tmp, store)
    os.rmdir(lock)


if __name__ == "__main__":
    main()
