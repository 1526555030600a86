# Run install.ps1 for real on Windows against a freshly built binary: the CI workflow calls
# this under both Windows PowerShell 5.1 and PowerShell 7, on every push.
#
#   powershell -NoProfile -ExecutionPolicy Bypass -File packaging/check_install_ps1.ps1 -Dist dist -Version 0.1.0
#
# -Dist holds tracebloc-installer-windows-<arch>.exe and SHA256SUMS (build/freeze.py's output).
# Mirrors are local directories and a loopback HTTP server (python -m http.server), so no
# release needs to exist. Two RSA keys made here stand in for the release key (pinned into a
# copy of install.ps1, as build/release_key.py pins the real one) and for someone else's. The last line is "check_install_ps1: N passed, M failed"; the
# workflow requires it, so a script that silently killed this shell (an `exit` under iex)
# cannot pass.
param(
    [Parameter(Mandatory = $true)][string]$Dist,
    [Parameter(Mandatory = $true)][string]$Version
)

$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
$scriptText = Get-Content -LiteralPath (Join-Path $PSScriptRoot 'install.ps1') -Raw
$Dist = (Resolve-Path -LiteralPath $Dist).Path
$binary = Get-ChildItem -LiteralPath $Dist -Filter 'tracebloc-installer-windows-*.exe' | Select-Object -First 1
if (-not $binary) { throw "no tracebloc-installer-windows-*.exe in $Dist" }
$asset = $binary.Name
$goodHash = (Get-FileHash -LiteralPath $binary.FullName -Algorithm SHA256).Hash
$work = Join-Path ([IO.Path]::GetTempPath()) ('tb-ps1-' + [Guid]::NewGuid().ToString('N'))
New-Item -ItemType Directory -Path $work | Out-Null

# A test key: the .NET RSA object and what install.ps1 pins (the id is only a label that the
# pinned copy and the signature file share; the real one is a SHA-256 of the public key).
function New-TestKey([string]$Label) {
    $rsa = New-Object Security.Cryptography.RSACryptoServiceProvider 2048
    $public = $rsa.ExportParameters($false)
    $sha = [Security.Cryptography.SHA256]::Create()
    $id = 'sha256:' + (($sha.ComputeHash($public.Modulus) | ForEach-Object { $_.ToString('x2') }) -join '')
    return @{ Rsa = $rsa; Id = $id; Label = $Label
              Modulus = [Convert]::ToBase64String($public.Modulus)
              Exponent = [Convert]::ToBase64String($public.Exponent) }
}
$releaseKey = New-TestKey 'release'
$otherKey = New-TestKey 'other'

# install.ps1 with the test release key pinned in its RELEASE KEY block.
foreach ($pair in @(@('releaseKeyId', $releaseKey.Id), @('releaseKeyModulus', $releaseKey.Modulus),
                    @('releaseKeyExponent', $releaseKey.Exponent))) {
    $pattern = "(?m)^(\s*)\`$$($pair[0]) = '[^']*'"
    if ($scriptText -notmatch $pattern) { throw "install.ps1 has no `$$($pair[0]) line to pin" }
    $scriptText = $scriptText -replace $pattern, ('$1$$' + $pair[0] + " = '" + $pair[1] + "'")
}
$installPs1 = Join-Path $work 'install.ps1'
[IO.File]::WriteAllText($installPs1, $scriptText, [Text.Encoding]::ASCII)

function Write-Signature([string]$Dir, $Key) {
    $bytes = [IO.File]::ReadAllBytes((Join-Path $Dir 'SHA256SUMS'))
    $signature = $Key.Rsa.SignData($bytes, [Security.Cryptography.HashAlgorithmName]::SHA256,
                                   [Security.Cryptography.RSASignaturePadding]::Pkcs1)
    $text = "tracebloc-installer-signature: 1`nkey: $($Key.Id)`nsignature: $([Convert]::ToBase64String($signature))`n"
    [IO.File]::WriteAllText((Join-Path $Dir 'SHA256SUMS.sig'), $text, [Text.Encoding]::ASCII)
}

$script:passed = 0
$script:failed = 0
$script:caseNumber = 0

