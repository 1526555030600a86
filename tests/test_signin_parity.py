"""The engine's sign-in calls the tracebloc CLI as the bash twin's `provision_client` does.

For each situation both run against the same fake CLI (tests/fakes/tracebloc_cli.py) with the
same environment: the twin is `scripts/lib/provision.sh` (with `lib/common.sh`) read from the
tracebloc/client mirror at test time, never copied here; its probe of the installed client
(`detect_installed_client`, from `lib/probe.sh`) is replaced by the situation's answer and its
prompts read a file instead of /dev/tty (its own TB_TTY hook). The CLI calls each made must be
equal, apart from the `--help`/`version` queries, which each asks in its own way. The engine's
deliberate differences are listed in MIGRATION.md ("Browser sign-in: the tracebloc CLI").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from installer.commands import signin as flow
from installer.decide.errors import InstallerError
from installer.decide.model import Installed, ListRead
from installer.decide.redact import Redactor
from installer.decide.tooling import Tool
from tests.fakes.tracebloc_cli import FakeCli

MIRROR = Path("/work/.mirror/tracebloc+client/repo")
BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or BASH is None or not MIRROR.is_dir(),
    reason="needs bash and the tracebloc/client mirror (the bash twin)",
)


def twin_source(path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(MIRROR), "show", f"HEAD:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@dataclass(frozen=True)
class Situation:
    env: dict[str, str] = field(default_factory=dict)
    installed: str = ""  # the installed client's namespace ("" = none)
    cli: dict[str, object] = field(default_factory=dict)
    typed: tuple[str, ...] = ()  # lines the person types (the twin's TB_TTY)
    fails: bool = False


SITUATIONS = {
    "fresh-named-berlin": Situation(
        env={"TRACEBLOC_CLIENT_NAME": "gpu box", "TZ": "Europe/Berlin"}
    ),
    "location-from-variable": Situation(
        env={"TRACEBLOC_CLIENT_NAME": "box", "TRACEBLOC_CLIENT_LOCATION": "FR", "TZ": "UTC"}
    ),
    "no-zone-no-location": Situation(env={"TRACEBLOC_CLIENT_NAME": "box", "TZ": "UTC"}),
    "name-typed-after-an-empty-line": Situation(env={"TZ": "UTC"}, typed=("", "lab-one")),
    "lapsed-code-once": Situation(
        env={"TRACEBLOC_CLIENT_NAME": "box", "TZ": "UTC"},
        cli={"login": ["expired", "ok"]},
        typed=("",),
    ),
    "lapsed-code-twice": Situation(
        env={"TRACEBLOC_CLIENT_NAME": "box", "TZ": "UTC"},
        cli={"login": ["expired", "expired"]},
        typed=("",),
        fails=True,
    ),
    "installed-client-of-another-account": Situation(
        env={"TRACEBLOC_CLIENT_NAME": "box", "TZ": "UTC"},
        installed="bob-01",
        cli={"list": {"clients": [{"id": 7, "name": "ana", "namespace": "ana-01"}]}},
        fails=True,
    ),
    "installed-client-owned": Situation(
        env={"TRACEBLOC_CLIENT_NAME": "box", "TZ": "UTC"},
        installed="ana-01",
        cli={
            "list": {"clients": [{"id": 7, "name": "ana", "namespace": "ana-01"}]},
            "create": {"mode": "adopt", "namespace": "ana-01"},
        },
    ),
    "legacy-namespace-installed": Situation(
        env={"TRACEBLOC_CLIENT_NAME": "box", "TZ": "UTC"}, installed="tracebloc"
    ),
    "create-fails": Situation(
        env={"TRACEBLOC_CLIENT_NAME": "box", "TZ": "UTC"},
        cli={"create": {"mode": "fail"}},
        fails=True,
    ),
}


def run_twin(root: Path, situation: Situation) -> tuple[list[list[str]], int]:
    home = root / "twin-home"
    bindir = home / ".local" / "bin"
    cli = FakeCli(root / "twin")
    cli.script(**situation.cli)
    bindir.mkdir(parents=True)
    os.symlink(cli.path, bindir / "tracebloc")
    lib = root / "lib"
    lib.mkdir(exist_ok=True)
    (lib / "common.sh").write_text(twin_source("scripts/lib/common.sh"))
    (lib / "provision.sh").write_text(twin_source("scripts/lib/provision.sh"))
    data = root / "data"
    data.mkdir(exist_ok=True)
    script = f"""
set -uo pipefail
source {lib}/common.sh
source {lib}/provision.sh
_prompt_tty() {{ [[ -n "${{TB_TEST_TYPED:-}}" ]]; }}
_login_tty_ok() {{ return 1; }}
detect_installed_client() {{ INSTALLED_CLIENT_NS="${{TB_TEST_INSTALLED:-}}"; INSTALLED_CLIENT_UNKNOWN=0; }}
provision_client
"""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "HOST_DATA_DIR": str(data),
        "TB_TTY": "/dev/stdin",
        "TB_TEST_INSTALLED": situation.installed,
        **({"TB_TEST_TYPED": "1"} if situation.typed else {}),
        **situation.env,
    }
    # The twin's own test hook: its prompts read TB_TTY, here the canned lines on stdin.
    typed = "".join(line + "\n" for line in situation.typed)
    done = subprocess.run(
        [str(BASH), "-c", script], env=env, capture_output=True, text=True, input=typed, timeout=120
    )
    return cli.calls(), done.returncode


class Typed:
    def __init__(self, lines: tuple[str, ...]) -> None:
        self.lines = list(lines)

    def ask(self, prompt: str) -> str:
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)

    def secret(self, prompt: str) -> str:
        return self.ask(prompt)

    def say(self, text: str) -> None:
        pass


def run_engine(root: Path, situation: Situation, data: Path) -> tuple[list[list[str]], bool]:
    cli = FakeCli(root / "engine")
    cli.script(**situation.cli)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root / "engine-home"), **situation.env}
    rows = (Installed(situation.installed, situation.installed, "client-1.4.2", "deployed"),)
    setting = flow.Setting(
        str(data),
        ListRead(True, rows if situation.installed else ()),
        {f"ns:{situation.installed}": "stored"} if situation.installed else {},
    )
    failed = False
    try:
        flow.sign_in(
            Tool("tracebloc", str(cli.path)),
            env,
            Redactor(),
            terminal=Typed(situation.typed) if situation.typed else None,
            may_ask=bool(situation.typed),
            setting=setting,
            say=lambda _: None,
        )
    except InstallerError:
        failed = True
    return cli.calls(), failed


@pytest.mark.parametrize("name", SITUATIONS)
def test_the_engine_calls_the_cli_as_the_bash_script_does(name: str, tmp_path: Path) -> None:
    situation = SITUATIONS[name]
    twin_calls, twin_rc = run_twin(tmp_path, situation)
    engine_calls, engine_failed = run_engine(tmp_path, situation, tmp_path / "data")
    # The one deliberate difference: the engine's credential file lies in a directory of its
    # own (.tracebloc-signin), which alone it removes after; the scripts wrote it beside the
    # person's files.
    own = str(tmp_path / "data" / ".tracebloc-signin") + "/"
    engine_calls = [
        [part.replace(own, str(tmp_path / "data") + "/") for part in call] for call in engine_calls
    ]
    assert engine_calls == twin_calls
    assert engine_failed == situation.fails == (twin_rc != 0)
    assert twin_calls, "the twin never reached the CLI: the harness is broken"
