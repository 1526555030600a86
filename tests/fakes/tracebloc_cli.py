"""A fake `tracebloc` CLI: a real executable playing the CLI's contract for the installer, as
tracebloc/cli's `internal/cli/auth.go` and `client.go` define it.

    cli = FakeCli(tmp_path)                       # <tmp>/cli/tracebloc on PATH
    cli.script(login=["expired", "ok"], create={"mode": "mint", ...})

The contract played:
  `tracebloc version`            "tracebloc <v> (<sha>, built <date>, <go> on <os/arch>)"
  `<cmd> --help`                 exit 0 with usage; an "old" CLI has no `login`/`client create`:
                                 `Error: unknown command "login" for "tracebloc"`, exit 1
  `tracebloc login`              prints the Open/Enter lines (URL + code); exit 0 and signed in,
                                 or `Error: the sign-in code expired …`, exit 1 (one outcome per
                                 call, from the script); TRACEBLOC_INSTALLER silences the CLI's
                                 own "run `tracebloc login`" advice. `hold-<how>`: echo off,
                                 then waits; SIGINT kills it (`default`), is recorded in
                                 state/interrupted then exit 130 (`record`), or is ignored
  `tracebloc client list --plain` `  <id>  <name>   state=<s>   namespace=<ns>   location=<loc>`
                                 per client; not signed in: exit 1
  `tracebloc client create`      --name, --location, --credential-file, --yes, --kubeconfig,
                                 --context; writes the credential file (0600, temp + rename):
                                 two comment lines, then TRACEBLOC_CLIENT_ID, TRACEBLOC_CLIENT_
                                 PASSWORD, TB_NAMESPACE (mint) or TRACEBLOC_CLIENT_ID,
                                 TB_NAMESPACE, TRACEBLOC_CLIENT_ADOPTED=1 (adopt); a location
                                 the backend does not know: `Error: … is not a valid choice`
Every call is appended to the log as a JSON line: argv, whether stdin/stdout were terminals,
TRACEBLOC_INSTALLER, and the names of the environment's variables.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.executables import executable_path, make_executable

PROGRAM = r"""
import json, os, sys, tempfile
SCENARIO, LOG, STATE = {scenario!r}, {log!r}, {state!r}
argv = sys.argv[1:]
with open(SCENARIO, encoding="utf-8") as f:
    sc = json.load(f)
def tty(fd):
    try:
        return os.isatty(fd)
    except OSError:
        return False
with open(LOG, "a", encoding="utf-8") as f:
    f.write(json.dumps({{"argv": argv, "stdin_tty": tty(0), "stdout_tty": tty(1),
                         "installer": os.environ.get("TRACEBLOC_INSTALLER"),
                         "env_names": sorted(os.environ)}}) + "\n")
os.makedirs(STATE, exist_ok=True)
signed = os.path.join(STATE, "signed-in")
def fail(msg, rc=1):
    sys.stderr.write("Error: " + msg + "\n")
    sys.exit(rc)
words = [a for a in argv if not a.startswith("-")]
if argv[:1] == ["version"]:
    print("tracebloc %s (abc123def456, built 2026-08-20T11:00:20Z, go1.24.6 on linux/amd64)"
          % sc.get("version", "0.10.9"))
    sys.exit(0)
if "--help" in argv:
    if sc.get("old") and words[:1] in (["login"], ["client"]):
        fail('unknown command "%s" for "tracebloc"' % words[0])
    print("Usage:\n  tracebloc " + " ".join(words) + " [flags]")
    sys.exit(0)
if words[:1] == ["login"]:
    outcomes = sc.get("login", ["ok"])
    count_file = os.path.join(STATE, "logins")
    done = int(open(count_file).read()) if os.path.exists(count_file) else 0
    open(count_file, "w").write(str(done + 1))
    outcome = outcomes[min(done, len(outcomes) - 1)]
    print("Sign in to tracebloc\n  Open   https://ai.tracebloc.io/device?user_code=WDJB-MJHT\n"
          "  Enter  WDJB-MJHT\n", flush=True)
    if outcome.startswith("hold-"):  # waits for approval with echo off, until a signal
        import signal, termios, time
        how = outcome[len("hold-"):]
        def record(signum, frame):
            open(os.path.join(STATE, "interrupted"), "w").close()
            os._exit(130)  # the terminal left as it is: the engine restores it
        signal.signal(signal.SIGINT, {{"default": signal.SIG_DFL, "ignore": signal.SIG_IGN,
                                       "record": record}}[how])
        mode = termios.tcgetattr(0)
        mode[3] &= ~(termios.ECHO | termios.ICANON)
        termios.tcsetattr(0, termios.TCSANOW, mode)
        print("Waiting for approval (echo off) ...", flush=True)
        time.sleep(60)
        fail("no approval")
    if outcome != "ok":
        if not os.environ.get("TRACEBLOC_INSTALLER"):
            sys.stderr.write("Run `tracebloc login` to get a fresh code.\n")
        fail("the sign-in code expired before it was approved — sign-in codes are valid for 10 minutes")
    open(signed, "w").close()
    print("Signed in as ana@example.com.")
    sys.exit(0)
