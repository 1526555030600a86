"""The runtime step's edges in process: proc's group wrapper and terminal-keeping children,
and the executor's checks (a download that does not match is never used; a file already
as wanted is not rewritten and the daemon not bounced)."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from installer.decide import runtime as rt
from installer.decide.errors import ToolTimeout
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from installer.edges import proc
from installer.edges import runtime as executor
from installer.edges.runtime_files import RuntimeFailed
from tests.fakes.executables import make_executable

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups and sudo")

LOGGER = """import json, os, sys
with open({log!r}, "a") as out:
    out.write(json.dumps([os.path.basename(sys.argv[0]), *sys.argv[1:]]) + "\\n")
sys.exit({rc})
"""


def tool(tmp_path: Path, name: str, rc: int = 0) -> Path:
    return make_executable(tmp_path / "bin" / name, LOGGER.format(log=str(tmp_path / "log"), rc=rc))


def logged(tmp_path: Path) -> list[list[str]]:
    import json

    path = tmp_path / "log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def runner(tmp_path: Path, said: list[str]) -> executor.Runner:
    env = {"PATH": str(tmp_path / "bin")}
    return executor.Runner(
        env, Redactor(), as_root=True, say=said.append, warn=said.append, sleep=lambda s: None
    )


def test_a_tool_run_in_a_granted_group_goes_through_sg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proc, "_in_group", {})
    sg = tmp_path / "bin" / "sg"
    make_executable(sg, "import sys\nprint(sys.argv[1:])\n")
    env = {"PATH": str(tmp_path / "bin")}
    proc.run_in_group(["k3d"], "docker")
    argv = proc._launch(Tool("k3d", "/opt/k 3d"), ["cluster", "list"], env)
    assert argv == [str(sg), "docker", "-c", "exec '/opt/k 3d' cluster list"]
    assert proc._launch(Tool("helm", "/bin/helm"), ["list"], env) == ["/bin/helm", "list"]


def test_a_child_that_keeps_the_terminal_has_its_own_group_in_the_engines_session(
    tmp_path: Path,
) -> None:
    script = make_executable(
        tmp_path / "ids", "import os\nprint(os.getpgid(0), os.getsid(0), os.getpid())\n"
    )
    result = proc.run(Tool("ids", str(script)), [], timeout=30, keep_terminal=True)
    pgid, sid, pid = (int(x) for x in result.stdout.split())
    assert pgid == pid and sid == os.getsid(0)
    apart = proc.run(Tool("ids", str(script)), [], timeout=30)
    pgid, sid, pid = (int(x) for x in apart.stdout.split())
    assert sid == pid  # the default: a session of its own


def test_an_attached_child_stays_in_the_engines_foreground_group_and_is_bounded(
    tmp_path: Path,
) -> None:
    # `sudo -v` reads the password from the terminal: only the foreground group may.
    seen = tmp_path / "seen"
    ok = make_executable(
        tmp_path / "ok",
        f"import os, sys\nopen({str(seen)!r}, 'w').write(str(os.getpgid(0)))\nsys.exit(3)\n",
    )
    result = proc.run(Tool("ok", str(ok)), [], timeout=30, terminal="attached")
    assert result.rc == 3 and result.out == b"" and result.err == b""
    assert int(seen.read_text()) == os.getpgid(0)
    slow = make_executable(tmp_path / "slow", "import time\ntime.sleep(60)\n")
    with pytest.raises(ToolTimeout):
        proc.run(Tool("slow", str(slow)), [], timeout=0.5, terminal="attached")


def test_a_file_already_as_wanted_is_not_rewritten_and_the_daemon_not_restarted(
    tmp_path: Path,
) -> None:
    tool(tmp_path, "cmp", rc=0)  # same bytes in place
    tool(tmp_path, "install")
    tool(tmp_path, "systemctl")
    plan = rt.RuntimePlan(
        2,
        "docker-stopped",
        (
            rt.Step(
                ("install", "-m", "0600", rt.STAGED, rt.PROXY_DROPIN),
                "proxy",
                kind="stage",
                content="x",
                secret=True,
            ),
            rt.Step(("systemctl", "try-restart", "docker"), "restart", when="changed"),
        ),
    )
    said: list[str] = []
    done = executor.execute(plan, runner(tmp_path, said))
    assert [c[0] for c in logged(tmp_path)] == ["cmp"]
    assert done == [f"{rt.PROXY_DROPIN} is already as wanted"]


def test_a_changed_file_is_put_in_place_and_then_the_daemon_restarted(tmp_path: Path) -> None:
    tool(tmp_path, "cmp", rc=1)
    tool(tmp_path, "install")
    tool(tmp_path, "systemctl")
    plan = rt.RuntimePlan(
        2,
        "docker-stopped",
        (
            rt.Step(
                ("install", "-m", "0600", rt.STAGED, rt.PROXY_DROPIN),
                "proxy",
                kind="stage",
                content="secret-proxy",
                secret=True,
            ),
            rt.Step(("systemctl", "try-restart", "docker"), "restart", when="changed"),
        ),
    )
    executor.execute(plan, runner(tmp_path, []))
    assert [c[0] for c in logged(tmp_path)] == ["cmp", "install", "systemctl"]
    staged = Path(logged(tmp_path)[1][3])
    assert not staged.exists()  # the staged copy is gone once done


def test_a_download_whose_checksum_does_not_match_is_never_used(tmp_path: Path) -> None:
    tool(tmp_path, "hdiutil")
    url = "https://desktop.docker.com/mac/main/arm64/Docker.dmg"

    def fetch(where: str, path: str) -> None:
        body = (
            b"dmg"
            if where == url
            else f"{hashlib.sha256(b'other').hexdigest()} *Docker.dmg\n".encode()
        )
        Path(path).write_bytes(body)

    step = rt.Step(
        ("hdiutil", "attach", rt.STAGED),
        "open",
        root=False,
        kind="fetch",
        url=url,
        check=f"sha256-from:{url.rsplit('/', 1)[0]}/checksums.txt",
    )
    with pytest.raises(RuntimeFailed, match="does not match"):
        executor.execute(
            rt.RuntimePlan(2, "docker-missing", (step,)), runner(tmp_path, []), fetch=fetch
        )
    assert logged(tmp_path) == []


def test_a_download_whose_checksum_matches_is_used(tmp_path: Path) -> None:
    tool(tmp_path, "hdiutil")
    url = "https://desktop.docker.com/mac/main/arm64/Docker.dmg"

    def fetch(where: str, path: str) -> None:
        body = (
            b"dmg"
            if where == url
            else f"{hashlib.sha256(b'dmg').hexdigest()} *Docker.dmg\n".encode()
        )
        Path(path).write_bytes(body)

    step = rt.Step(
        ("hdiutil", "attach", rt.STAGED),
        "open",
        root=False,
        kind="fetch",
        url=url,
        check=f"sha256-from:{url.rsplit('/', 1)[0]}/checksums.txt",
    )
    executor.execute(
        rt.RuntimePlan(2, "docker-missing", (step,)), runner(tmp_path, []), fetch=fetch
    )
    assert [c[:2] for c in logged(tmp_path)] == [["hdiutil", "attach"]]


def test_an_optional_step_that_fails_is_a_warning_a_required_one_stops(tmp_path: Path) -> None:
    tool(tmp_path, "systemctl", rc=1)
    said: list[str] = []
    optional = rt.Step(("systemctl", "reset-failed", "docker"), "clear", optional=True)
    executor.execute(rt.RuntimePlan(2, "x", (optional,)), runner(tmp_path, said))
    assert any("going on" in line for line in said)
    required = rt.Step(("systemctl", "enable", "docker"), "enable")
    with pytest.raises(RuntimeFailed, match="systemctl enable docker"):
        executor.execute(rt.RuntimePlan(2, "x", (required,)), runner(tmp_path, said))


LOCK = rt.Step(
    ("fuser", "/var/lib/dpkg/lock-frontend"),
    "wait for the package lock",
    kind="wait-lock",
    timeout=0,
)


def test_a_package_lock_still_held_at_the_deadline_is_announced_then_tried_anyway(
    tmp_path: Path,
) -> None:
    tool(tmp_path, "fuser", rc=0)  # fuser exits 0: a process holds the lock
    said: list[str] = []
    executor._wait_lock(runner(tmp_path, said), LOCK)
    assert said == [
        "waiting for background system updates to finish (the package lock)",
        "the package lock is still held after 0s; trying anyway",
    ]
    assert logged(tmp_path) == [["fuser", "/var/lib/dpkg/lock-frontend"]]  # looked once


def test_a_free_package_lock_is_not_waited_for(tmp_path: Path) -> None:
    tool(tmp_path, "fuser", rc=1)
    said: list[str] = []
    executor._wait_lock(
        runner(tmp_path, said), rt.Step(LOCK.argv, LOCK.why, kind="wait-lock", timeout=600)
    )
    assert said == []
    assert len(logged(tmp_path)) == 1


# --- what the Linux decision reads: dpkg's architecture, whose files are there ---------------


def test_apts_architecture_is_dpkgs_own_answer(tmp_path: Path) -> None:
    from installer.edges.runtime_linux import dpkg_arch

    make_executable(
        tmp_path / "bin" / "dpkg",
        "import sys\nprint('armhf' if sys.argv[1:] == ['--print-architecture'] else 'bad')\n",
    )
    env = {"PATH": str(tmp_path / "bin")}
    assert dpkg_arch(env, frozenset({"apt-get"}), timeout=10) == "armhf"
    assert dpkg_arch(env, frozenset({"dnf"}), timeout=10) == ""  # not an apt machine: not asked
    assert dpkg_arch({"PATH": str(tmp_path / "none")}, frozenset({"apt-get"}), timeout=10) == ""


def test_each_file_the_engine_may_write_is_read_as_it_is_never_through_a_link(
    tmp_path: Path,
) -> None:
    from installer.edges.runtime_linux import file_state

    ours = tmp_path / "ours"
    ours.write_text(f"{rt.MARKER}\n[Service]\n", encoding="utf-8")
    theirs = tmp_path / "theirs"
    theirs.write_text("deb https://mirror.corp.example/docker bookworm stable\n", encoding="utf-8")
    (tmp_path / "link").symlink_to(ours)  # a link to a marked file is still not the engine's
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert [
        file_state(str(tmp_path / name))
        for name in ("absent", "ours", "theirs", "link", "dangling")
    ] == ["absent", "ours", "foreign", "link", "dangling"]
    (tmp_path / "folder").mkdir()
    assert file_state(str(tmp_path / "folder")) == "foreign"
