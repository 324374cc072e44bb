# bash completion for bach and bachd, installed by make install as
# completions/bach and completions/bachd. It offers what the programs
# answer to `bach __complete WORD...` and `bachd __complete WORD...` (the
# words after the program's name, the last one being completed): bach's
# command table, each command's getopt table and the values its options
# take (formats from the table of formats, plot kinds, mrc --kind, ctl's
# commands and bachd@ instances, drivers, a driver's KEY=, the [bachd]
# KEY=), all read from the tables the programs parse with
# (tools/bach/complete.c, lib/complete.h), so it cannot drift from them.
# Plain bash (compgen), no bash-completion helpers needed.

# _bach_run PROGRAM: COMPREPLY from PROGRAM __complete; its lines are the
# candidates, and @files, @dirs (complete those names too) and @nospace
_bach_run()
{
	local cur=${COMP_WORDS[COMP_CWORD]} pre="" line
	# bash split --opt=VALUE at the =: keep the = before what is offered
	if [[ $cur == = ]]; then
		pre="="
		cur=""
	fi
	COMPREPLY=()
	while IFS= read -r line; do
		case $line in
		@files) COMPREPLY+=($(compgen -f -P "$pre" -- "$cur")) ;;
		@dirs) COMPREPLY+=($(compgen -d -P "$pre" -- "$cur")) ;;
		@nospace) compopt -o nospace 2>/dev/null ;;
		*) COMPREPLY+=("$pre$line") ;;
		esac
	done < <("$1" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
}

_bach()
{
	_bach_run "${COMP_WORDS[0]}"
}

_bachd()
{
	_bach_run "${COMP_WORDS[0]}"
}

complete -F _bach bach
complete -F _bachd bachd
