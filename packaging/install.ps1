# Download tracebloc-installer for Windows, verify it, install it, run it.
# Windows PowerShell 5.1 and PowerShell 7.
#
#   irm https://github.com/tracebloc/tracebloc-installer/releases/latest/download/install.ps1 | iex
#   & ([scriptblock]::Create((irm <same URL>))) --yes            # with arguments for the installer
#   powershell -ExecutionPolicy Bypass -File install.ps1 --yes   # a downloaded copy
#
# Settings (environment), all optional, the same as install.sh:
#   TRACEBLOC_INSTALLER_VERSION       a release to pin, e.g. 1.2.0 (default: the latest release)
#   TRACEBLOC_INSTALLER_INSTALL_DIR   where the binary goes (default: %LOCALAPPDATA%\Programs\tracebloc)
#   TRACEBLOC_INSTALLER_DOWNLOAD_URL  a mirror: an https:// URL or a local directory holding the
#                                     release files; with a pinned version they are read from
#                                     its v<VERSION>\ subdirectory
#   TRACEBLOC_INSTALLER_NO_RUN        1: install only, do not run it
#   TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE
#                                     1: do not check SHA256SUMS's signature (a warning
#                                     every time; the SHA-256 is still checked)
#   HTTPS_PROXY, NO_PROXY             a proxy for the downloads (http://[user:password@]host:port)
#                                     and the hosts reached without it
#
# The binary runs only if its SHA-256 (Get-FileHash) matches its line in the release's
# SHA256SUMS, and SHA256SUMS is trusted only if SHA256SUMS.sig is a signature by the release
# key pinned below, checked by .NET's own RSA (no tool to download). Plain http:// is
# accepted for a loopback address only.
# Everything happens inside one script block, invoked on its last line: a download cut short
# runs nothing, and under `irm | iex` no function or variable is left in the user's session.
# Failures are thrown, never `exit`ed: under `irm | iex` an exit would close the user's
# PowerShell window. Only a copy run from a file (-File) exits, with the installer's code.

