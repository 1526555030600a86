"""Build a real kube-apiserver and kube-controller-manager for the real-cluster tests.

No package registry ships a prebuilt kube-apiserver, but Debian's *source* package
`kubernetes` (bookworm: 1.20.5+really1.20.2) carries the whole tree with `vendor/`, and it
builds with Debian's golang-go in GOPATH mode. The binaries land in ~/.cache/tracebloc-installer-tests/kube/bin
(outside the clone) and are
reused while the recipe is unchanged: the stamp holds a hash of the build steps and their
constants (recipe_hash), so any edit to them rebuilds. etcd is Debian's etcd-server (/usr/bin/etcd).

    python tests/tools/build_kube.py           # build if missing or stale
    python tests/tools/build_kube.py --check   # exit 0 when built and current, 1 when not

Exit 0 when the binaries are ready, and also when the build is impossible here (not Linux,
not Debian, packages missing and no root): then it prints why, and the real-cluster tests
skip with that reason in pytest's summary, so the README's test command still runs the rest.
Exit 1 when the build itself failed.

The first build takes about 6-10 minutes on 2 cores (the Go compile); later runs return at
once. Two preparations the plain tree needs:
  * vendor/github.com/modern-go/reflect2 1.0.1 crashes at run time with Go >= 1.18; Debian's
    golang-github-modern-go-reflect2-dev (1.0.2) replaces it.
  * pkg/generated/openapi/zz_generated.openapi.go is generated, not shipped: the vendored
    openapi-gen writes it over the same package list upstream's Makefile.generated_files uses.

The source is fetched with a private apt directory (<cache>/kube/apt): its deb-src list is
derived from the machine's own apt sources, so no mirror host is written into the repository
and the system's apt configuration is never changed. Missing Debian build packages are
installed with apt-get when running as root; otherwise the script says what to install.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import inspect
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Outside the clone, keyed by the recipe (the stamp), so a fresh clone on a machine that built
# it once reuses it. TRACEBLOC_TEST_CACHE moves it.
CACHE = Path(
    os.environ.get("TRACEBLOC_TEST_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "tracebloc-installer-tests"
)
ROOT = CACHE / "kube"
BIN = ROOT / "bin"
STAMP = ROOT / "recipe.sha256"
WORK = ROOT / "work"

SOURCE_PACKAGE = "kubernetes"
UPSTREAM_VERSION = "1.20.5+really1.20.2"
# What the server reports as its version (the tree's real upstream release).
GIT_VERSION = "v1.20.2"
BINARIES = ("kube-apiserver", "kube-controller-manager")
ETCD = Path("/usr/bin/etcd")
REFLECT2 = Path("/usr/share/gocode/src/github.com/modern-go/reflect2")
DEBIAN_PACKAGES = ("golang-go", "etcd-server", "golang-github-modern-go-reflect2-dev", "dpkg-dev")
GO_PACKAGE = "k8s.io/kubernetes"


class BuildImpossible(Exception):
    """The build cannot run on this machine (not a failure of the recipe)."""


def recipe_hash() -> str:
    """A hash of everything that decides what gets built: the steps and their constants.

    The steps are hashed as syntax trees, so editing their code rebuilds while comments,
    layout, this file's prose and its command line do not.
    """
    steps = (fetch_source, replace_reflect2, openapi_packages, go_env, ldflags, build)
    constants = (SOURCE_PACKAGE, UPSTREAM_VERSION, GIT_VERSION, BINARIES, str(REFLECT2), GO_PACKAGE)
    trees = (ast.dump(ast.parse(textwrap.dedent(inspect.getsource(step)))) for step in steps)
    text = repr(constants) + "".join(trees)
    return hashlib.sha256(text.encode()).hexdigest()


def is_current() -> bool:
    """True when the binaries exist and were built by this exact recipe."""
    try:
        stamp = STAMP.read_text().strip()
    except OSError:
        return False
    return stamp == recipe_hash() and all((BIN / name).is_file() for name in BINARIES)


def binaries() -> dict[str, Path]:
    """Paths of the built binaries and etcd (call after a successful build)."""
    found = {name: BIN / name for name in BINARIES}
    found["etcd"] = ETCD
    return found


def log(message: str) -> None:
    print(f"build_kube: {message}", flush=True)


def run(argv: list[str], **kwargs: object) -> None:
    shown = " ".join(argv)
    log("$ " + (shown if len(shown) <= 300 else shown[:300] + " …"))
    subprocess.run(argv, check=True, **kwargs)  # type: ignore[call-overload]


def os_release() -> dict[str, str]:
    fields: dict[str, str] = {}
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return fields
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key.strip()] = value.strip().strip('"')
    return fields


def dpkg_installed(package: str) -> bool:
    result = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True
    )
    return result.returncode == 0 and result.stdout.strip().endswith(" installed")


def ensure_debian_packages() -> None:
    if shutil.which("dpkg-query") is None or shutil.which("apt-get") is None:
        raise BuildImpossible("not a Debian-family system (no dpkg/apt-get)")
    missing = [p for p in DEBIAN_PACKAGES if not dpkg_installed(p)]
    if not missing:
        return
    if os.geteuid() != 0:
        raise BuildImpossible(
            f"missing Debian packages {' '.join(missing)}; install them with "
            f"`sudo apt-get install {' '.join(missing)}`"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # Refresh the lists only when apt does not know a package yet.
    unknown = (
        subprocess.run(["apt-cache", "show", *missing], capture_output=True, env=env).returncode
        != 0
    )
    if unknown:
        run(["apt-get", "update", "-q"], env=env)
    run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing], env=env)


# --- the private apt directory -------------------------------------------------------------


def _deb822_stanzas(text: str) -> list[dict[str, str]]:
    stanzas: list[dict[str, str]] = []
    current: dict[str, str] = {}
    key = ""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if not line.strip():
            if current:
                stanzas.append(current)
            current, key = {}, ""
            continue
        if line[0] in " \t" and key:
            current[key] += "\n" + line.strip()
            continue
        key, _, value = line.partition(":")
        key = key.strip().lower()
        current[key] = value.strip()
    if current:
        stanzas.append(current)
    return stanzas


def derive_deb_src_lines(codename: str, apt_dir: Path = Path("/etc/apt")) -> list[str]:
    """One-line `deb-src` entries for every enabled `deb` source of the release `codename`.

    Only the release's own suite is kept (not -updates/-security: the source package lives
    in the release), so third-party repositories with other suite names drop out.
    """
    lines: list[str] = []
    one_line_files = [
        apt_dir / "sources.list",
        *sorted((apt_dir / "sources.list.d").glob("*.list")),
    ]
    for path in one_line_files:
        try:
            text = path.read_text()
        except OSError:
            continue
        for raw in text.splitlines():
            entry = raw.split("#", 1)[0].strip()
            match = re.match(r"^deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+(.+)$", entry)
            if match and match.group(3) == codename:
                options = (match.group(1) or "").strip()
                parts = ["deb-src", *([options] if options else []), match.group(2), codename]
                lines.append(" ".join(parts + match.group(4).split()))
    for path in sorted((apt_dir / "sources.list.d").glob("*.sources")):
        try:
            stanzas = _deb822_stanzas(path.read_text())
        except OSError:
            continue
        for stanza in stanzas:
            if "deb" not in stanza.get("types", "").split():
                continue
            if stanza.get("enabled", "yes").lower() == "no":
                continue
            if codename not in stanza.get("suites", "").split():
                continue
            signed_by = stanza.get("signed-by", "")
            options = f"[signed-by={signed_by}] " if signed_by and "\n" not in signed_by else ""
            for uri in stanza.get("uris", "").split():
                lines.append(
                    f"deb-src {options}{uri} {codename} {stanza.get('components', 'main')}"
                )
    return sorted(set(lines))


def fetch_source(into: Path) -> Path:
    """Download and unpack the Debian source package; return the unpacked tree."""
    codename = os_release().get("VERSION_CODENAME", "")
    if not codename:
        raise BuildImpossible(
            "cannot tell the Debian release (no VERSION_CODENAME in /etc/os-release)"
        )
    deb_src = derive_deb_src_lines(codename)
    if not deb_src:
        raise BuildImpossible(f"no apt source for {codename!r} to derive a deb-src entry from")
    apt = ROOT / "apt"
    for sub in ("lists/partial", "cache/archives/partial", "parts"):
        (apt / sub).mkdir(parents=True, exist_ok=True)
    (apt / "sources.list").write_text("\n".join(deb_src) + "\n")
    options = [
        "-o",
        f"Dir::Etc::SourceList={apt / 'sources.list'}",
        "-o",
        f"Dir::Etc::SourceParts={apt / 'parts'}",
        "-o",
        f"Dir::State::Lists={apt / 'lists'}",
        "-o",
        f"Dir::Cache={apt / 'cache'}",
        "-o",
        "APT::Sandbox::User=root" if os.geteuid() == 0 else "Debug::NoDropPrivs=true",
    ]
    run(["apt-get", "-q", *options, "update"])
    offered = subprocess.run(
        ["apt-cache", *options, "showsrc", SOURCE_PACKAGE],
        capture_output=True,
        text=True,
        check=False,
    )
    versions = re.findall(r"^Version: (\S+)$", offered.stdout, re.MULTILINE)
    if not any(v.startswith(UPSTREAM_VERSION) for v in versions):
        raise BuildImpossible(
            f"the {codename} sources offer {SOURCE_PACKAGE} "
            f"{', '.join(versions) or 'in no version'}, not {UPSTREAM_VERSION}"
        )
    into.mkdir(parents=True, exist_ok=True)
    run(["apt-get", "-q", *options, "source", "--download-only", SOURCE_PACKAGE], cwd=into)
    dscs = sorted(into.glob(f"{SOURCE_PACKAGE}_*.dsc"))
    if not dscs or UPSTREAM_VERSION not in dscs[-1].name:
        found = ", ".join(p.name for p in dscs) or "nothing"
        raise BuildImpossible(f"apt offers {found}, not {SOURCE_PACKAGE} {UPSTREAM_VERSION}")
    tree = into / "tree"
    # apt already checked the files against the signed Sources index; --no-check skips only
    # the .dsc's own signature, whose keyring (debian-keyring) is not installed by default.
    run(
        ["dpkg-source", "--no-check", "-x", "--skip-debianization", str(dscs[-1]), str(tree)],
        stdout=subprocess.DEVNULL,
    )
    return tree


# --- preparing and building the tree -------------------------------------------------------


def replace_reflect2(src: Path) -> None:
    vendored = src / "vendor" / "github.com" / "modern-go" / "reflect2"
    shutil.rmtree(vendored)
    shutil.copytree(REFLECT2, vendored, symlinks=False)


def openapi_packages(src: Path) -> list[str]:
    """The packages upstream's Makefile feeds openapi-gen for the kube target.

    Every directory with Go files outside vendor/ (staging/src/X named vendor/X), whose files
    carry a `// +k8s:` tag and mention `+k8s:openapi-gen=`, minus code-generator and
    sample-apiserver.
    """
    tagged = re.compile(r"^// *\+k8s:", re.MULTILINE)
    dirs: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(src):
        rel = Path(dirpath).relative_to(src).as_posix()
        if rel == ".":
            dirnames[:] = [d for d in dirnames if not d.startswith(("_", ".")) and d != "vendor"]
        for name in filenames:
            if not name.endswith(".go"):
                continue
            text = (Path(dirpath) / name).read_text(errors="replace")
            if tagged.search(text) and "+k8s:openapi-gen=" in text:
                dirs.add(re.sub(r"^staging/src/", "vendor/", rel))
    excluded = ("vendor/k8s.io/code-generator/", "vendor/k8s.io/sample-apiserver/")
    return [f"{GO_PACKAGE}/{d}" for d in sorted(dirs) if not (d + "/").startswith(excluded)]


def go_env(gopath: Path) -> dict[str, str]:
    return {
        **os.environ,
        "GOPATH": str(gopath),
        "GO111MODULE": "off",
        "CGO_ENABLED": "0",
        "GOFLAGS": "",
        "GOCACHE": str(WORK / "gocache"),
    }


def ldflags() -> str:
    major, minor = GIT_VERSION.lstrip("v").split(".")[:2]
    values = {
        "gitVersion": GIT_VERSION,
        "gitMajor": major,
        "gitMinor": minor,
        "gitTreeState": "clean",
        "gitCommit": "debian-" + UPSTREAM_VERSION,
        "buildDate": "1970-01-01T00:00:00Z",
    }
    flags = ["-s", "-w"]
    for package in ("client-go/pkg/version", "component-base/version"):
        for key, value in values.items():
            flags.append(f"-X {GO_PACKAGE}/vendor/k8s.io/{package}.{key}={value}")
    return " ".join(flags)


def build() -> None:
    if not sys.platform.startswith("linux"):
        raise BuildImpossible(f"the kube-apiserver build needs Linux (this is {sys.platform})")
    ensure_debian_packages()
    if shutil.which("go") is None:
        raise BuildImpossible("golang-go is installed but `go` is not on PATH")
    if WORK.exists():
        shutil.rmtree(WORK)
    tree = fetch_source(WORK / "download")
    gopath = WORK / "gopath"
    src = gopath / "src" / GO_PACKAGE
    src.parent.mkdir(parents=True)
    tree.rename(src)
    replace_reflect2(src)
    env = go_env(gopath)
    nice = ["nice", "-n", "10"] if shutil.which("nice") else []
    openapi_gen = WORK / "openapi-gen"
    run(
        [
            *nice,
            "go",
            "build",
            "-o",
            str(openapi_gen),
            f"{GO_PACKAGE}/vendor/k8s.io/kube-openapi/cmd/openapi-gen",
        ],
        cwd=src,
        env=env,
    )
    packages = openapi_packages(src)
    log(f"openapi-gen over {len(packages)} packages")
    run(
        [
            *nice,
            str(openapi_gen),
            "--logtostderr",
            "--v",
            "0",
            "-i",
            ",".join(packages),
            "-p",
            f"{GO_PACKAGE}/pkg/generated/openapi",
            "-O",
            "zz_generated.openapi",
            "-h",
            str(src / "vendor/k8s.io/code-generator/hack/boilerplate.go.txt"),
            "-o",
            str(gopath / "src"),
            "-r",
            str(WORK / "openapi-violations.report"),
        ],
        cwd=src,
        env=env,
    )
    if not (src / "pkg/generated/openapi/zz_generated.openapi.go").is_file():
        raise RuntimeError("openapi-gen did not write zz_generated.openapi.go")
    out = WORK / "out"
    out.mkdir()
    run(
        [
            *nice,
            "go",
            "build",
            "-tags",
            "providerless",
            "-trimpath",
            "-ldflags",
            ldflags(),
            "-o",
            str(out) + "/",
            *(f"{GO_PACKAGE}/cmd/{name}" for name in BINARIES),
        ],
        cwd=src,
        env=env,
    )
    BIN.mkdir(parents=True, exist_ok=True)
    for name in BINARIES:
        os.replace(out / name, BIN / name)
    STAMP.write_text(recipe_hash() + "\n")
    shutil.rmtree(WORK)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="only report whether the build is current"
    )
    args = parser.parse_args(argv)
    if args.check:
        current = is_current() and ETCD.is_file()
        print("kube binaries are current" if current else "kube binaries missing or stale")
        return 0 if current else 1
    if is_current() and ETCD.is_file():
        log(f"kube-apiserver and kube-controller-manager already built in {BIN}")
        return 0
    started = time.monotonic()
    try:
        build()
    except BuildImpossible as error:
        print(
            f"build_kube: cannot build here: {error}; the real-cluster tests will be skipped",
            file=sys.stderr,
        )
        return 0
    except subprocess.CalledProcessError as error:
        print(
            f"build_kube: FAILED: {' '.join(map(str, error.cmd))} exited {error.returncode}",
            file=sys.stderr,
        )
        return 1
    log(f"built {', '.join(BINARIES)} in {BIN} in {time.monotonic() - started:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
