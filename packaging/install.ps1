# Download, verify and run tracebloc-installer on Windows.
#
#   irm https://github.com/tracebloc/tracebloc-installer/releases/latest/download/install.ps1 | iex
#   & ([scriptblock]::Create((irm <same url>))) plan --json      # with arguments
#   powershell -ExecutionPolicy Bypass -File install.ps1 plan     # from a downloaded copy
#
# Settings (environment):
#   TRACEBLOC_INSTALLER_BASE_URL  where the release files live (default: the latest GitHub
#                                 release); file:// URLs work, for mirrors and tests
#   TRACEBLOC_INSTALL_DIR         where the binary goes (default: %LOCALAPPDATA%\Programs\tracebloc)
#
# Everything happens inside Invoke-TraceblocInstaller, called on the last lines: a download
# cut short never runs half a script. Nothing is installed unless the SHA-256 matches.
# Errors are thrown, never `exit`ed: under `irm | iex` an exit would close the user's window.

function Invoke-TraceblocInstaller {
    [CmdletBinding()]
    param([string[]]$ArgumentList)

    $ErrorActionPreference = 'Stop'
    $ProgressPreference = 'SilentlyContinue'  # the progress bar makes Invoke-WebRequest slow

    $defaultBase = 'https://github.com/tracebloc/tracebloc-installer/releases/latest/download'
    $base = if ($env:TRACEBLOC_INSTALLER_BASE_URL) { $env:TRACEBLOC_INSTALLER_BASE_URL } else { $defaultBase }
    $base = $base.TrimEnd('/')
    $installDir = if ($env:TRACEBLOC_INSTALL_DIR) {
        $env:TRACEBLOC_INSTALL_DIR
    } else {
        Join-Path $env:LOCALAPPDATA 'Programs\tracebloc'
    }

    # A 32-bit PowerShell on a 64-bit Windows reports x86 here and the truth in PROCESSOR_ARCHITEW6432.
    $cpu = if ($env:PROCESSOR_ARCHITEW6432) { $env:PROCESSOR_ARCHITEW6432 } else { $env:PROCESSOR_ARCHITECTURE }
    switch ($cpu) {
        'AMD64' { $arch = 'x86_64' }
        'ARM64' { $arch = 'arm64' }
        default { throw "tracebloc: unsupported processor '$cpu': builds exist for x86_64 and arm64" }
    }
    $asset = "tracebloc-installer-windows-$arch.exe"

    # Windows PowerShell 5.1 may default to TLS 1.0, which GitHub refuses.
    [Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12

    $tmp = Join-Path ([IO.Path]::GetTempPath()) ("tracebloc-" + [Guid]::NewGuid().ToString('N'))
    New-Item -ItemType Directory -Path $tmp | Out-Null
    try {
        $binary = Join-Path $tmp $asset
        $sumFile = "$binary.sha256"
        Write-Host "tracebloc: downloading $asset from $base"
        Get-TraceblocFile "$base/$asset" $binary
        Get-TraceblocFile "$base/$asset.sha256" $sumFile

        # The checksum file is `<hex>  <name>` (sha256sum's format) or just `<hex>`.
        $expected = ((Get-Content -LiteralPath $sumFile -TotalCount 1) -split '\s+')[0].ToLowerInvariant()
        if ($expected -notmatch '^[0-9a-f]{64}$') {
            throw "tracebloc: $asset.sha256 does not hold a SHA-256 checksum"
        }
        $actual = (Get-FileHash -LiteralPath $binary -Algorithm SHA256).Hash.ToLowerInvariant()
        if ($actual -ne $expected) {
            throw "tracebloc: checksum mismatch for $asset (expected $expected, got $actual): nothing was installed"
        }

        New-Item -ItemType Directory -Force -Path $installDir | Out-Null
        $target = Join-Path $installDir 'tracebloc-installer.exe'
        $partial = "$target.partial"
        Copy-Item -LiteralPath $binary -Destination $partial -Force
        Move-Item -LiteralPath $partial -Destination $target -Force
        Write-Host "tracebloc: installed $target"
    } finally {
        Remove-Item -LiteralPath $tmp -Recurse -Force -ErrorAction SilentlyContinue
    }

    $userPath = [Environment]::GetEnvironmentVariable('Path', 'User')
    if (-not (($env:Path -split ';') -contains $installDir) -and -not (($userPath -split ';') -contains $installDir)) {
        Write-Host "tracebloc: note: $installDir is not on your PATH; add it to run tracebloc-installer directly"
    }

    if (-not $ArgumentList -or $ArgumentList.Count -eq 0) { $ArgumentList = @('plan') }
    & $target @ArgumentList
}

function Get-TraceblocFile([string]$Url, [string]$OutFile) {
    if ($Url -like 'file://*') {
        Copy-Item -LiteralPath ([Uri]$Url).LocalPath -Destination $OutFile
    } else {
        Invoke-WebRequest -UseBasicParsing -Uri $Url -OutFile $OutFile
    }
}

Invoke-TraceblocInstaller -ArgumentList $args
# Run as a file (`-File install.ps1`), hand back the installer's exit code; under `iex` keep the window.
if ($MyInvocation.MyCommand.Path) { exit $LASTEXITCODE }
