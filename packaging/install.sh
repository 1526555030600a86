#!/bin/sh
# Download, verify and run tracebloc-installer on Linux or macOS.
#
#   curl -fsSL https://github.com/tracebloc/tracebloc-installer/releases/latest/download/install.sh | sh
#   curl -fsSL .../install.sh | sh -s -- plan --json      # pass arguments after `--`
#
# Settings (environment):
#   TRACEBLOC_INSTALLER_BASE_URL  where the release files live (default: the latest GitHub
#                                 release); file:// URLs work, for mirrors and tests
#   TRACEBLOC_INSTALL_DIR         where the binary goes (default: ~/.local/bin)
#
# Everything happens inside main(), called on the last line: a download cut short never
# runs half a script. Nothing is installed unless the SHA-256 matches.
set -eu

DEFAULT_BASE_URL="https://github.com/tracebloc/tracebloc-installer/releases/latest/download"

say() {
    printf 'tracebloc: %s\n' "$*" >&2
}

die() {
    say "error: $*"
    exit 1
}

detect_os() {
    case "$(uname -s)" in
        Linux) echo linux ;;
        Darwin) echo darwin ;;
        *) die "unsupported operating system $(uname -s): use install.ps1 on Windows" ;;
    esac
}

detect_arch() {
    case "$(uname -m)" in
        x86_64 | amd64) echo x86_64 ;;
        aarch64 | arm64) echo arm64 ;;
        *) die "unsupported processor $(uname -m): builds exist for x86_64 and arm64" ;;
    esac
}

# fetch URL FILE: file:// is copied (wget cannot read it), anything else downloaded.
fetch() {
    case "$1" in
        file://*)
            cp "${1#file://}" "$2" || die "cannot read $1"
            ;;
        *)
            if command -v curl >/dev/null 2>&1; then
                curl -fsSL --retry 3 -o "$2" "$1" || die "download failed: $1"
            elif command -v wget >/dev/null 2>&1; then
                wget -q -O "$2" "$1" || die "download failed: $1"
            else
                die "neither curl nor wget is installed"
            fi
            ;;
    esac
}

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d ' ' -f 1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d ' ' -f 1
    else
        die "neither sha256sum nor shasum is installed: cannot verify the download"
    fi
}

main() {
    base_url="${TRACEBLOC_INSTALLER_BASE_URL:-$DEFAULT_BASE_URL}"
    base_url="${base_url%/}"
    install_dir="${TRACEBLOC_INSTALL_DIR:-${HOME:?HOME is not set}/.local/bin}"
    os="$(detect_os)"
    arch="$(detect_arch)"
    asset="tracebloc-installer-$os-$arch"

    tmp="$(mktemp -d 2>/dev/null || mktemp -d -t tracebloc)"
    trap 'rm -rf "$tmp"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    say "downloading $asset from $base_url"
    fetch "$base_url/$asset" "$tmp/$asset"
    fetch "$base_url/$asset.sha256" "$tmp/$asset.sha256"

    # The checksum file is `<hex>  <name>` (sha256sum's format) or just `<hex>`.
    expected="$(cut -d ' ' -f 1 <"$tmp/$asset.sha256" | head -n 1 | tr 'A-F' 'a-f' | tr -d '\r\n')"
    actual="$(sha256_of "$tmp/$asset")"
    case "$expected" in
        *[!0-9a-f]* | "") die "$asset.sha256 does not hold a SHA-256 checksum" ;;
    esac
    [ "${#expected}" -eq 64 ] || die "$asset.sha256 does not hold a SHA-256 checksum"
    if [ "$expected" != "$actual" ]; then
        die "checksum mismatch for $asset (expected $expected, got $actual): nothing was installed"
    fi

    mkdir -p "$install_dir" || die "cannot create $install_dir"
    target="$install_dir/tracebloc-installer"
    # Copy beside the target, then rename: a running or half-written binary is never replaced.
    cp "$tmp/$asset" "$target.partial.$$" || die "cannot write to $install_dir"
    chmod 755 "$target.partial.$$"
    mv -f "$target.partial.$$" "$target" || die "cannot replace $target"
    say "installed $target"

    case ":${PATH:-}:" in
        *":$install_dir:"*) ;;
        *) say "note: $install_dir is not on your PATH; add it to run tracebloc-installer directly" ;;
    esac

    rm -rf "$tmp"
    trap - EXIT
    if [ "$#" -eq 0 ]; then
        set -- plan
    fi
    # Under `curl | sh` stdin is the script itself: give the installer the terminal instead.
    if [ ! -t 0 ] && (: </dev/tty) 2>/dev/null; then
        exec "$target" "$@" </dev/tty
    fi
    exec "$target" "$@"
}

main "$@"
