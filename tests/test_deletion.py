"""decide/deletion.py and locality.server_here: what uninstall may delete, and which
API server is this machine's. Pure decisions over plain data."""

from __future__ import annotations

import pytest

from installer.decide.deletion import DataPlan, Entry, data_to_delete, size_text
from installer.decide.locality import server_here


def d(name: str) -> Entry:
    return Entry(name, "dir")


def f(name: str) -> Entry:
    return Entry(name, "file")


@pytest.mark.parametrize(
    ("entries", "delete", "kept"),
    [
        pytest.param(
            [d("tracebloc"), f("values.yaml"), f("install.log"), f("install.lock"), d("locks")],
            ("tracebloc", "install.log", "values.yaml"),
            ("install.lock", "locks"),
            id="only-ours-all-goes-but-the-locks",
        ),
        pytest.param(
            [d("tracebloc"), d("team-a"), f("values.yaml")],
            ("tracebloc",),
            ("values.yaml", "team-a"),
            id="another-release-keeps-the-shared-files",
        ),
        pytest.param(
            [d("tracebloc"), d("mysql"), f("install.log")],
            ("tracebloc",),
            ("install.log", "mysql"),
            id="old-flat-layout-is-nobodys-to-delete",
        ),
        pytest.param(
            [Entry("tracebloc", "link"), f("values.yaml")],
            ("values.yaml",),
            ("tracebloc",),
            id="a-linked-release-dir-is-never-followed",
        ),
        pytest.param(
            [f("values.yaml"), Entry("values.yaml.bak", "link"), f("notes.txt")],
            (),
            ("values.yaml", "notes.txt", "values.yaml.bak"),
            id="a-file-of-the-users",
        ),
    ],
)
def test_what_delete_data_deletes(
    entries: list[Entry], delete: tuple[str, ...], kept: tuple[str, ...]
) -> None:
    plan = data_to_delete(entries, "tracebloc")
    assert isinstance(plan, DataPlan)
    assert plan.delete == delete
    assert tuple(name for name, _ in plan.keep) == kept


@pytest.mark.parametrize(
    ("server", "here"),
    [
        ("https://127.0.0.1:6550", True),
        ("https://0.0.0.0:6550", True),
        ("https://[::1]:6443", True),
        ("https://localhost:6443", True),
        ("https://host.docker.internal:6550", True),
        ("https://127.8.9.10:1", True),
        ("https://10.9.8.7:6443", False),
        ("https://prod.example.com", False),
        ("https://127.0.0.1.nip.io:6443", False),
        ("", False),
        (None, False),
        ("https://[bad", False),
    ],
)
def test_which_api_server_is_this_machine(server: str | None, here: bool) -> None:
    assert server_here(server) is here


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (None, "size unknown"),
        (0, "0 B"),
        (1023, "1023 B"),
        (1536, "1.5 KiB"),
        (5 * 2**20, "5.0 MiB"),
        (3 * 2**30, "3.0 GiB"),
    ],
)
def test_size_text(size: int | None, text: str) -> None:
    assert size_text(size) == text
