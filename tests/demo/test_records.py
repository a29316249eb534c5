"""The records pi derives from a call, reproduced byte for byte on pi's own data."""

import hashlib
import json

from pi_dashboard.demo.pifiles import js_dumps
from pi_dashboard.demo.records import corpus_row, empty_stats, stats_add, uuid7
from pi_dashboard.demo.shift import DATA_DIR


def events_of(host: str) -> list[dict]:
    text = (DATA_DIR / host / "tool-recovery-events.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_corpus_rows_match_what_pi_wrote(host: str) -> None:
    corpus = (DATA_DIR / host / "failure-corpus.jsonl").read_text("utf-8")
    tool_rows = [line for line in corpus.splitlines() if line.startswith('{"kind"')]
    derived = [js_dumps(row) for e in events_of(host) if (row := corpus_row(e))]
    assert derived == tool_rows


def test_session_stats_match_what_pi_wrote(host: str) -> None:
    sessions: dict[str, dict] = {}
    for event in events_of(host):
        if event["kind"] == "tool_argument_validation":
            sid = event["sessionId"]
            stats_add(sessions.setdefault(sid, empty_stats(sid)), event)
    stats_dir = DATA_DIR / host / "tool-recovery-stats"
    assert len(sessions) == len(list(stats_dir.iterdir()))
    for sid, document in sessions.items():
        name = hashlib.sha256(sid.encode()).hexdigest()[:24]
        assert js_dumps(document) == (stats_dir / f"{name}.json").read_text("utf-8")


def test_pi_files_reserialise_byte_for_byte(host: str) -> None:
    for name in ("tool-recovery-events.jsonl", "failure-corpus.jsonl"):
        for line in (DATA_DIR / host / name).read_text("utf-8").splitlines():
            assert js_dumps(json.loads(line)) == line
    store = (DATA_DIR / host / "model-adaptation.json").read_text("utf-8")
    assert js_dumps(json.loads(store)) + "\n" == store


def test_js_dumps_escapes_lone_surrogates_like_node() -> None:
    assert js_dumps({"d": "cut \ud83d", "n": 64.0}) == '{"d":"cut \\ud83d","n":64}'


def test_session_ids_are_uuid7() -> None:
    first, second = uuid7(), uuid7()
    assert first != second
    assert first[14] == "7"
    assert first[19] in "89ab"
    assert first[:8] <= second[:8]
