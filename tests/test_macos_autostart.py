"""The macOS autostart steps carried out by the runtime executor against a fake `launchctl`
as strict as launchd about what it loads: a LaunchAgent in a desktop session's gui/<uid>
domain, a LaunchDaemon (root, /Library/LaunchDaemons) in the system domain with a UserName
and an absolute program. The plist files are written by the real `install`; `sudo` is a
fake that records and runs the command. Then the reboot line reads what was left."""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import sys
from pathlib import Path

import pytest

from installer.commands import runtime
from installer.decide import runtime_macos as mac
from installer.decide.drift import DockerRead
from installer.decide.redact import Redactor
from installer.decide.runtime import RuntimePlan, Step
from installer.edges import autostart
from installer.edges.runtime import Runner, execute
from tests.fakes.executables import make_executable

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX fakes and install(1)")

LAUNCHCTL = """import json, os, plistlib, sys
log = {log!r}
argv = sys.argv[1:]
with open(log, "a", encoding="utf-8") as out:
    out.write(json.dumps({{"tool": "launchctl", "argv": argv, "root": os.environ.get("FAKE_ROOT") == "1"}}) + "\\n")
if argv[:1] != ["bootstrap"] or len(argv) != 3:
    sys.exit(64)
domain, path = argv[1], argv[2]
with open(path, "rb") as handle:
    doc = plistlib.load(handle)
program = doc["ProgramArguments"]
if not os.path.isabs(program[0]):
    sys.stderr.write("launchd runs no shell: a bare program name is never found\\n")
    sys.exit(78)
if domain == "system":
    if os.environ.get("FAKE_ROOT") != "1":
        sys.stderr.write("Bootstrap failed: 1: Operation not permitted\\n")
        sys.exit(1)
    if "UserName" not in doc:
        sys.exit(78)
elif domain.startswith("gui/"):
    if os.environ.get("FAKE_HEADLESS") == "1":
        sys.stderr.write("Bootstrap failed: 125: Domain does not support specified action\\n")
        sys.exit(125)
    if "/LaunchAgents/" not in path:
        sys.exit(78)
else:
    sys.exit(64)
"""

SUDO = """import json, os, sys
log = {log!r}
argv = sys.argv[1:]
with open(log, "a", encoding="utf-8") as out:
    out.write(json.dumps({{"tool": "sudo", "argv": argv}}) + "\\n")
if argv[:1] == ["-n"]:
    argv = argv[1:]
os.environ["FAKE_ROOT"] = "1"
os.execvp(argv[0], argv)
"""


def mac_machine(tmp_path: Path, *, headless: bool) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.jsonl"
    make_executable(bin_dir / "launchctl", LAUNCHCTL.format(log=str(log)))
    make_executable(bin_dir / "sudo", SUDO.format(log=str(log)))
    install = shutil.which("install")
    assert install is not None
    (bin_dir / "install").symlink_to(install)
    home = tmp_path / "Users" / "ci"
    home.mkdir(parents=True)
    env = {
        "PATH": str(bin_dir),
        "HOME": str(home),
        mac.LAUNCH_DAEMONS_SEAM: str(tmp_path / "Library" / "LaunchDaemons"),
    }
    if headless:
        env["FAKE_HEADLESS"] = "1"
    return env


def calls(tmp_path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]


def run(steps: tuple[Step, ...], env: dict[str, str]) -> tuple[list[str], list[str]]:
    warned: list[str] = []
    done = execute(
        RuntimePlan(2, "docker-missing", steps),
        Runner(env, Redactor(), as_root=False, say=lambda _: None, warn=warned.append),
    )
    return done, warned


def test_a_headless_mac_gets_a_boot_daemon_launchd_accepts(tmp_path: Path) -> None:
    env = mac_machine(tmp_path, headless=True)
    home = env["HOME"]
    steps = mac.autostart_steps(
        home,
        os.getuid(),
        "/opt/homebrew/bin/colima",
        headless=True,
        user="ci",
        daemons=mac.launch_daemons_dir(env),
    )
    done, warned = run(steps, env)

    assert warned == []
    plist = Path(env[mac.LAUNCH_DAEMONS_SEAM]) / "io.tracebloc.runtime.plist"
    doc = plistlib.loads(plist.read_bytes())
    assert (
        doc["UserName"] == "ci" and "/opt/homebrew/bin/colima start" in doc["ProgramArguments"][2]
    )
    bootstraps = [c for c in calls(tmp_path) if c["tool"] == "launchctl"]
    assert bootstraps == [
        {"tool": "launchctl", "argv": ["bootstrap", "system", str(plist)], "root": True}
    ]
    assert not (Path(home) / "Library" / "LaunchAgents").exists()  # never loads headless
    assert autostart.runtime_starts(env, "darwin", timeout=5, headless=True)
    assert not autostart.runtime_starts(env, "darwin", timeout=5, headless=False)


