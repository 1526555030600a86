#!/bin/sh
# Download tracebloc-installer for Linux or macOS, verify it, install it, run it.
#
#   curl --proto '=https' --tlsv1.2 -fsSL https://github.com/tracebloc/tracebloc-installer/releases/latest/download/install.sh | sh
#   curl ... | sh -s -- --yes          # arguments after `--` go to tracebloc-installer
#
# Settings (environment), all optional:
#   TRACEBLOC_INSTALLER_VERSION       a release to pin, e.g. 1.2.0 (default: the latest release)
#   TRACEBLOC_INSTALLER_INSTALL_DIR   where the binary goes (default: ~/.local/bin)
#   TRACEBLOC_INSTALLER_DOWNLOAD_URL  a mirror: an https:// URL or a local directory holding
#                                     the release files; with a pinned version they are read
#                                     from its v<VERSION>/ subdirectory
#   TRACEBLOC_INSTALLER_NO_RUN        1: install only, do not run it
#   TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE
#                                     1: do not check SHA256SUMS's signature (a warning
#                                     every time; the SHA-256 is still checked)
#
# The binary runs only if its SHA-256 matches its line in the release's SHA256SUMS, and
# SHA256SUMS is trusted only if SHA256SUMS.sig is a signature by the release key pinned
# below (checked with openssl): whoever can replace the binary on the way can replace
# SHA256SUMS too, but cannot sign it. Plain http:// is accepted for a loopback address only
# (127.x.x.x, localhost, [::1]): traffic that never leaves the machine, which is how the
# tests serve a release.
# Everything happens inside main(), called on the last line: a download cut short runs nothing.
set -eu

RELEASES="https://github.com/tracebloc/tracebloc-installer/releases"

# The public half of the key that signs every release's SHA256SUMS (packaging/release-key.pem).
# BEGIN RELEASE KEY (written by build/release_key.py pin; empty: none pinned yet)
RELEASE_KEY_ID=""
RELEASE_KEY_PEM=""
# END RELEASE KEY

say() {
    printf 'tracebloc-installer: %s\n' "$*" >&2
}

die() {
    say "error: $*"
    exit 1
}

# True for a musl C library (Alpine and friends): the binaries are built against glibc.
# Without ldd, the musl loader's presence decides; with a glibc ldd, a musl loader that
# merely sits beside it (Debian's musl package) does not.
is_musl() {
    if command -v ldd >/dev/null 2>&1; then
        case "$(ldd --version 2>&1 || true)" in
            *musl*) return 0 ;;
            *) return 1 ;;
        esac
    fi
    for loader in /lib/ld-musl-*.so.1; do
        [ -e "$loader" ] && return 0
    done
    return 1
}

detect_os() {
    kernel="$(uname -s)"
    case "$kernel" in
        Linux)
            if is_musl; then
                die "this Linux uses the musl C library (e.g. Alpine); tracebloc-installer is built for glibc: use a glibc distribution (Debian, Ubuntu, RHEL...) or a glibc container"
            fi
            echo linux
            ;;
        Darwin) echo darwin ;;
        MINGW* | MSYS* | CYGWIN* | Windows_NT)
            die "this is Windows ($kernel): use install.ps1 in PowerShell instead"
            ;;
        *) die "unsupported operating system '$kernel': builds exist for Linux, macOS and Windows" ;;
    esac
}

detect_arch() {
    machine="$(uname -m)"
    case "$machine" in
        x86_64 | amd64)
            # Under Rosetta 2 an x86_64 shell on Apple silicon reports x86_64: the native
            # build is the better one, and the kernel tells the truth through sysctl.
            if [ "$1" = darwin ] && [ "$(sysctl -n hw.optional.arm64 2>/dev/null || true)" = 1 ]; then
                echo arm64
            else
                echo x86_64
            fi
            ;;
        aarch64 | arm64) echo arm64 ;;
        *) die "unsupported processor architecture '$machine': builds exist for x86_64 and arm64" ;;
    esac
}

