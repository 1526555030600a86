"""A fake kubectl/helm/nvidia-smi/icacls: replays a scripted cluster state and logs each call.

Generated shims on PATH call `main(tool, scenario_path, log_path)`. The scenario is JSON:
    {"<tool>": [{"match": [...], "stdout": "...", "stdout_b64": "...", "stdout_path": "...", "stderr": "...",
                 "rc": 0, "sleep": 0.0, "grandchild": false, "on_term": 0, "outlive": false}, ...]}
`on_term` (an exit code): stop on SIGTERM/CTRL_BREAK, noting "<pid> <signal>" in `<log>.signals`.
`times` (with an `id`): the rule answers that many calls, then steps aside for the next one,
so successive calls can replay a changing state (a rollout, polled).
State across calls: a rule with `"after": "<mark>"` answers only once that mark was set, one
with `"before": "<mark>"` only until then; `"mark": "<mark>"` sets it when the rule answers.
`"write": [[path, text(, mode)], ...]` writes those files when the rule answers (k3d's
kubeconfig; a program installed by a fake package manager, mode "755").
`"env_has": NAME` answers only when NAME is set in the caller's environment (run under sg).
`outlive`: clear the parent-death signal (Linux), standing in for an OS that has none.
`daemon`: leave a detached process running (own session, no stdio) that keeps every
descriptor the tool inherited, as a credential helper or a port-forward does (POSIX).
The first rule whose `match` tokens all appear in the argv, in order, answers. Every call
is appended to the log as one JSON line: {"tool", "argv", "pid", "exe", "env": {...}}; the pid of
a `grandchild` is appended to `<log>.grandchildren`, one per line; the pid of a call that starts its `sleep`
(its handlers installed) to `<log>.sleeping`.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import sys
import time

LOGGED_ENV = ("KUBECONFIG", "LD_LIBRARY_PATH", "HOME")


def _matches(tokens: list[str], argv: list[str]) -> bool:
    position = 0
    for token in tokens:
        try:
            position = argv.index(token, position) + 1
        except ValueError:
            return False
    return True


def _take_turn(rule: dict, log_path: str) -> bool:
    """A rule with `times` answers only that many calls; each answer is one byte appended to
    `<log>.uses.<id>` (O_APPEND, so concurrent callers count correctly)."""
    if "times" not in rule:
        return True
    path = f"{log_path}.uses.{rule['id']}"
    used = os.path.getsize(path) if os.path.exists(path) else 0
    if used >= int(rule["times"]):
        return False
    with open(path, "ab") as uses:
        uses.write(b".")
    return True


def main(tool: str, scenario_path: str, log_path: str) -> int:
    argv = sys.argv[1:]
    entry = {
        "tool": tool,
        "argv": argv,
        "pid": os.getpid(),
        "exe": os.path.abspath(sys.argv[0]),  # which copy ran: PATH's or a downloaded one
        "env": {k: os.environ[k] for k in LOGGED_ENV if k in os.environ},
        "env_names": sorted(os.environ),
        "t": time.time(),
    }
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(json.dumps(entry) + "\n")
    with open(scenario_path, encoding="utf-8") as handle:
        rules = json.load(handle).get(tool, [])
    marks = os.path.join(os.path.dirname(scenario_path), "marks")

    def marked(name: str) -> bool:
        return os.path.exists(os.path.join(marks, name))

    rule = next(
        (
            r
            for r in rules
            if _matches(r.get("match", []), argv)
            and ("after" not in r or marked(r["after"]))
            and ("before" not in r or not marked(r["before"]))
            and ("env_has" not in r or bool(os.environ.get(r["env_has"])))
            and _take_turn(r, log_path)
        ),
        None,
    )
    if rule is None:
        sys.stderr.write(f"fake {tool}: no scripted answer for {argv}\n")
        return 97
    if rule.get("mark"):
        os.makedirs(marks, exist_ok=True)
        with open(os.path.join(marks, rule["mark"]), "w", encoding="utf-8"):
            pass
    for path, text, *mode in rule.get("write", []):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        if mode:
            os.chmod(path, int(mode[0], 8))
    if rule.get("outlive") and sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG, none
    if rule.get("grandchild") or rule.get("daemon"):
        import subprocess  # only here: most calls start nothing, and start faster without it
    if rule.get("grandchild"):
        # A descendant that would outlive us unless the caller kills the whole tree.
        grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        # Recorded beside the call log so a test can check the descendant did not survive.
        with open(log_path + ".grandchildren", "a", encoding="utf-8") as pids:
            pids.write(f"{grandchild.pid}\n")
    if rule.get("daemon") and sys.platform != "win32":
        # A daemon (a credential helper, a port-forward): its own session, stdio detached,
        # and every descriptor the tool inherited kept open (close_fds=False), as a Go
        # program's children keep what was not opened close-on-exec.
        daemon = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            start_new_session=True,
        )
        with open(log_path + ".grandchildren", "a", encoding="utf-8") as pids:
            pids.write(f"{daemon.pid}\n")
    if rule.get("on_term"):
        # Asked to stop (SIGTERM, or CTRL_BREAK on Windows): say so in the log, as helm
        # marks its release failed, and exit.
        def stopped(signum: int, frame: object) -> None:
            with open(log_path + ".signals", "a", encoding="utf-8") as signals:
                signals.write(f"{os.getpid()} {signum}\n")
            sys.stderr.write("fake: asked to stop; release marked failed\n")
            sys.stderr.flush()
            os._exit(int(rule["on_term"]))

        signal.signal(getattr(signal, "SIGBREAK", signal.SIGTERM), stopped)
        if hasattr(signal, "SIGBREAK"):
            signal.signal(signal.SIGTERM, stopped)
    if rule.get("sleep"):
        # Noted once the signal handler is in place: a test that signals us from here on
        # reaches it (FakeCluster.sleeping_call waits for this line, not a fixed time).
        with open(log_path + ".sleeping", "a", encoding="utf-8") as sleeping:
            sleeping.write(f"{os.getpid()}\n")
        time.sleep(float(rule["sleep"]))
    if "stdout_path" in rule:  # a large answer, copied without holding it (benchmarks)
        with open(rule["stdout_path"], "rb") as answer:
            while chunk := answer.read(1 << 20):
                sys.stdout.buffer.write(chunk)
    out = (
        base64.b64decode(rule["stdout_b64"])
        if "stdout_b64" in rule
        else rule.get("stdout", "").encode()
    )
    # Raw bytes, as a Go tool writes them: no newline translation or code page on Windows.
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    sys.stderr.buffer.write(rule.get("stderr", "").encode("utf-8"))
    sys.stderr.flush()
    return int(rule.get("rc", 0))
