"""The command line's surface: every option of every command, the help text, and a parser
whose usage errors are the engine's own (BadInput: one line, exit 2, JSON under --json).
`cli.py` pairs each command with what runs it."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from installer.decide.errors import BadInput
from installer.decide.redact import Redactor
from installer.present import output

PROG = "tracebloc-installer"


# The top level's help only: each command's help points here instead of repeating it.
EPILOG = """\
global options, before or after COMMAND (as with kubectl): -n/--namespace NS,
  --context NAME, --kubeconfig FILE, --json (or -o json), -v/--verbose

examples:
  tracebloc-installer                  install, asking once before any change
  tracebloc-installer --yes            install without questions (automation)
  tracebloc-installer plan             what install would do, every command
  tracebloc-installer -n team-a status is the client in team-a healthy?
  tracebloc-installer help install     the options of one command

main environment variables (all of them: docs/settings.md):
  TRACEBLOC_CLIENT_ID, TRACEBLOC_CLIENT_PASSWORD   the client's credentials
  TRACEBLOC_TRAINING_RESOURCES  the training size, e.g. cpu=4,memory=16Gi
  TB_NAMESPACE                  namespace and release name (default: tracebloc)
  HOST_DATA_DIR                 values file and log (default: ~/.tracebloc)

exit codes: 0 done, 1 failed or the cluster cannot be reached, 2 bad input,
  3 refused to protect what is installed, 130 interrupted
log: HOST_DATA_DIR/install.log, every command install ran (secrets masked)
"""

SUB_EPILOG = f"see {PROG} --help for the global options, examples and exit codes"

# Options every command takes before or after its name (`-n team-a status`): the ones that
# take a value, and the flags. cli moves those given before the command to after it.
GLOBAL_VALUED = ("-n", "--namespace", "--context", "--kubeconfig", "-o", "--output")
GLOBAL_FLAGS = ("--json", "-v", "--verbose")


def hoisted(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The global options at the front of `argv`, and what follows them."""
    lead: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        name = arg.split("=", 1)[0]
        if name in GLOBAL_VALUED and "=" not in arg:
            lead += argv[index : index + 2]
            index += 2
        elif name in GLOBAL_VALUED or name in GLOBAL_FLAGS:
            lead.append(arg)
            index += 1
        elif arg[:2] in ("-n", "-o") and len(arg) > 2 and not arg.startswith("--"):
            lead.append(arg)  # -nteam-a, -ojson
            index += 1
        else:
            break
    return lead, list(argv[index:])


def wants_json(argv: Sequence[str]) -> bool:
    """--json or -o json anywhere before `--`: known before parsing, so a bad flag answers
    in JSON too."""
    words = list(argv[: argv.index("--")] if "--" in argv else argv)
    pairs = zip(words, [*words[1:], ""][: len(words)], strict=True)
    return any(
        w == "--json"
        or w in ("-ojson", "--output=json", "-o=json")
        or (w in ("-o", "--output") and nxt == "json")
        for w, nxt in pairs
    )


def suggestion(word: str, known: Iterable[str]) -> str:
    """ "; did you mean X?" for what `word` abbreviates (never taken for it: all of them,
    when several), else the closest of `known`, else nothing."""
    known = [k for k in known if k not in ("-h", "--help")]
    longer = [k for k in known if k.startswith(word) and len(word) > 2]
    close = longer or difflib.get_close_matches(word, known, n=1, cutoff=0.7)
    return f"; did you mean {' or '.join(close)}?" if close else ""