# The only plain-http URLs accepted point at this machine (the tests' local server): the host
# must be exactly localhost, [::1] or a dotted 127.x address, so 127.0.0.1.example.com or
# http://127.0.0.1@example.com/ do not pass.
is_loopback_http() {
    rest="${1#http://}"
    [ "$rest" != "$1" ] || return 1
    authority="${rest%%/*}"
    case "$authority" in
        "[::1]") return 0 ;;
        "[::1]:"*) port="${authority#"[::1]:"}" host=loopback ;;
        *:*) port="${authority#*:}" host="${authority%%:*}" ;;
        *) port=80 host="$authority" ;;
    esac
    case "$port" in
        "" | *[!0-9]*) return 1 ;;
    esac
    case "$host" in
        loopback | localhost) return 0 ;;
        127.*[!0-9.]*) return 1 ;;
        127.*) return 0 ;;
    esac
    return 1
}

# download SOURCE NAME FILE: copy SOURCE/NAME into FILE. Returns 0, or 2 when the file does
# not exist there (HTTP 404, or absent from a local directory); other failures are fatal.
download() {
    src="$1" name="$2" dest="$3"
    case "$src" in
        https://* | http://*) ;;
        *)
            [ -f "$src/$name" ] || return 2
            cp "$src/$name" "$dest" || die "cannot copy $src/$name"
            return 0
            ;;
    esac
    url="$src/$name"
    errors="$dest.err"
    if command -v curl >/dev/null 2>&1; then
        if is_loopback_http "$url"; then
            set -- --proto '=http' --proto-redir '=http'
        else
            # --proto-redir too: a redirect must not downgrade to plain http either.
            set -- --proto '=https' --proto-redir '=https' --tlsv1.2
        fi
        status=0
        code="$(curl "$@" -fsSL --retry 3 --connect-timeout 30 -w '%{http_code}' -o "$dest" "$url" 2>"$errors")" || status=$?
        [ "$status" -eq 0 ] && return 0
        [ "$code" = 404 ] && return 2
        sed "s/^/  /" "$errors" >&2
        die "download failed: $url (curl exit $status, HTTP ${code:-none})"
    elif command -v wget >/dev/null 2>&1; then
        if is_loopback_http "$url"; then
            set --
        else
            set -- --https-only
        fi
        status=0
        wget "$@" --tries=3 --timeout=30 -nv -S -O "$dest" "$url" 2>"$errors" || status=$?
        [ "$status" -eq 0 ] && return 0
        if grep -q 'HTTP/[0-9.]* 404' "$errors"; then
            return 2
        fi
        sed "s/^/  /" "$errors" >&2
        die "download failed: $url (wget exit $status)"
    fi
    die "neither curl nor wget is installed: install one of them and run this again"
}

# The SHA-256 of a file, read through stdin so no file name can disturb the output format.
# No tool is a failure, never a reason to skip the check.
sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        digest="$(sha256sum <"$1" | awk '{ print $1 }')"
    elif command -v shasum >/dev/null 2>&1; then
        digest="$(shasum -a 256 <"$1" | awk '{ print $1 }')"
    elif command -v openssl >/dev/null 2>&1; then
        digest="$(openssl dgst -sha256 <"$1" | awk '{ print $NF }')"
    else
        die "no SHA-256 tool found (sha256sum, shasum or openssl): cannot verify the download, so nothing was installed"
    fi
    printf '%s\n' "$digest" | tr 'A-F' 'a-f'
}

# The checksum SHA256SUMS (lines `<hex>  <name>`, or `<hex> *<name>`) holds for NAME:
# empty when there is none, "conflicting" when two lines disagree.
expected_sha256() {
    tr -d '\r' <"$1" | awk -v name="$2" '
        $2 == name || $2 == "*" name {
            sum = tolower($1)
            if (found == "") found = sum; else if (found != sum) bad = 1
        }
        END { if (bad) print "conflicting"; else print found }'
}

