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
#   HTTPS_PROXY                       a proxy for the downloads (http://[user:password@]host:port)
#
# The binary runs only if its SHA-256 (Get-FileHash) matches its line in the release's
# SHA256SUMS. Plain http:// is accepted for a loopback address only.
# Everything happens inside functions called on the last lines: a download cut short runs
# nothing. Failures are thrown, never `exit`ed: under `irm | iex` an exit would close the
# user's PowerShell window. Only a copy run from a file (-File) exits, with the installer's code.

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
    $proxy = Get-TraceblocProxy

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
        Remove-Item -LiteralPath $partial, $sums -Force -ErrorAction SilentlyContinue
    }
    Write-Host "tracebloc-installer: installed $target ($shown, SHA-256 verified)"

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
# PowerShell 7 reads it too, but credentials in the URL need passing either way).
function Get-TraceblocProxy {
    $url = if ($env:HTTPS_PROXY) { $env:HTTPS_PROXY } elseif ($env:https_proxy) { $env:https_proxy } else { $null }
    if (-not $url) { return @{} }
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

Install-TraceblocInstaller -Arguments $args
# Exit only when this text came from a file (`-File install.ps1`, `& .\install.ps1`): there
# exit ends the script with the installer's code. From `irm | iex` or a script block the
# function has no file, and an exit would close the user's window.
if (${function:Install-TraceblocInstaller}.File) { exit $LASTEXITCODE }