class Parser(argparse.ArgumentParser):
    """Usage errors are BadInput: one line, exit 2, and JSON under --json like any other.
    No option is taken from a prefix of its name: `--delete-c` is not `--delete-cluster`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)
        self.commands: dict[str, Parser] = {}  # the subcommands' parsers, by name

    def error(self, message: str) -> NoReturn:
        raise BadInput(f"{message} (see {self.prog} --help)", "")

    def parse_args(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        namespace: argparse.Namespace | None = None,
    ) -> argparse.Namespace:
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            owner = self.commands.get(getattr(parsed, "command", "") or "", self)
            owner.unknown(extra[0])
        return parsed

    def unknown(self, word: str) -> NoReturn:
        if word.startswith("-"):
            name = word.split("=", 1)[0]
            raise BadInput(
                f"unknown option {name} for {self.prog}"
                f"{suggestion(name, self.option_words())} (see {self.prog} --help)",
                "",
            )
        raise BadInput(f"unexpected argument {word!r} for {self.prog} (see {self.prog} --help)", "")

    def option_words(self) -> list[str]:
        return [s for action in self._actions for s in action.option_strings]

    def print_help(self, file: Any = None) -> None:
        """Help goes where every answer goes (argparse would drop a failed write and exit
        0, or leave Python to fail at exit with 120): a closed or full stdout is one line on
        stderr (silence for a reader that went away) and exit 1, as for any command."""
        if file is not None:
            super().print_help(file)
        elif not output.write_stdout(self.format_help()):
            raise SystemExit(1)


def chart_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--chart", metavar="REF", help="chart reference or directory (default: tracebloc/client)"
    )
    parser.add_argument(
        "--keep-context-namespace",
        action="store_true",
        help="leave the kube context's default namespace as it is (TB_SET_CONTEXT_NAMESPACE=0)",
    )


def plan_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--values-out",
        metavar="PATH",
        help="also write the values file here (its directory must exist)",
    )
    chart_option(parser)


def install_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--yes",
        "--non-interactive",
        "-y",
        dest="yes",
        action="store_true",
        help="never prompt (automation): missing input is an error",
    )
    chart_option(parser)
    # Read before argparse (decide/old_settings.translate_argv); listed here for --help.
    parser.add_argument(
        "--data-dir",
        metavar="PATH",
        dest="_data_dir",
        help="the engine's data directory (same as HOST_DATA_DIR=PATH)",
    )
    parser.add_argument(
        "--reuse-data",
        action="store_true",
        dest="_reuse_data",
        help="keep data an earlier client left there (TB_LEFTOVER_ACTION=reuse)",
    )
    parser.add_argument(
        "--wipe-data",
        action="store_true",
        dest="_wipe_data",
        help="delete data an earlier client left there (TB_LEFTOVER_ACTION=wipe)",
    )
    parser.add_argument(
        "--force",
        "--reinstall",
        action="store_true",
        dest="_force",
        help="re-apply even when nothing would change (TRACEBLOC_FORCE_REINSTALL=1)",
    )


def common(parser: argparse.ArgumentParser, cluster: bool) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document to stdout")
    parser.add_argument(
        "-o", "--output", choices=["json"], metavar="json", help="-o json is --json (as kubectl's)"
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="log each tool call to stderr")
    if not cluster:
        return
    parser.add_argument(
        "--namespace",
        "-n",
        metavar="NS",
        help="namespace and release name (default: TB_NAMESPACE, else tracebloc)",
    )
    parser.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig file for kubectl and helm")
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context for kubectl and helm")


def uninstall_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--yes", "-y", action="store_true", help="do not ask: confirms everything asked for"
    )
    sub.add_argument(
        "--delete-data",
        action="store_true",
        help="also delete the release's volume claims and HOST_DATA_DIR/<release> "
        "(the values file and log too when nothing else is there)",
    )
    sub.add_argument(
        "--delete-cluster",
        action="store_true",
        help="also delete the local k3d cluster, if tracebloc-installer created it "
        "(helm then talks to its own context k3d-CLUSTER_NAME only)",
    )


def tools_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--download-to",
        metavar="DIR",
        help="download the pinned tools, verified, into DIR "
        "(for TRACEBLOC_TOOLS_MIRROR on a machine without internet)",
    )
    sub.add_argument(
        "--platform",
        action="append",
        metavar="OS-ARCH",
        help="with --download-to: linux-x86_64, linux-arm64, darwin-x86_64, "
        "darwin-arm64, windows-x86_64 or all (default: this machine's; "
        "repeatable)",
    )


def prepare_host_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--yes",
        "-y",
        action="store_true",
        help="accepted; prepare-host never asks (the administrator's sudo is the consent)",
    )


SHELLS = ("bash", "zsh", "fish", "powershell")


def completion_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("shell", choices=SHELLS, help="the shell to complete in")


def help_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("topic", nargs="?", metavar="COMMAND", help="the command to explain")


# One row of the command table (cli.COMMANDS): its name, its help, what runs it, its options.
Runner = Callable[[argparse.Namespace, dict[str, str], Redactor], int]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    run: Runner
    options: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    cluster: bool = True  # takes --namespace, --kubeconfig, --context