# SIGNATURE.sig must be a signature of SUMS by the pinned release key (the file format is
# build/release_key.py's). Dies with one line naming what is wrong; returns only when it holds.
verify_signature() {
    sums="$1" signature="$2" scratch="$3"
    fields="$(tr -d '\r' <"$signature" | awk '
        NR == 1 && $0 != "tracebloc-installer-signature: 1" { bad = 1 }
        /^key: / { keys++; key = substr($0, 6) }
        /^signature: / { sigs++; sig = substr($0, 12) }
        END { if (bad || keys != 1 || sigs != 1) print "malformed"; else print key " " sig }')"
    case "$fields" in
        malformed | "" | *" ") die "SHA256SUMS.sig is not a tracebloc-installer signature file: refusing to trust SHA256SUMS; nothing was installed" ;;
    esac
    key_id="${fields%% *}"
    if [ "$key_id" != "$RELEASE_KEY_ID" ]; then
        die "SHA256SUMS is signed by another key ($key_id), not the tracebloc-installer release key ($RELEASE_KEY_ID): refusing; nothing was installed"
    fi
    if ! printf '%s' "${fields#* }" | openssl base64 -d -A >"$scratch/SHA256SUMS.sig.bin"; then
        die "bad signature: the signature in SHA256SUMS.sig is not base64: refusing; nothing was installed"
    fi
    printf '%s\n' "$RELEASE_KEY_PEM" >"$scratch/release-key.pem"
    if ! openssl dgst -sha256 -verify "$scratch/release-key.pem" -signature "$scratch/SHA256SUMS.sig.bin" "$sums" >"$scratch/verify.out" 2>&1; then
        die "bad signature: SHA256SUMS does not match SHA256SUMS.sig from the release key (altered after signing, or a damaged download): nothing was installed"
    fi
}

# When SHA256SUMS's signature is checked: 1 skips it (loudly), anything else is refused so a
# typo never turns the check off.
signature_mode() {
    case "${TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE:-}" in
        "" | 0) echo verify ;;
        1) echo skip ;;
        *) die "TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE='$TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE': set it to 1 to skip the signature check, or leave it unset" ;;
    esac
}

# A file copied from a browser's download keeps macOS's quarantine attribute, and Gatekeeper
# then blocks the ad-hoc-signed binary. Cleared only after the checksum (and signature) held.
clear_quarantine() {
    command -v xattr >/dev/null 2>&1 || return 0
    xattr -p com.apple.quarantine "$1" >/dev/null 2>&1 || return 0
    xattr -d com.apple.quarantine "$1" || say "warning: could not clear the quarantine attribute of $1; macOS may block it: run xattr -d com.apple.quarantine on the installed file"
}

