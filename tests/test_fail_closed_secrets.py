"""Secrets of any length, and locks that die with their holder (issue 19): the CLI as a
process against fake tools and a temporary HOME."""

from __future__ import annotations

import pytest

from tests.fakes.cluster import FakeCluster

# About fifty times the one that took `version` 11-37 s and 352 MiB: a redactor whose build
# is quadratic in the secret's length would take many minutes here, a linear one ~0.1 s.
LONG_TOKEN = ("ghp_" + "Zq9-x/7Y%k:" * 1000)[:10240]


@pytest.mark.parametrize("command", [("version",), ("version", "--json")])
def test_a_10_kb_registry_token_does_not_slow_the_engine(
    cluster: FakeCluster, command: tuple[str, ...]
) -> None:
    # The timeout is a guard that cannot be flaky (the work is ~0.1 s; the old build needed
    # minutes): the speed itself is measured by tests/benchmarks/bench_redact.py.
    result = cluster.run(*command, timeout=60, TRACEBLOC_REGISTRY_PASSWORD=LONG_TOKEN)

    assert result.returncode == 0, result.stderr
    assert LONG_TOKEN[:64] not in result.stdout + result.stderr
