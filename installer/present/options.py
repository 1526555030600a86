"""The command line's surface: every option of every command, the help text, and a parser
whose usage errors are the engine's own (BadInput: one line, exit 2, JSON under --json).
`cli.py` pairs each command with what runs it."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from installer.decide.errors import BadInput
from installer.decide.redact import Redactor
from installer.present import output

PROG = "tracebloc-installer"


EPILOG = """\
examples:
  tracebloc-installer                     install, asking for what is missing and before
                                          changing anything
  tracebloc-installer --yes               install without questions (automation;
                                          credentials from the environment)
  tracebloc-installer plan                what install would do, decided the same way;
                                          changes nothing
  tracebloc-installer plan --values-out values.yaml --json
  tracebloc-installer --context prod-eu -n team-a --yes
  tracebloc-installer probe --json        the machine, the cluster and the sizing
  tracebloc-installer version --json

main environment variables (all of them: MIGRATION.md):
  TRACEBLOC_CLIENT_ID, TRACEBLOC_CLIENT_PASSWORD
                                the client's credentials (else asked on the terminal)
  TRACEBLOC_TRAINING_RESOURCES  the training size, e.g. cpu=4,memory=16Gi
  TB_NAMESPACE                  namespace and release name (default: tracebloc)
  HOST_DATA_DIR                 values file and log (default: ~/.tracebloc)
  KUBECONFIG                    the kubeconfig kubectl and helm read
  HTTPS_PROXY, NO_PROXY         a proxy between you and the cluster or backend
  TB_SET_CONTEXT_NAMESPACE=0    leave the kube context's default namespace alone
  TRACEBLOC_KUBECTL, TRACEBLOC_HELM   the tool binaries to use

exit codes:
  0    done (probe/plan: answered)
  1    failed, or the cluster cannot be reached; the message says what to do next
  2    bad input: a flag or variable that cannot be used as given (named in the message)
  3    refused to protect what is installed (another client, or something unreadable)
  130  interrupted

log: install appends every command it runs, secrets masked, to HOST_DATA_DIR/install.log
(default ~/.tracebloc/install.log; %USERPROFILE%\\.tracebloc\\install.log on Windows).
"""


class Parser(argparse.ArgumentParser):
    """Usage errors are BadInput: one line, exit 2, and JSON under --json like any other."""

    def error(self, message: str) -> NoReturn:
        raise BadInput(f"{message}", f"see {self.prog} --help")

    def print_help(self, file: Any = None) -> None:
        """Help goes where every answer goes (argparse would drop a failed write and exit
        0, or leave Python to fail at exit with 120): a closed or full stdout is one line on
        stderr (silence for a reader that went away) and exit 1, as for any command."""
        if file is not None:
            super().print_help(file)
        elif not output.write_stdout(self.format_help()):
            raise SystemExit(1)


def chart_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chart", metavar="REF", help="chart reference or directory "
                        "(default: tracebloc/client)")  # fmt: skip
    parser.add_argument("--keep-context-namespace", action="store_true",
                        help="leave the kube context's default namespace as it is "
                        "(TB_SET_CONTEXT_NAMESPACE=0)")  # fmt: skip


def plan_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--values-out", metavar="PATH",
                        help="also write the values file here (its directory must exist)")  # fmt: skip
    chart_option(parser)


def install_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--yes", "--non-interactive", "-y", dest="yes", action="store_true",
                        help="never prompt (automation): missing input is an error")  # fmt: skip
    chart_option(parser)
    # Read before argparse (decide/variables.translate_argv); listed here for --help.
    parser.add_argument("--data-dir", metavar="PATH", dest="_data_dir",
                        help="the engine's data directory (same as HOST_DATA_DIR=PATH)")  # fmt: skip
    parser.add_argument("--reuse-data", action="store_true", dest="_reuse_data",
                        help="keep data an earlier client left there (TB_LEFTOVER_ACTION=reuse)")  # fmt: skip
    parser.add_argument("--wipe-data", action="store_true", dest="_wipe_data",
                        help="delete data an earlier client left there (TB_LEFTOVER_ACTION=wipe)")  # fmt: skip


def common(parser: argparse.ArgumentParser, cluster: bool) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document to stdout")
    if not cluster:
        return
    parser.add_argument("--namespace", "-n", help="namespace and release name (default: "
                        "TB_NAMESPACE, else tracebloc)")  # fmt: skip
    parser.add_argument("--kubeconfig", help="kubeconfig file for kubectl and helm")
    parser.add_argument("--context", help="kubeconfig context for kubectl and helm")
    parser.add_argument("--verbose", "-v", action="store_true", help="log each tool call to stderr")


def uninstall_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--yes", "-y", action="store_true",
                     help="do not ask: confirms everything asked for")  # fmt: skip
    sub.add_argument("--delete-data", action="store_true",
                     help="also delete the release's volume claims and HOST_DATA_DIR/<release> "
                          "(the values file and log too when nothing else is there)")  # fmt: skip
    sub.add_argument("--delete-cluster", action="store_true",
                     help="also delete the local k3d cluster, if tracebloc-installer created it "
                          "(helm then talks to its own context k3d-CLUSTER_NAME only)")  # fmt: skip


def tools_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--download-to", metavar="DIR",
                     help="download the pinned tools, verified, into DIR "
                          "(for TRACEBLOC_TOOLS_MIRROR on a machine without internet)")  # fmt: skip
    sub.add_argument("--platform", action="append", metavar="OS-ARCH",
                     help="with --download-to: linux-x86_64, linux-arm64, darwin-x86_64, "
                          "darwin-arm64, windows-x86_64 or all (default: this machine's; "
                          "repeatable)")  # fmt: skip


def prepare_host_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--verbose", "-v", action="store_true", help="log each tool call to stderr")
    sub.add_argument("--yes", "-y", action="store_true",
                     help="accepted; prepare-host never asks (the administrator's sudo is the consent)")


# One row of the command table (cli.COMMANDS): its name, its help, what runs it, its options.
Runner = Callable[[argparse.Namespace, dict[str, str], Redactor], int]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    run: Runner
    options: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    cluster: bool = True  # takes --namespace, --kubeconfig, --context, --verbose
