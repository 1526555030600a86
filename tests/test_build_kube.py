"""tests/tools/build_kube.py: the deb-src list it derives from the machine's apt sources,
and the recipe hash that decides when the cached kube-apiserver is rebuilt."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
import build_kube  # noqa: E402 - tests/tools is not a package

DEB822 = """\
Types: deb
# a comment inside a stanza
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main

Types: deb deb-src
URIs: http://second.example/debian
Suites: bookworm
Components: main
Enabled: no
"""


def apt_dir(
    tmp_path: Path, *, one_line: str = "", deb822: str = "", extra: dict[str, str] | None = None
) -> Path:
    root = tmp_path / "apt"
    (root / "sources.list.d").mkdir(parents=True)
    if one_line:
        (root / "sources.list").write_text(one_line)
    if deb822:
        (root / "sources.list.d" / "debian.sources").write_text(deb822)
    for name, text in (extra or {}).items():
        (root / "sources.list.d" / name).write_text(text)
    return root


@pytest.mark.parametrize(
    ("one_line", "deb822", "extra", "expected"),
    [
        pytest.param(
            "",
            DEB822,
            None,
            [
                "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
                "http://mirror.example/debian bookworm main contrib"
            ],
            id="deb822-release-suite-only",
        ),
        pytest.param(
            "deb http://mirror.example/debian bookworm main\n"
            "deb [arch=amd64] http://mirror.example/debian bookworm-updates main\n"
            "# deb http://old.example/debian bookworm main\n"
            "deb-src http://mirror.example/debian bullseye main\n",
            "",
            None,
            ["deb-src http://mirror.example/debian bookworm main"],
            id="one-line-format",
        ),
        pytest.param(
            "deb [signed-by=/k.gpg] http://mirror.example/debian bookworm main # trailing\n",
            "",
            None,
            ["deb-src [signed-by=/k.gpg] http://mirror.example/debian bookworm main"],
            id="one-line-with-options-and-comment",
        ),
        pytest.param(
            "",
            "",
            {
                "nodesource.sources": "Types: deb\nURIs: https://deb.nodesource.com/node_20.x\n"
                "Suites: nodistro\nComponents: main\n",
                "gcloud.list.disabled": "deb http://mirror.example/debian bookworm main\n",
            },
            [],
            id="third-party-and-disabled-files-ignored",
        ),
    ],
)
def test_deb_src_lines_follow_the_machines_release_sources(
    tmp_path: Path, one_line: str, deb822: str, extra: dict[str, str] | None, expected: list[str]
) -> None:
    root = apt_dir(tmp_path, one_line=one_line, deb822=deb822, extra=extra)
    assert build_kube.derive_deb_src_lines("bookworm", root) == expected


def test_recipe_hash_is_stable_and_follows_the_build_constants(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = build_kube.recipe_hash()
    assert before == build_kube.recipe_hash()
    monkeypatch.setattr(build_kube, "GIT_VERSION", "v1.20.3")
    assert build_kube.recipe_hash() != before
