"""Shared helpers: the repository's fixture corpora (expected bytes made by the real driver)."""
import json
import pathlib

import pytest

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "fixtures"


def cases(name):
    """The cases of fixtures/<name>/cases.jsonl."""
    with open(FIXTURES / name / "cases.jsonl", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


@pytest.fixture(scope="session")
def fixtures():
    return FIXTURES


@pytest.fixture(scope="session")
def cqlwire_binary():
    """The command-line binary ($CQLWIRE, else target/debug/cqlwire), for comparisons."""
    import os

    path = os.environ.get("CQLWIRE") or str(FIXTURES.parent / "target" / "debug" / "cqlwire")
    if not os.path.exists(path):
        pytest.skip("the cqlwire binary is not built (cargo build)")
    return path