if words[:2] == ["client", "list"]:
    if not os.path.exists(signed):
        fail("not signed in — run `tracebloc login` first")
    lst = sc.get("list", {{}})
    if lst.get("rc", 0):
        fail(lst.get("error", "HTTP 503: backend unavailable"), lst["rc"])
    clients = lst.get("clients", [])
    if not clients:
        print("No clients yet. Run `tracebloc client create`.")
    else:
        print("Clients in your account")
    for c in clients:
        print("  %s  %s   state=%s   namespace=%s   location=%s" % (
            c["id"], c["name"], c.get("state", "connected"), c["namespace"], c.get("location", "")))
    sys.exit(0)
if words[:2] == ["client", "create"]:
    opts, i = {{}}, 0
    while i < len(argv):
        a = argv[i]
        if a in ("--name", "--location", "--credential-file", "--kubeconfig", "--context"):
            opts[a[2:]] = argv[i + 1]
            i += 2
            continue
        if a == "--yes":
            opts["yes"] = True
        i += 1
    if not os.path.exists(signed):
        fail("not signed in — run `tracebloc login` first")
    if not opts.get("yes") and not opts.get("credential-file") and not tty(1):
        fail("refusing to provision without confirmation on a non-interactive terminal")
    cr = sc.get("create", {{"mode": "mint"}})
    loc = opts.get("location", os.environ.get("TRACEBLOC_CLIENT_LOCATION", ""))
    if loc and loc in sc.get("bad_locations", []):
        fail('creating client: HTTP 400: {{"location":["\\"%s\\" is not a valid choice."]}}' % loc)
    if cr.get("mode") == "fail":
        sys.stdout.write(cr.get("stdout", ""))
        fail(cr.get("error", "creating client: HTTP 500: internal error"), cr.get("rc", 1))
    ns = cr.get("namespace", "ana-01")
    if cr.get("mode") == "adopt":
        lines = ["TRACEBLOC_CLIENT_ID=" + cr.get("client_id", "c0ffee-uuid"), "TB_NAMESPACE=" + ns,
                 "TRACEBLOC_CLIENT_ADOPTED=1"]
    else:
        lines = ["TRACEBLOC_CLIENT_ID=" + cr.get("client_id", "c0ffee-uuid"),
                 "TRACEBLOC_CLIENT_PASSWORD=" + cr.get("password", "0123abcd" * 8),
                 "TB_NAMESPACE=" + ns]
    path = opts.get("credential-file")
    if path:
        body = ("# tracebloc client credential — written by `tracebloc client create`.\n"
                "# Mode 0600; sourced by the installer. Do not commit or share.\n"
                + "\n".join(cr.get("lines", lines)) + "\n")
        d = os.path.dirname(path) or "."
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".cred-")
        os.write(fd, body.encode())
        os.close(fd)
        if cr.get("mode") != "no-file":
            os.replace(tmp, path)
        if cr.get("mode") == "world-readable":
            os.chmod(path, 0o644)
        print("Credential written to %s (mode 0600, not shown)." % path)
    else:
        print("\n".join(lines))
    sys.exit(0)
fail('unknown command "%s" for "tracebloc"' % " ".join(words))
"""


class FakeCli:
    """The fake CLI in `<root>/cli`, scripted by `script(...)`; `calls()` are its argvs."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "cli"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.scenario = self.dir / "scenario.json"
        self.log = self.dir / "calls.jsonl"
        self.state = self.dir / "state"
        self.script()
        source = PROGRAM.format(
            scenario=str(self.scenario), log=str(self.log), state=str(self.state)
        )
        self.path = make_executable(self.dir / "tracebloc", source)
        assert self.path == executable_path(self.dir / "tracebloc")

    def script(self, **scenario: Any) -> FakeCli:
        self.scenario.write_text(json.dumps(scenario), encoding="utf-8")
        return self

    def entries(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]

    def calls(self, *, helps: bool = False) -> list[list[str]]:
        """Every argv, without the `--help`/`version` queries unless `helps`."""
        return [
            e["argv"]
            for e in self.entries()
            if helps or ("--help" not in e["argv"] and e["argv"][:1] != ["version"])
        ]
