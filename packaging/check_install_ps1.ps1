# Run install.ps1 for real on Windows against a freshly built binary: the CI workflow calls
# this under both Windows PowerShell 5.1 and PowerShell 7, on every push.
#
#   powershell -NoProfile -ExecutionPolicy Bypass -File packaging/check_install_ps1.ps1 -Dist dist -Version 0.1.0
#
# -Dist holds tracebloc-installer-windows-<arch>.exe and SHA256SUMS (build/freeze.py's output).
# Mirrors are local directories and a loopback HTTP server (python -m http.server), so no
# release needs to exist. The last line is "check_install_ps1: N passed, M failed"; the
# workflow requires it, so a script that silently killed this shell (an `exit` under iex)
# cannot pass.
param(
    [Parameter(Mandatory = $true)][string]$Dist,
    [Parameter(Mandatory = $true)][string]$Version
)

$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
$installPs1 = Join-Path $PSScriptRoot 'install.ps1'
$scriptText = Get-Content -LiteralPath $installPs1 -Raw
$Dist = (Resolve-Path -LiteralPath $Dist).Path
$binary = Get-ChildItem -LiteralPath $Dist -Filter 'tracebloc-installer-windows-*.exe' | Select-Object -First 1
if (-not $binary) { throw "no tracebloc-installer-windows-*.exe in $Dist" }
$asset = $binary.Name
$goodHash = (Get-FileHash -LiteralPath $binary.FullName -Algorithm SHA256).Hash
$work = Join-Path ([IO.Path]::GetTempPath()) ('tb-ps1-' + [Guid]::NewGuid().ToString('N'))
New-Item -ItemType Directory -Path $work | Out-Null
$script:passed = 0
$script:failed = 0
$script:caseNumber = 0

function Clear-Knobs {
    foreach ($name in 'TRACEBLOC_INSTALLER_VERSION', 'TRACEBLOC_INSTALLER_INSTALL_DIR',
                      'TRACEBLOC_INSTALLER_DOWNLOAD_URL', 'TRACEBLOC_INSTALLER_NO_RUN') {
        Remove-Item -LiteralPath "Env:$name" -ErrorAction SilentlyContinue
    }
}

# A fresh install directory per case, set as TRACEBLOC_INSTALLER_INSTALL_DIR.
function New-InstallDir {
    $script:caseNumber++
    $dir = Join-Path $work "install-$script:caseNumber"
    $env:TRACEBLOC_INSTALLER_INSTALL_DIR = $dir
    return $dir
}

# A copy of the release in a directory of its own; $Sums replaces its SHA256SUMS text.
function New-Mirror([string]$Name, [string]$Sums, [switch]$NoSums, [switch]$Tamper, [string]$Under = '') {
    $root = Join-Path $work "mirror-$Name"
    $dir = if ($Under) { Join-Path $root $Under } else { $root }
    New-Item -ItemType Directory -Force -Path $dir | Out-Null
    Copy-Item -LiteralPath $binary.FullName -Destination (Join-Path $dir $asset)
    Copy-Item -LiteralPath (Join-Path $Dist 'SHA256SUMS') -Destination (Join-Path $dir 'SHA256SUMS')
    if ($NoSums) {
        Remove-Item -LiteralPath (Join-Path $dir 'SHA256SUMS')
    } elseif ($PSBoundParameters.ContainsKey('Sums')) {
        [IO.File]::WriteAllText((Join-Path $dir 'SHA256SUMS'), $Sums)
    }
    if ($Tamper) {
        $stream = [IO.File]::Open((Join-Path $dir $asset), 'Append', 'Write')
        $stream.WriteByte(0)
        $stream.Close()
    }
    return $root
}

# The `irm | iex` form: the script text evaluated in this session, no arguments.
function Install-ViaIex {
    $scriptText | Invoke-Expression
}

function Assert-Throws([scriptblock]$Action, [string]$Pattern) {
    $message = $null
    try { & $Action } catch { $message = "$_" }
    if ($null -eq $message) { throw "expected an error matching '$Pattern', got none" }
    if ($message -notmatch $Pattern) { throw "expected an error matching '$Pattern', got: $message" }
}

function Assert-Installed([string]$Dir) {
    $target = Join-Path $Dir 'tracebloc-installer.exe'
    if (-not (Test-Path -LiteralPath $target)) { throw "nothing at $target" }
    $hash = (Get-FileHash -LiteralPath $target -Algorithm SHA256).Hash
    if ($hash -ne $goodHash) { throw "$target is not the release binary" }
    $extra = @(Get-ChildItem -LiteralPath $Dir -Force | Where-Object { $_.Name -ne 'tracebloc-installer.exe' })
    if ($extra.Count) { throw "left behind in ${Dir}: $($extra.Name -join ', ')" }
}

function Assert-NothingInstalled([string]$Dir) {
    $left = @(Get-ChildItem -LiteralPath $Dir -Force -ErrorAction SilentlyContinue)
    if ($left.Count) { throw "left behind in ${Dir}: $($left.Name -join ', ')" }
}

function Invoke-Case([string]$Name, [scriptblock]$Body) {
    Clear-Knobs
    try {
        & $Body
        $script:passed++
        Write-Host "ok    $Name"
    } catch {
        $script:failed++
        Write-Host "FAIL  ${Name}: $_"
    } finally {
        Clear-Knobs
    }
}

$good = New-Mirror 'good'

Invoke-Case 'irm | iex from an offline directory installs the verified binary' {
    $dir = New-InstallDir
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = $good
    $env:TRACEBLOC_INSTALLER_NO_RUN = '1'
    Install-ViaIex
    Assert-Installed $dir
}

