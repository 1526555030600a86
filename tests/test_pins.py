"""The embedded tools manifest, the supported version ranges, and archive member rules."""

from __future__ import annotations

import copy
import io
import json
import warnings
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from installer.decide import pins
from installer.edges.archive import ArchiveRejected, extract_member
from tests.fakes.mirror import official_members, tar_gz, zip_bytes

REPO = Path(__file__).resolve().parent.parent


def embedded() -> dict[str, Any]:
    return json.loads((resources.files("installer") / "data" / "tools.json").read_bytes())


# --- the manifest's shape -------------------------------------------------------------------


def test_the_embedded_manifest_pins_every_tool_for_every_platform() -> None:
    manifest = pins.parse_manifest(embedded())
    assert set(manifest.artifacts) == {(t, p) for t in pins.PINNED for p in pins.PLATFORMS}
    assert pins.parse_version(manifest.versions["helm"]) >= (4, 2, 3)
    assert pins.parse_version(manifest.versions["k3d"]) >= (5, 9, 0)
    assert pins.supported("kubectl", manifest.versions["kubectl"])
    for artifact in manifest.artifacts.values():
        # The pinned version is one the engine would accept on PATH too (the CLI is accepted
        # by what it can do, asked with --help, not by a version range).
        assert artifact.tool == pins.CLI or pins.supported(artifact.tool, artifact.version), (
            artifact
        )
        assert artifact.version in artifact.url and artifact.checksum_source.startswith("https://")
    pending = manifest.pending()
    if pending:  # allowed (nothing PENDING is downloaded), but never silently
        names = ", ".join(f"{a.tool} {a.version} {a.platform}" for a in pending)
        warnings.warn(f"{len(pending)} tool checksums are PENDING: {names}", stacklevel=1)