& {
    param([object[]]$Forwarded)

    # The public half of the key that signs every release's SHA256SUMS (packaging/release-key.pem):
    # its key id, and its RSA modulus and exponent in base64.
    # BEGIN RELEASE KEY (written by build/release_key.py pin; empty: none pinned yet)
    $releaseKeyId = ''
    $releaseKeyModulus = ''
    $releaseKeyExponent = ''
    # END RELEASE KEY

    function Install-TraceblocInstaller {
        [CmdletBinding()]
        param([string[]]$Arguments = @())

        $ErrorActionPreference = 'Stop'
        $ProgressPreference = 'SilentlyContinue'  # the progress bar makes Invoke-WebRequest slow on 5.1

        $releases = 'https://github.com/tracebloc/tracebloc-installer/releases'

        $version = if ($env:TRACEBLOC_INSTALLER_VERSION) { $env:TRACEBLOC_INSTALLER_VERSION } else { 'latest' }
        if ($version -ne 'latest') { $version = $version -replace '^v', '' }
        if ($version -notmatch '^[0-9A-Za-z.+-]+$') {
            throw "tracebloc-installer: TRACEBLOC_INSTALLER_VERSION='$env:TRACEBLOC_INSTALLER_VERSION' is not a version (e.g. 1.2.0)"
        }
        $shown = if ($version -eq 'latest') { '(latest release)' } else { "v$version" }

        # 1 skips the signature check (loudly); anything else but unset or 0 is refused, so a
        # typo never turns the check off.
        $skip = $env:TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE
        if ($skip -and $skip -notin @('0', '1')) {
            throw "tracebloc-installer: TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE='$skip': set it to 1 to skip the signature check, or leave it unset"
        }
        $verifySignature = $skip -ne '1'
        if ($verifySignature -and -not ($releaseKeyId -and $releaseKeyModulus -and $releaseKeyExponent)) {
            throw 'tracebloc-installer: this install.ps1 has no release key pinned, so it cannot verify any release: use the install.ps1 published with a release'
        }

        $installDir = if ($env:TRACEBLOC_INSTALLER_INSTALL_DIR) {
            $env:TRACEBLOC_INSTALLER_INSTALL_DIR
        } else {
            Join-Path $env:LOCALAPPDATA 'Programs\tracebloc'
        }

        # Where the release's files are: GitHub's own layout, or a mirror (URL or directory)
        # holding them flat, with one v<VERSION> subdirectory per pinned release.
        $origin = Resolve-TraceblocOrigin -Mirror $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL
        if (-not $origin) {
            $origin = if ($version -eq 'latest') { "$releases/latest/download" } else { "$releases/download/v$version" }
        } elseif ($version -ne 'latest') {
            $origin = "$origin/v$version"
        }

        # Windows PowerShell 5.1 may offer only TLS 1.0/1.1, which GitHub refuses.
        if ($PSVersionTable.PSVersion.Major -lt 6) {
            [Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12
        }
        if (-not $verifySignature) {
            Write-Warning "tracebloc-installer: TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE=1: SHA256SUMS's signature is NOT checked, so this install is only as trustworthy as $origin"
        }
        $proxy = Get-TraceblocProxy -Origin $origin

        # Windows 11 on Arm runs x64 programs: without an arm64 build, the x86_64 one will do.
        $arches = @(Get-TraceblocArch)
        if ($arches[0] -eq 'arm64') { $arches += 'x86_64' }

        New-Item -ItemType Directory -Force -Path $installDir | Out-Null
        $target = Join-Path $installDir 'tracebloc-installer.exe'
        # Leftovers of an earlier update whose old binary was still running then.
        Get-ChildItem -LiteralPath $installDir -Filter 'tracebloc-installer.exe.old-*' -ErrorAction SilentlyContinue |
            Remove-Item -Force -ErrorAction SilentlyContinue

        # Everything lands beside the target first, so the final step is a rename on one volume.
        $partial = Join-Path $installDir (".tracebloc-installer-" + [Guid]::NewGuid().ToString('N') + '.partial')
        $sums = "$partial.SHA256SUMS"
        $signature = "$partial.SHA256SUMS.sig"
        try {
            $asset = $null
            foreach ($arch in $arches) {
                $candidate = "tracebloc-installer-windows-$arch.exe"
                Write-Host "tracebloc-installer: downloading $candidate $shown from $origin"
                if (Get-TraceblocFile -Origin $origin -Name $candidate -OutFile $partial -Proxy $proxy) {
                    $asset = $candidate
                    break
                }
            }
            if (-not $asset) {
                throw "tracebloc-installer: no build for windows-$($arches[0]) $shown at $origin"
            }
            if (-not (Get-TraceblocFile -Origin $origin -Name 'SHA256SUMS' -OutFile $sums -Proxy $proxy)) {
                throw "tracebloc-installer: the release $shown has no SHA256SUMS at $origin: refusing to install an unverified binary"
            }
            if ($verifySignature) {
                if (-not (Get-TraceblocFile -Origin $origin -Name 'SHA256SUMS.sig' -OutFile $signature -Proxy $proxy)) {
                    throw "tracebloc-installer: the release $shown has no SHA256SUMS.sig at ${origin}: refusing to trust an unsigned SHA256SUMS; nothing was installed"
                }
                Assert-TraceblocSignature -SumsFile $sums -SignatureFile $signature -KeyId $releaseKeyId `
                    -Modulus $releaseKeyModulus -Exponent $releaseKeyExponent
            }

            $expected = Get-TraceblocExpectedHash -SumsFile $sums -Name $asset
            # Get-FileHash failing throws (ErrorActionPreference Stop): never a reason to skip the check.
            $actual = (Get-FileHash -LiteralPath $partial -Algorithm SHA256).Hash.ToLowerInvariant()
            if ($actual -ne $expected) {
                throw "tracebloc-installer: checksum mismatch for $asset (SHA256SUMS says $expected, the download is $actual): nothing was installed"
            }

            # A running .exe cannot be overwritten but can be renamed: move it aside first, and
            # back if the new one cannot take its place.
            $old = $null
            if (Test-Path -LiteralPath $target) {
                $old = "$target.old-" + [Guid]::NewGuid().ToString('N')
                Move-Item -LiteralPath $target -Destination $old -Force
            }
            try {
                Move-Item -LiteralPath $partial -Destination $target -Force
            } catch {
                if ($old) { Move-Item -LiteralPath $old -Destination $target -Force }
                throw
            }
            if ($old) { Remove-Item -LiteralPath $old -Force -ErrorAction SilentlyContinue }
        } finally {
            Remove-Item -LiteralPath $partial, $sums, $signature -Force -ErrorAction SilentlyContinue
        }
        $checked = if ($verifySignature) { 'signature and SHA-256 verified' } else { 'SHA-256 verified, signature NOT checked' }
        Write-Host "tracebloc-installer: installed $target ($shown, $checked)"

        $onPath = (($env:Path -split ';') -contains $installDir) -or
            (([Environment]::GetEnvironmentVariable('Path', 'User') -split ';') -contains $installDir)
        if (-not $onPath) {
            Write-Host "tracebloc-installer: note: $installDir is not on your PATH; add it to run tracebloc-installer by name"
        }

        if ($env:TRACEBLOC_INSTALLER_NO_RUN -and $env:TRACEBLOC_INSTALLER_NO_RUN -notin @('0', 'false', 'no')) {
            Write-Host "tracebloc-installer: not running it (TRACEBLOC_INSTALLER_NO_RUN); start it with: & '$target'"
            $global:LASTEXITCODE = 0
            return
        }
        # The installer shares this console: its questions are answered here, and it does not
        # wait for Enter at the end (only a double-clicked window of its own does).
        & $target @Arguments
    }

    # The mirror as a base URL or a local directory; $null for GitHub's own releases.
    function Resolve-TraceblocOrigin([string]$Mirror) {
        if (-not $Mirror) { return $null }
        $Mirror = $Mirror.TrimEnd('/', '\')
        if ($Mirror -like 'file://*') { $Mirror = ([Uri]$Mirror).LocalPath }
        if ($Mirror -notmatch '^[A-Za-z][A-Za-z0-9+.-]*://') {
            if (-not (Test-Path -LiteralPath $Mirror -PathType Container)) {
                throw "tracebloc-installer: TRACEBLOC_INSTALLER_DOWNLOAD_URL: no such directory: $Mirror"
            }
            return $Mirror
        }
        $uri = [Uri]$Mirror
        if ($uri.Scheme -eq 'https' -or ($uri.Scheme -eq 'http' -and $uri.IsLoopback -and -not $uri.UserInfo)) {
            return $Mirror
        }
        throw "tracebloc-installer: TRACEBLOC_INSTALLER_DOWNLOAD_URL must be an https:// URL (plain http:// only for 127.0.0.1, localhost or [::1]) or a local directory: $Mirror"
    }

    function Get-TraceblocArch {
        $os = $null
        try {
            # Right even for an x64 PowerShell emulated on Windows on Arm (.NET 4.7.1+ and 5+).
            $os = [string][Runtime.InteropServices.RuntimeInformation]::OSArchitecture
        } catch {
            $os = $null
        }
        # A 32-bit PowerShell on 64-bit Windows reports x86 and the truth in PROCESSOR_ARCHITEW6432.
        $cpu = if ($os) { $os } elseif ($env:PROCESSOR_ARCHITEW6432) { $env:PROCESSOR_ARCHITEW6432 } else { $env:PROCESSOR_ARCHITECTURE }
        switch ($cpu) {
            { $_ -in @('X64', 'AMD64') } { return 'x86_64' }
            'Arm64' { return 'arm64' }
            default { throw "tracebloc-installer: unsupported processor architecture '$cpu': builds exist for x86_64 and arm64" }
        }
    }

    # Invoke-WebRequest parameters for HTTPS_PROXY (Windows PowerShell 5.1 ignores the variable;
    # PowerShell 7 reads it too, but credentials in the URL need passing either way). An
    # explicit -Proxy is used for every URL, so NO_PROXY is applied here: none for a local
    # directory or a host NO_PROXY names.
    function Get-TraceblocProxy([string]$Origin) {
        $url = if ($env:HTTPS_PROXY) { $env:HTTPS_PROXY } elseif ($env:https_proxy) { $env:https_proxy } else { $null }
        if (-not $url -or $Origin -notmatch '^https?://') { return @{} }
        $noProxy = if ($env:NO_PROXY) { $env:NO_PROXY } elseif ($env:no_proxy) { $env:no_proxy } else { '' }
        if (Test-TraceblocNoProxy -Uri ([Uri]$Origin) -NoProxy $noProxy) { return @{} }
        if ($url -notmatch '^[A-Za-z][A-Za-z0-9+.-]*://') { $url = "http://$url" }
        $uri = [Uri]$url
        $params = @{ Proxy = [Uri]("{0}://{1}:{2}" -f $uri.Scheme, $uri.Host, $uri.Port) }
        if ($uri.UserInfo) {
            $user, $password = $uri.UserInfo -split ':', 2
            $secure = ConvertTo-SecureString ([Uri]::UnescapeDataString([string]$password)) -AsPlainText -Force
            $params.ProxyCredential = New-Object Management.Automation.PSCredential ([Uri]::UnescapeDataString($user), $secure)
        } else {
            $params.ProxyUseDefaultCredentials = $true
        }
        return $params
    }

    # NO_PROXY as curl reads it: comma-separated entries; `*` is every host; an entry matches
    # its host and every subdomain (a leading dot or `*.` changes nothing); `host:port` only
    # that port. IP addresses match exactly (no CIDR ranges).
    function Test-TraceblocNoProxy([Uri]$Uri, [string]$NoProxy) {
        $hostName = $Uri.Host.Trim('[', ']').ToLowerInvariant()
        foreach ($raw in ($NoProxy -split ',')) {
            $entry = $raw.Trim().ToLowerInvariant()
            if (-not $entry) { continue }
            if ($entry -eq '*') { return $true }
            $port = $null
            if ($entry -match '^(.*[^:]):(\d+)$' -and $entry -notmatch '^[0-9a-f:]*:[0-9a-f:]*:') {
                $entry, $port = $Matches[1], [int]$Matches[2]
            }
            if ($null -ne $port -and $port -ne $Uri.Port) { continue }
            $entry = $entry.Trim('[', ']') -replace '^\*?\.', ''
            if ($hostName -eq $entry -or $hostName.EndsWith(".$entry")) { return $true }
        }
        return $false
    }

    # SHA256SUMS.sig (build/release_key.py's format: a header line, `key: <id>`,
    # `signature: <base64>`) must be an RSA PKCS#1 v1.5 / SHA-256 signature of SHA256SUMS by
    # the pinned key. Throws one line naming what is wrong; returns only when it holds.
    function Assert-TraceblocSignature([string]$SumsFile, [string]$SignatureFile, [string]$KeyId,
                                       [string]$Modulus, [string]$Exponent) {
        $lines = @(Get-Content -LiteralPath $SignatureFile)
        $keys = @($lines | Where-Object { $_ -match '^key: ' } | ForEach-Object { $_.Substring(5).Trim() })
        $sigs = @($lines | Where-Object { $_ -match '^signature: ' } | ForEach-Object { $_.Substring(11).Trim() })
        if ($lines.Count -eq 0 -or $lines[0].Trim() -ne 'tracebloc-installer-signature: 1' -or
            $keys.Count -ne 1 -or $sigs.Count -ne 1 -or -not $keys[0] -or -not $sigs[0]) {
            throw 'tracebloc-installer: SHA256SUMS.sig is not a tracebloc-installer signature file: refusing to trust SHA256SUMS; nothing was installed'
        }
        if ($keys[0] -cne $KeyId) {
            throw "tracebloc-installer: SHA256SUMS is signed by another key ($($keys[0])), not the tracebloc-installer release key (${KeyId}): refusing; nothing was installed"
        }
        try {
            $signatureBytes = [Convert]::FromBase64String($sigs[0])
        } catch {
            throw 'tracebloc-installer: bad signature: the signature in SHA256SUMS.sig is not base64: refusing; nothing was installed'
        }
        $parameters = New-Object Security.Cryptography.RSAParameters
        $parameters.Modulus = [Convert]::FromBase64String($Modulus)
        $parameters.Exponent = [Convert]::FromBase64String($Exponent)
        $rsa = [Security.Cryptography.RSA]::Create()
        try {
            $rsa.ImportParameters($parameters)
            $valid = $rsa.VerifyData([IO.File]::ReadAllBytes($SumsFile), $signatureBytes,
                [Security.Cryptography.HashAlgorithmName]::SHA256, [Security.Cryptography.RSASignaturePadding]::Pkcs1)
        } catch {
            # A signature of the wrong length makes some .NET versions throw instead of answering false.
            $valid = $false
        } finally {
            $rsa.Dispose()
        }
        if (-not $valid) {
            throw 'tracebloc-installer: bad signature: SHA256SUMS does not match SHA256SUMS.sig from the release key (altered after signing, or a damaged download): nothing was installed'
        }
    }

    # Copy Origin/Name to OutFile: $true, or $false when it does not exist there (HTTP 404 or
    # absent from a local directory). Other failures are retried, then thrown.
    function Get-TraceblocFile([string]$Origin, [string]$Name, [string]$OutFile, [hashtable]$Proxy) {
        if ($Origin -notmatch '^https?://') {
            $path = Join-Path $Origin $Name
            if (-not (Test-Path -LiteralPath $path -PathType Leaf)) { return $false }
            Copy-Item -LiteralPath $path -Destination $OutFile -Force
            return $true
        }
        $url = "$Origin/$Name"
        for ($attempt = 1; ; $attempt++) {
            try {
                Invoke-WebRequest -UseBasicParsing -Uri $url -OutFile $OutFile -TimeoutSec 300 @Proxy
                return $true
            } catch {
                $response = $_.Exception.Response
                if ($response -and [int]$response.StatusCode -eq 404) { return $false }
                if ($attempt -ge 3) {
                    throw "tracebloc-installer: download failed: $url ($($_.Exception.Message))"
                }
                Start-Sleep -Seconds (2 * $attempt)
            }
        }
    }

    # The lower-case SHA-256 that SHA256SUMS (`<hex>  <name>` or `<hex> *<name>` lines) holds for
    # Name; a missing, conflicting or malformed entry is a refusal.
    function Get-TraceblocExpectedHash([string]$SumsFile, [string]$Name) {
        $found = @(
            Get-Content -LiteralPath $SumsFile | ForEach-Object {
                $parts = $_.Trim() -split '\s+', 2
                if ($parts.Count -eq 2 -and $parts[1].TrimStart('*') -ceq $Name) { $parts[0].ToLowerInvariant() }
            } | Select-Object -Unique
        )
        if ($found.Count -eq 0) {
            throw "tracebloc-installer: SHA256SUMS has no entry for ${Name}: refusing to install an unverified binary"
        }
        if ($found.Count -gt 1) {
            throw "tracebloc-installer: SHA256SUMS has different entries for ${Name}: refusing to guess"
        }
        if ($found[0] -notmatch '^[0-9a-f]{64}$') {
            throw "tracebloc-installer: SHA256SUMS holds no SHA-256 for $Name ('$($found[0])')"
        }
        return $found[0]
    }

    Install-TraceblocInstaller -Arguments $Forwarded
    # Exit only when this text came from a file (`-File install.ps1`, `& .\install.ps1`): there
    # exit ends the script with the installer's code. From `irm | iex` or a script block the
    # function has no file, and an exit would close the user's window.
    if (${function:Install-TraceblocInstaller}.File) { exit $LASTEXITCODE }
} -Forwarded $args