Invoke-Case 'a script block passes its arguments to the installed binary' {
    New-InstallDir | Out-Null
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = $good
    $out = & ([scriptblock]::Create($scriptText)) --version
    if (($out -join "`n").Trim() -ne "tracebloc-installer $Version") { throw "--version printed '$out'" }
    if ($LASTEXITCODE -ne 0) { throw "exit code $LASTEXITCODE" }
}

Invoke-Case 'an upgrade replaces the previous binary' {
    $dir = New-InstallDir
    New-Item -ItemType Directory -Path $dir | Out-Null
    Set-Content -LiteralPath (Join-Path $dir 'tracebloc-installer.exe') -Value 'previous'
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = $good
    $env:TRACEBLOC_INSTALLER_NO_RUN = '1'
    Install-ViaIex
    Assert-Installed $dir
}

Invoke-Case 'a tampered binary is refused and the previous one kept' {
    $dir = New-InstallDir
    New-Item -ItemType Directory -Path $dir | Out-Null
    $target = Join-Path $dir 'tracebloc-installer.exe'
    Set-Content -LiteralPath $target -Value 'previous'
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = (New-Mirror 'tampered' -Tamper)
    Assert-Throws { Install-ViaIex } 'checksum mismatch'
    if ((Get-Content -LiteralPath $target -Raw).Trim() -ne 'previous') { throw 'the previous binary was replaced' }
    $left = @(Get-ChildItem -LiteralPath $dir -Force | Where-Object { $_.Name -ne 'tracebloc-installer.exe' })
    if ($left.Count) { throw "left behind: $($left.Name -join ', ')" }
}

Invoke-Case 'a SHA256SUMS without an entry for the binary is refused' {
    $dir = New-InstallDir
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = (New-Mirror 'no-entry' -Sums ("{0}  tracebloc-installer-linux-x86_64`n" -f ('1' * 64)))
    Assert-Throws { Install-ViaIex } 'no entry for'
    Assert-NothingInstalled $dir
}

Invoke-Case 'a release without SHA256SUMS is refused' {
    $dir = New-InstallDir
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = (New-Mirror 'no-sums' -NoSums)
    Assert-Throws { Install-ViaIex } 'no SHA256SUMS'
    Assert-NothingInstalled $dir
}

Invoke-Case 'a version pin reads the v<version> directory' {
    $dir = New-InstallDir
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = (New-Mirror 'pinned' -Under 'v7.8.9')
    $env:TRACEBLOC_INSTALLER_VERSION = '7.8.9'
    $env:TRACEBLOC_INSTALLER_NO_RUN = '1'
    Install-ViaIex
    Assert-Installed $dir
}

Invoke-Case 'a missing build says "no build for", not a checksum error' {
    $dir = New-InstallDir
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = $good
    $env:TRACEBLOC_INSTALLER_VERSION = '9.9.9'
    Assert-Throws { Install-ViaIex } 'no build for windows-\w+ v9\.9\.9'
    Assert-NothingInstalled $dir
}

Invoke-Case 'plain http to another host is refused' {
    New-InstallDir | Out-Null
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = 'http://example.com/mirror'
    Assert-Throws { Install-ViaIex } 'must be an https:// URL'
}

Invoke-Case 'over loopback HTTP (Invoke-WebRequest), including a 404' {
    $listener = [Net.Sockets.TcpListener]::new([Net.IPAddress]::Loopback, 0)
    $listener.Start()
    $port = $listener.LocalEndpoint.Port
    $listener.Stop()
    $python = (Get-Command python -ErrorAction Stop).Source
    $server = Start-Process -FilePath $python -PassThru -WindowStyle Hidden -ArgumentList @(
        '-m', 'http.server', '--bind', '127.0.0.1', "$port", '--directory', "`"$good`"")
    try {
        $url = "http://127.0.0.1:$port"
        $deadline = (Get-Date).AddSeconds(30)
        while ($true) {
            try { Invoke-WebRequest -UseBasicParsing -Uri "$url/SHA256SUMS" | Out-Null; break } catch {
                if ((Get-Date) -gt $deadline) { throw "the test server did not start: $_" }
                Start-Sleep -Milliseconds 300
            }
        }
        $dir = New-InstallDir
        $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = $url
        $env:TRACEBLOC_INSTALLER_NO_RUN = '1'
        Install-ViaIex
        Assert-Installed $dir
        $dir = New-InstallDir
        $env:TRACEBLOC_INSTALLER_VERSION = '9.9.9'
        Assert-Throws { Install-ViaIex } 'no build for windows-\w+ v9\.9\.9'
        Assert-NothingInstalled $dir
    } finally {
        Stop-Process -Id $server.Id -Force -ErrorAction SilentlyContinue
    }
}

Invoke-Case 'run as a file it exits with the installer''s code' {
    New-InstallDir | Out-Null
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = $good
    # stderr stays on the console: redirected, Windows PowerShell 5.1 turns it into errors.
    $ErrorActionPreference = 'Continue'
    $shell = (Get-Process -Id $PID).Path
    & $shell -NoProfile -ExecutionPolicy Bypass -File $installPs1 probe --no-such-option | Out-Null
    if ($LASTEXITCODE -ne 2) { throw "exit code $LASTEXITCODE, not the installer's usage error 2" }
    $env:TRACEBLOC_INSTALLER_VERSION = '9.9.9'
    & $shell -NoProfile -ExecutionPolicy Bypass -File $installPs1 --version | Out-Null
    if ($LASTEXITCODE -eq 0) { throw 'a failed install exited 0' }
}

Remove-Item -LiteralPath $work -Recurse -Force -ErrorAction SilentlyContinue
Write-Host "check_install_ps1: $script:passed passed, $script:failed failed"
if ($script:failed -gt 0) { exit 1 }
exit 0