function Clear-Knobs {
    foreach ($name in 'TRACEBLOC_INSTALLER_VERSION', 'TRACEBLOC_INSTALLER_INSTALL_DIR',
                      'TRACEBLOC_INSTALLER_DOWNLOAD_URL', 'TRACEBLOC_INSTALLER_NO_RUN',
                      'TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE', 'HTTPS_PROXY', 'NO_PROXY') {
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
# SHA256SUMS.sig is by the release key unless -SignedBy says otherwise ('none': no file);
# -TamperSums changes SHA256SUMS after it was signed.
function New-Mirror([string]$Name, [string]$Sums, [switch]$NoSums, [switch]$Tamper, [string]$Under = '',
                    [string]$SignedBy = 'release', [switch]$TamperSums) {
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
    if (-not $NoSums -and $SignedBy -ne 'none') {
        Write-Signature $dir $(if ($SignedBy -eq 'other') { $otherKey } else { $releaseKey })
    }
    if ($TamperSums) {
        $sumsPath = Join-Path $dir 'SHA256SUMS'
        $text = [IO.File]::ReadAllText($sumsPath)
        [IO.File]::WriteAllText($sumsPath, $text + ('0' * 64) + "  tracebloc-installer-extra`n")
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

Invoke-Case 'a release without SHA256SUMS.sig is refused' {
    $dir = New-InstallDir
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = (New-Mirror 'unsigned' -SignedBy 'none')
    Assert-Throws { Install-ViaIex } 'no SHA256SUMS\.sig'
    Assert-NothingInstalled $dir
}

Invoke-Case 'a SHA256SUMS changed after signing is refused as a bad signature' {
    $dir = New-InstallDir
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = (New-Mirror 'tampered-sums' -TamperSums)
    Assert-Throws { Install-ViaIex } 'bad signature'
    Assert-NothingInstalled $dir
}

Invoke-Case 'a SHA256SUMS signed by another key is refused as another key' {
    $dir = New-InstallDir
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = (New-Mirror 'other-key' -SignedBy 'other')
    Assert-Throws { Install-ViaIex } 'signed by another key'
    Assert-NothingInstalled $dir
}

Invoke-Case 'a signature file in another format is refused' {
    $dir = New-InstallDir
    $mirror = New-Mirror 'garbled-signature'
    [IO.File]::WriteAllText((Join-Path $mirror 'SHA256SUMS.sig'), "not a signature`n")
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = $mirror
    Assert-Throws { Install-ViaIex } 'not a tracebloc-installer signature file'
    Assert-NothingInstalled $dir
}

Invoke-Case 'the opt-out installs an unsigned release and warns' {
    $dir = New-InstallDir
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = (New-Mirror 'unsigned-opt-out' -SignedBy 'none')
    $env:TRACEBLOC_INSTALLER_NO_RUN = '1'
    $env:TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE = '1'
    $warnings = @(Install-ViaIex 3>&1 | Where-Object { $_ -is [Management.Automation.WarningRecord] })
    Assert-Installed $dir
    if (-not ($warnings | Where-Object { "$_" -match 'signature is NOT checked' })) { throw 'no warning about the skipped signature' }
}

Invoke-Case 'an opt-out value other than 1 is refused' {
    $dir = New-InstallDir
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = $good
    $env:TRACEBLOC_INSTALLER_INSECURE_SKIP_SIGNATURE = 'yes'
    Assert-Throws { Install-ViaIex } 'set it to 1'
    Assert-NothingInstalled $dir
}

Invoke-Case 'the script as published (no key pinned) refuses rather than skip the check' {
    $dir = New-InstallDir
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = $good
    $published = Get-Content -LiteralPath (Join-Path $PSScriptRoot 'install.ps1') -Raw
    if ($published -match "(?m)^\s*\`$releaseKeyId = ''") {
        Assert-Throws { $published | Invoke-Expression } 'no release key pinned'
    } else {
        # The real key is pinned: this test release is signed by another one.
        Assert-Throws { $published | Invoke-Expression } 'signed by another key'
    }
    Assert-NothingInstalled $dir
}

Invoke-Case 'irm | iex leaves no function or variable behind' {
    New-InstallDir | Out-Null
    $env:TRACEBLOC_INSTALLER_DOWNLOAD_URL = $good
    $env:TRACEBLOC_INSTALLER_NO_RUN = '1'
    $functionsBefore = @(Get-ChildItem Function: | ForEach-Object Name)
    $variablesBefore = @(Get-Variable | ForEach-Object Name)
    $scriptText | Invoke-Expression
    $newFunctions = @(Get-ChildItem Function: | ForEach-Object Name | Where-Object { $_ -notin $functionsBefore })
    $newVariables = @(Get-Variable | ForEach-Object Name | Where-Object { $_ -notin $variablesBefore -and $_ -notin @('LASTEXITCODE', 'functionsBefore', 'variablesBefore', 'newFunctions', '_', 'PSItem') })
    if ($newFunctions.Count) { throw "functions left behind: $($newFunctions -join ', ')" }
    if ($newVariables.Count) { throw "variables left behind: $($newVariables -join ', ')" }
}

# The NO_PROXY matcher, taken out of install.ps1's syntax tree and run on its own: on the
# runner no proxy exists to prove a bypass through, and loopback may bypass any proxy anyway.
Invoke-Case 'NO_PROXY decides which origins skip HTTPS_PROXY' {
    $ast = [Management.Automation.Language.Parser]::ParseInput($scriptText, [ref]$null, [ref]$null)
    foreach ($name in 'Test-TraceblocNoProxy', 'Get-TraceblocProxy') {
        $definition = $ast.Find({ param($node) $node -is [Management.Automation.Language.FunctionDefinitionAst] -and $node.Name -eq $name }, $true)
        if (-not $definition) { throw "install.ps1 has no $name" }
        . ([scriptblock]::Create($definition.Extent.Text))
    }
    $cases = @(
        @('https://github.com/x', '', $false), @('https://github.com/x', '*', $true),
        @('https://github.com/x', 'github.com', $true), @('https://objects.github.com/x', '.github.com', $true),
        @('https://objects.github.com/x', 'github.com', $true), @('https://notgithub.com/x', 'github.com', $false),
        @('https://github.com/x', 'example.com, github.com', $true), @('https://github.com/x', 'github.com:8443', $false),
        @('https://github.com:8443/x', 'github.com:8443', $true), @('http://127.0.0.1:8000/x', '127.0.0.1', $true),
        @('http://[::1]:8000/x', '::1', $true), @('https://mirror.corp/x', '*.corp', $true)
    )
    foreach ($case in $cases) {
        $got = Test-TraceblocNoProxy -Uri ([Uri]$case[0]) -NoProxy $case[1]
        if ($got -ne $case[2]) { throw "NO_PROXY='$($case[1])' for $($case[0]): $got, expected $($case[2])" }
    }
    $env:HTTPS_PROXY = 'http://proxy.example:3128'
    $env:NO_PROXY = 'mirror.example'
    if (-not (Get-TraceblocProxy -Origin 'https://github.com/r').Proxy) { throw 'no proxy for github.com' }
    if ((Get-TraceblocProxy -Origin 'https://mirror.example/r').Count) { throw 'a proxy for a NO_PROXY host' }
    if ((Get-TraceblocProxy -Origin 'C:\mirror').Count) { throw 'a proxy for a local directory' }
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