def test_a_desktop_mac_gets_a_login_agent_as_the_user(tmp_path: Path) -> None:
    env = mac_machine(tmp_path, headless=False)
    steps = mac.autostart_steps(env["HOME"], os.getuid())
    done, warned = run(steps, env)

    assert warned == []
    agent = Path(env["HOME"]) / "Library" / "LaunchAgents" / "io.tracebloc.runtime.plist"
    assert plistlib.loads(agent.read_bytes())["ProgramArguments"] == [
        "/usr/bin/open",
        "-a",
        "Docker",
    ]
    assert not any(c["tool"] == "sudo" for c in calls(tmp_path))
    assert autostart.runtime_starts(env, "darwin", timeout=5)


def test_a_login_agent_on_a_headless_mac_is_what_launchd_refuses(tmp_path: Path) -> None:
    # The fake is as strict as launchd: the LaunchAgent the engine used to write there fails.
    env = mac_machine(tmp_path, headless=True)
    _, warned = run(mac.autostart_steps(env["HOME"], os.getuid(), "/opt/homebrew/bin/colima"), env)
    assert warned and "125" in warned[0]


def test_a_running_docker_desktop_gets_the_login_agent_in_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from installer.edges import runtime_macos

    env = mac_machine(tmp_path, headless=False)
    monkeypatch.setattr(runtime_macos, "has_gui_session", lambda: True)
    info = DockerRead("running", operating_system="Docker Desktop")
    steps = runtime.tier0_autostart(env, "darwin", info)
    assert any(s.argv[-1].endswith("LaunchAgents/io.tracebloc.runtime.plist") for s in steps)
    assert not any(s.root for s in steps)
    run(steps, env)
    assert runtime.tier0_autostart(env, "darwin", info) == ()  # in place: nothing more
    assert runtime.tier0_autostart({**env, "TRACEBLOC_NO_AUTOSTART": "1"}, "darwin", info) == ()
    monkeypatch.setattr(runtime_macos, "has_gui_session", lambda: False)
    (tmp_path / "h").mkdir()
    assert runtime.tier0_autostart(mac_machine(tmp_path / "h", headless=True), "darwin", info) == ()


REG = """import json, os, sys
store, log = {store!r}, {log!r}
argv = sys.argv[1:]
with open(log, "a", encoding="utf-8") as out:
    out.write(json.dumps({{"tool": "reg.exe", "argv": argv}}) + "\\n")
values = json.load(open(store)) if os.path.exists(store) else {{}}
if argv[:1] == ["query"] and len(argv) == 4 and argv[2] == "/v":
    sys.exit(0 if f"{{argv[1]}}\\\\{{argv[3]}}" in values else 1)
if argv[:1] == ["add"] and len(argv) == 9 and argv[2] == "/v" and argv[4:6] == ["/t", "REG_SZ"] \\
        and argv[6] == "/d" and argv[8] == "/f":
    values[f"{{argv[1]}}\\\\{{argv[3]}}"] = argv[7]
    json.dump(values, open(store, "w"))
    sys.exit(0)
sys.stderr.write("ERROR: Invalid syntax.\\n")
sys.exit(1)
"""


def test_a_docker_desktop_someone_else_installed_on_windows_gets_the_run_key(
    tmp_path: Path,
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    store, log = tmp_path / "registry.json", tmp_path / "calls.jsonl"
    make_executable(bin_dir / "reg.exe", REG.format(store=str(store), log=str(log)), windows=False)
    exe = tmp_path / "Program Files" / "Docker" / "Docker" / "Docker Desktop.exe"
    exe.parent.mkdir(parents=True)
    exe.write_bytes(b"MZ")
    env = {"PATH": str(bin_dir), "ProgramFiles": str(tmp_path / "Program Files")}
    info = DockerRead("running", operating_system="Docker Desktop")

    assert not autostart.runtime_starts(env, "windows", timeout=5)
    steps = runtime.tier0_autostart(env, "windows", info)
    assert [s.argv[:2] for s in steps] == [("reg.exe", "add")] and not steps[0].root
    _, warned = run(steps, env)
    assert warned == []
    assert json.loads(store.read_text()) == {
        r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run\Docker Desktop": f'"{exe}"'
    }
    assert autostart.runtime_starts(env, "windows", timeout=5)
    assert runtime.tier0_autostart(env, "windows", info) == ()  # set: nothing more