main() {
    version="${TRACEBLOC_INSTALLER_VERSION:-latest}"
    [ "$version" = latest ] || version="${version#v}"
    case "$version" in
        "" | *[!0-9A-Za-z.+-]*) die "TRACEBLOC_INSTALLER_VERSION='$TRACEBLOC_INSTALLER_VERSION' is not a version (e.g. 1.2.0)" ;;
    esac
    install_dir="${TRACEBLOC_INSTALLER_INSTALL_DIR:-${HOME:?HOME is not set}/.local/bin}"
    install_dir="${install_dir%/}"
    [ -n "$install_dir" ] || install_dir=/

    # Where the release's files are: GitHub's own layout, or a mirror (URL or directory)
    # holding them flat, with one v<VERSION>/ subdirectory per pinned release.
    mirror="${TRACEBLOC_INSTALLER_DOWNLOAD_URL:-}"
    mirror="${mirror%/}"
    case "$mirror" in
        file://*%*) die "TRACEBLOC_INSTALLER_DOWNLOAD_URL: give the directory as a plain path, not a file:// URL with %-escapes: $mirror" ;;
        file://*) mirror="${mirror#file://}" ;;
    esac
    case "$mirror" in
        "") origin="" ;;
        https://*) origin="$mirror" ;;
        http://*)
            is_loopback_http "$mirror/" || die "TRACEBLOC_INSTALLER_DOWNLOAD_URL must be an https:// URL (plain http:// only for 127.0.0.1, localhost or [::1]) or a local directory: $mirror"
            origin="$mirror"
            ;;
        *://*) die "TRACEBLOC_INSTALLER_DOWNLOAD_URL must be an https:// URL or a local directory: $mirror" ;;
        *)
            [ -d "$mirror" ] || die "TRACEBLOC_INSTALLER_DOWNLOAD_URL: no such directory: $mirror"
            origin="$mirror"
            ;;
    esac
    if [ -z "$origin" ]; then
        if [ "$version" = latest ]; then
            origin="$RELEASES/latest/download"
        else
            origin="$RELEASES/download/v$version"
        fi
    elif [ "$version" != latest ]; then
        origin="$origin/v$version"
    fi
    if [ "$version" = latest ]; then shown="(latest release)"; else shown="v$version"; fi

    signatures="$(signature_mode)" || exit 1
    if [ "$signatures" = skip ]; then
        say "warning: TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE=1: SHA256SUMS's signature is NOT checked, so this install is only as trustworthy as $origin"
    elif [ -z "$RELEASE_KEY_PEM" ] || [ -z "$RELEASE_KEY_ID" ]; then
        die "this install.sh has no release key pinned, so it cannot verify any release: use the install.sh published with a release"
    elif ! command -v openssl >/dev/null 2>&1; then
        die "openssl is needed to verify the release's signature and is not installed: install it (e.g. apt-get install openssl, dnf install openssl) and run this again"
    fi

    os="$(detect_os)" || exit 1
    arch="$(detect_arch "$os")" || exit 1
    asset="tracebloc-installer-$os-$arch"
    target="$install_dir/tracebloc-installer"

    mkdir -p "$install_dir" || die "cannot create $install_dir"
    # Everything lands in a scratch directory inside the install directory first, so the
    # final step is a rename on one filesystem: the target is replaced whole or not at all.
    work="$(mktemp -d "$install_dir/.tracebloc-installer.XXXXXX")" || die "cannot write to $install_dir"
    trap 'rm -rf "$work"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    say "downloading $asset $shown from $origin"
    download "$origin" "$asset" "$work/$asset" || die "no build for $os-$arch $shown at $origin"
    download "$origin" SHA256SUMS "$work/SHA256SUMS" || die "the release $shown has no SHA256SUMS at $origin: refusing to install an unverified binary"
    if [ "$signatures" = verify ]; then
        download "$origin" SHA256SUMS.sig "$work/SHA256SUMS.sig" || die "the release $shown has no SHA256SUMS.sig at $origin: refusing to trust an unsigned SHA256SUMS; nothing was installed"
        verify_signature "$work/SHA256SUMS" "$work/SHA256SUMS.sig" "$work"
    fi

    expected="$(expected_sha256 "$work/SHA256SUMS" "$asset")"
    case "$expected" in
        "") die "SHA256SUMS has no entry for $asset: refusing to install an unverified binary" ;;
        conflicting) die "SHA256SUMS has different entries for $asset: refusing to guess" ;;
        *[!0-9a-f]*) die "SHA256SUMS holds no SHA-256 for $asset ('$expected')" ;;
    esac
    [ "${#expected}" -eq 64 ] || die "SHA256SUMS holds no SHA-256 for $asset ('$expected')"
    actual="$(sha256_of "$work/$asset")" || exit 1
    if [ "$actual" != "$expected" ]; then
        die "checksum mismatch for $asset (SHA256SUMS says $expected, the download is $actual): nothing was installed"
    fi

    if [ "$os" = darwin ]; then
        clear_quarantine "$work/$asset"
    fi
    chmod 755 "$work/$asset"
    mv -f "$work/$asset" "$target" || die "cannot replace $target"
    rm -rf "$work"
    trap - EXIT
    if [ "$signatures" = verify ]; then
        say "installed $target ($shown, signature and SHA-256 verified)"
    else
        say "installed $target ($shown, SHA-256 verified, signature NOT checked)"
    fi

    case ":${PATH:-}:" in
        *":$install_dir:"*) ;;
        *) say "note: $install_dir is not on your PATH; add it to run tracebloc-installer by name" ;;
    esac

    case "${TRACEBLOC_INSTALLER_NO_RUN:-}" in
        "" | 0 | false | no) ;;
        *)
            say "not running it (TRACEBLOC_INSTALLER_NO_RUN); start it with: $target"
            exit 0
            ;;
    esac
    # Under `curl | sh` stdin is the pipe that carried this script: give the installer the
    # user's terminal instead, so its questions can be answered. Any other stdin (a file,
    # /dev/null in CI) was chosen by the caller and stays.
    if [ -p /dev/stdin ] && (: </dev/tty) 2>/dev/null; then
        exec "$target" "$@" </dev/tty
    fi
    exec "$target" "$@"
}

main "$@"