def test_the_embedded_manifest_is_what_the_pin_script_lays_out() -> None:
    """Only checksums may differ from build/pin_tools.py's skeleton: URLs, names and members
    are derived, never typed by hand."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("pin_tools", REPO / "build" / "pin_tools.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    document = embedded()
    versions = {t: document["tools"][t]["version"] for t in pins.PINNED}
    expected = module.skeleton(versions)
    for tool in pins.PINNED:
        for key, entry in document["tools"][tool]["platforms"].items():
            shaped = dict(expected["tools"][tool]["platforms"][key])
            assert {k: v for k, v in entry.items() if k not in ("sha256", "cross_check")} == {
                k: v for k, v in shaped.items() if k != "sha256"
            }, (tool, key)


def mutated(path: list[str], value: Any) -> dict[str, Any]:
    document = copy.deepcopy(embedded())
    target = document
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return document


ENTRY = ["tools", "helm", "platforms", "linux-x86_64"]


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        pytest.param(["format"], 2, "format-1", id="unknown-format"),
        pytest.param(["tools", "k3d"], KeyError, "exactly", id="a-tool-missing"),
        pytest.param(["tools", "helm", "version"], "latest", "v1.2.3", id="version-not-a-tag"),
        pytest.param([*ENTRY, "sha256"], "ABC", "64 lowercase hex", id="short-checksum"),
        pytest.param([*ENTRY, "sha256"], "A" * 64, "64 lowercase hex", id="uppercase-checksum"),
        pytest.param(
            [*ENTRY, "url"],
            "http://get.helm.sh/helm-v4.2.3-linux-amd64.tar.gz",
            "https",
            id="plain-http-url",
        ),
        pytest.param(
            [*ENTRY, "file"], "helm.tar.gz", "end in the file name", id="file-not-the-url's"
        ),
        pytest.param([*ENTRY, "archive"], "rar", "archive must be", id="unknown-archive"),
        pytest.param([*ENTRY, "member"], "../helm", "member", id="member-outside-the-archive"),
        pytest.param(
            ["tools", "helm", "platforms", "plan9-mips"], {}, "platforms", id="unknown-platform"
        ),
    ],
)
def test_a_malformed_manifest_is_refused(path: list[str], value: Any, said: str) -> None:
    with pytest.raises(pins.ManifestError, match=said):
        pins.parse_manifest(mutated(path, value))


# --- versions ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "version", "ok"),
    [
        pytest.param("helm", "v3.14.0", True, id="helm-3.14-oldest-supported"),
        pytest.param("helm", "v3.13.3", False, id="helm-3.13-too-old"),
        pytest.param("helm", "v4.2.3", True, id="helm-4"),
        pytest.param("helm", "v5.0.0", False, id="helm-5-unknown"),
        pytest.param("kubectl", "v1.28.0", True, id="kubectl-1.28"),
        pytest.param("kubectl", "v1.27.9", False, id="kubectl-1.27"),
        pytest.param("k3d", "v5.6.0", True, id="k3d-5.6"),
        pytest.param("k3d", "v4.4.8", False, id="k3d-4"),
        pytest.param("helm", None, False, id="no-version"),
    ],
)
def test_the_supported_ranges(tool: str, version: str | None, ok: bool) -> None:
    assert pins.supported(tool, version) is ok


@pytest.mark.parametrize(
    ("tool", "out", "version"),
    [
        pytest.param(
            "kubectl",
            '{"clientVersion": {"gitVersion": "v1.37.1"}, "kustomizeVersion": "v5"}',
            "v1.37.1",
            id="kubectl-json",
        ),
        pytest.param("kubectl", "Client Version: v1.37.1", None, id="kubectl-text-is-not-parsed"),
        pytest.param("helm", "v4.1.4\n", "v4.1.4", id="helm-4-template"),
        pytest.param("helm", "v3.14.4", "v3.14.4", id="helm-3-template"),
        pytest.param("helm", "", None, id="helm-silent"),
        pytest.param(
            "k3d",
            "k3d version v5.9.0\nk3s version v1.33.4-k3s1 (default)\n",
            "v5.9.0",
            id="k3d-text",
        ),
    ],
)
def test_each_tools_version_answer_is_read(tool: str, out: str, version: str | None) -> None:
    assert pins.reported_version(tool, out) == version


@pytest.mark.helm
def test_the_real_helm_answers_the_version_query(real_helm: str) -> None:
    import subprocess

    out = subprocess.run(
        [real_helm, *pins.VERSION_ARGS["helm"]],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    assert pins.supported("helm", pins.reported_version("helm", out)), out


# --- archives ---------------------------------------------------------------------------------

BINARY = b"\x7fELF pretend binary"
MEMBER, OTHERS = "linux-amd64/helm", ("linux-amd64/LICENSE", "linux-amd64/README.md")


def extract(tmp_path: Path, data: bytes, kind: str = "tar.gz") -> bytes:
    archive = tmp_path / f"a.{kind}"
    archive.write_bytes(data)
    out = io.BytesIO()
    extract_member(str(archive), kind, MEMBER, OTHERS, out)
    return out.getvalue()


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_the_official_layout_yields_the_binary(tmp_path: Path, kind: str) -> None:
    members = official_members("helm", "linux-x86_64", BINARY)
    data = (tar_gz if kind == "tar.gz" else zip_bytes)(*members)
    assert extract(tmp_path, data, kind) == BINARY


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
@pytest.mark.parametrize(
    ("members", "said"),
    [
        pytest.param(
            [(MEMBER, BINARY, "file"), (MEMBER, b"second", "file")], "twice", id="duplicate"
        ),
        pytest.param([("linux-amd64/LICENSE", b"l", "file")], "does not hold", id="binary-missing"),
        pytest.param(
            [(MEMBER, BINARY, "file"), ("linux-amd64/../../x", b"x", "file")],
            "outside its folder",
            id="dotdot-inside-a-name",
        ),
        pytest.param(
            [(MEMBER, BINARY, "file"), ("C:/evil", b"x", "file")],
            "outside its folder",
            id="drive-letter",
        ),
        pytest.param(
            [(MEMBER, b"/bin/sh", "symlink")], "not a plain file", id="binary-is-a-symlink"
        ),
        pytest.param(
            [(MEMBER, BINARY, "file"), ("linux-amd64/LICENSE/", None, "dir")],
            "not a plain file",
            id="a-file-as-a-folder",
        ),
    ],
)
def test_archives_that_differ_from_the_official_are_refused(
    tmp_path: Path, kind: str, members: list[tuple[str, bytes | None, str]], said: str
) -> None:
    data = (tar_gz if kind == "tar.gz" else zip_bytes)(*members)
    with pytest.raises(ArchiveRejected, match=said):
        extract(tmp_path, data, kind)


def test_a_hard_link_is_refused(tmp_path: Path) -> None:
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo(MEMBER)
        info.type, info.linkname = tarfile.LNKTYPE, "/etc/passwd"
        tar.addfile(info)
    with pytest.raises(ArchiveRejected, match="not a plain file"):
        extract(tmp_path, buffer.getvalue())


def test_a_damaged_archive_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ArchiveRejected, match="cannot be read"):
        extract(tmp_path, b"\x1f\x8b not really gzip")


# --- the tracebloc CLI's pin (build/pin_tools.py) ---------------------------------------------


def _pin_tools() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("pin_tools", REPO / "build" / "pin_tools.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_pin_takes_its_checksum_from_the_releases_sha256sums(monkeypatch: Any) -> None:
    module = _pin_tools()
    entry = module.tracebloc_entry("v0.10.9", "linux", "amd64")
    assert entry["file"] == "tracebloc-v0.10.9-linux-amd64"
    assert (
        entry["checksum_source"]
        == "https://github.com/tracebloc/cli/releases/download/v0.10.9/SHA256SUMS"
    )
    sums = (
        f"{'a' * 64}  tracebloc-v0.10.9-darwin-arm64\n{'B' * 64}  tracebloc-v0.10.9-linux-amd64\n"
    )
    digest = module.published_checksum("tracebloc", entry, {entry["checksum_source"]: sums})
    assert digest == "b" * 64
    windows = module.tracebloc_entry("v0.10.9", "windows", "amd64")
    assert (
        module.published_checksum("tracebloc", windows, {windows["checksum_source"]: sums}) is None
    )
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert module.cosign_checked(entry, digest) == digest
    assert "no cosign" in entry["cross_check"]


def test_the_embedded_cli_pin_is_pending_so_it_is_never_downloaded() -> None:
    manifest = pins.parse_manifest(embedded())
    cli = [a for a in manifest.artifacts.values() if a.tool == pins.CLI]
    assert cli and all(a.pending for a in cli)  # no network when it was pinned: see MIGRATION.md
    assert all(a.url.startswith("https://github.com/tracebloc/cli/releases/download/") for a in cli)


def test_a_manifest_without_the_cli_still_parses() -> None:
    document = copy.deepcopy(embedded())
    del document["tools"]["tracebloc"]
    assert pins.CLI not in pins.parse_manifest(document).versions
