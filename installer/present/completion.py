"""`completion bash|zsh|fish|powershell`: a script completing the commands and their options,
written from the parser's own table so it cannot fall behind it. `words` maps each command
to what may follow it ("" to what may come first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from installer.present.options import GLOBAL_VALUED, PROG

Words = Mapping[str, Sequence[str]]
_FUNCTION = "_tracebloc_installer"


def script(shell: str, words: Words) -> str:
    return {"bash": _bash, "zsh": _zsh, "fish": _fish, "powershell": _powershell}[shell](words)


def _cases(words: Words, line: str) -> str:
    return "".join(
        line.format(name=name, words=" ".join(found)) for name, found in words.items() if name
    )


def _bash(words: Words) -> str:
    valued = "|".join(GLOBAL_VALUED)
    return f"""\
# {PROG} completion for bash. Load it with: source <({PROG} completion bash)
{_FUNCTION}() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" command="" i=1
    while [ "$i" -lt "$COMP_CWORD" ]; do
        case "${{COMP_WORDS[i]}}" in
            {valued}) i=$((i + 2)); continue ;;
            -*) ;;
            *) command="${{COMP_WORDS[i]}}"; break ;;
        esac
        i=$((i + 1))
    done
    local words
    case "$command" in
{_cases(words, '        {name}) words="{words}" ;;' + chr(10))}        *) words="{" ".join(words[""])}" ;;
    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}}
complete -F {_FUNCTION} {PROG}
"""


def _zsh(words: Words) -> str:
    valued = "|".join(GLOBAL_VALUED)
    return f"""\
#compdef {PROG}
# {PROG} completion for zsh. Load it with: source <({PROG} completion zsh)
{_FUNCTION}() {{
    local command="" i=2
    local -a found
    while (( i < CURRENT )); do
        case "${{words[i]}}" in
            {valued}) (( i += 2 )); continue ;;
            -*) ;;
            *) command="${{words[i]}}"; break ;;
        esac
        (( i++ ))
    done
    case "$command" in
{_cases(words, "        {name}) found=({words}) ;;" + chr(10))}        *) found=({" ".join(words[""])}) ;;
    esac
    compadd -- "${{found[@]}}"
}}
if (( $+functions[compdef] )); then
    compdef {_FUNCTION} {PROG}
else
    autoload -Uz compinit && compinit && compdef {_FUNCTION} {PROG}
fi
"""


def _fish_option(word: str) -> str:
    if word.startswith("--"):
        return f"-l {word[2:]}"
    if word.startswith("-") and len(word) == 2:
        return f"-s {word[1:]}"
    return f"-a {word}"


def _fish(words: Words) -> str:
    names = [name for name in words if name]
    lines = [
        f"# {PROG} completion for fish. Load it with: {PROG} completion fish | source",
        f"complete -c {PROG} -f",
    ]
    first = [w for w in words[""] if w in names]
    lines.append(f"complete -c {PROG} -n __fish_use_subcommand -a '{' '.join(first)}'")
    lines += [
        f"complete -c {PROG} -n __fish_use_subcommand {_fish_option(w)}"
        for w in words[""]
        if w not in names
    ]
    for name in names:
        seen = f"'__fish_seen_subcommand_from {name}'"
        lines += [f"complete -c {PROG} -n {seen} {_fish_option(w)}" for w in words[name]]
    return "\n".join(lines) + "\n"


def _powershell(words: Words) -> str:
    table = "\n".join(
        f"        '{name}' = @({', '.join(repr(w) for w in found)})"
        for name, found in words.items()
    )
    valued = ", ".join(f"'{w}'" for w in GLOBAL_VALUED)
    return f"""\
# {PROG} completion for PowerShell. Load it with:
#   {PROG} completion powershell | Out-String | Invoke-Expression
Register-ArgumentCompleter -Native -CommandName '{PROG}', '{PROG}.exe' -ScriptBlock {{
    param($wordToComplete, $commandAst, $cursorPosition)
    $table = @{{
{table}
    }}
    $command = ''
    $skip = $false
    foreach ($element in ($commandAst.CommandElements | Select-Object -Skip 1)) {{
        $text = $element.ToString()
        if ($element.Extent.StartOffset -ge $cursorPosition) {{ break }}
        if ($text -eq $wordToComplete) {{ break }}
        if ($skip) {{ $skip = $false; continue }}
        if ($text -in @({valued})) {{ $skip = $true; continue }}
        if (-not $text.StartsWith('-')) {{ $command = $text; break }}
    }}
    if (-not $table.ContainsKey($command)) {{ $command = '' }}
    $table[$command] | Where-Object {{ $_ -like "$wordToComplete*" }} | ForEach-Object {{
        [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
    }}
}}
"""
