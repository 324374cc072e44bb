# bash completion for bach and bachd, installed by make install as
# completions/bach and completions/bachd. Everything it offers comes from
# the programs' own output, so it cannot drift from them: bach's commands
# from `bach help`, a command's options from `bach help CMD`, bachd's from
# `bachd --help`, driver names and options from `bachd --list-drivers`,
# the [bachd] keys from the settings part of `bachd --help`, the formats of
# --from and --to from the list in `bach help convert` (which bach prints
# from its table of formats: read at each completion, never copied here).
# Plain bash (compgen), no bash-completion helpers needed.

# the bachd beside a bach (build/bin/ or $(BINDIR)), else on PATH
_bach_daemon()
{
	local d=${1%/*}
	if [[ $1 == */* && -x $d/bachd ]]; then
		printf '%s\n' "$d/bachd"
	else
		printf '%s\n' bachd
	fi
}

# every option a help text lists: the lines that begin with one (the
# options before the description, which starts after two spaces)
_bach_opts_of()
{
	"$@" 2>/dev/null | grep -E '^ +-' | sed -E 's/^ +//; s/   *[^ -].*//' |
		grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z-]*' | sed 's/^[ ,]//' | sort -u
}

# the formats bach $1 reads (in) or writes (out): the rows of the Formats
# list in `bach help convert`, "  NAME  in/out  what it is"
_bach_formats()
{
	"$1" help convert 2>/dev/null |
		awk -v way="$2" '/^Formats/ { on = 1; next } !/^  [^ ]/ { on = 0 }
			on { n = split($2, w, "/"); for (i = 1; i <= n; i++)
				if (w[i] == way) print $1 }'
}

_bach_drivers()
{
	"$1" --list-drivers 2>/dev/null | sed -n 's/^\([a-z0-9_]*\): .*/\1/p'
}

# KEY= of driver $2's options
_bach_driver_keys()
{
	"$1" --list-drivers 2>/dev/null |
		awk -v d="$2" '/^[a-z0-9_]+: / { on = ($1 == d ":") }
			on && /^  [a-z_]+=/ { sub(/=.*/, "="); sub(/^  /, ""); print }'
}

# KEY= of the [bachd] settings
_bach_settings()
{
	"$1" --help 2>/dev/null |
		sed -n '/^Settings/,/^Drivers/s/^  \([a-z_]*\)=.*/\1=/p'
}

# the capture options bachd and bach capture share; $1 bachd, $2 the
# program whose help lists the options
_bach_capture_complete()
{
	local daemon=$1 cur=${COMP_WORDS[COMP_CWORD]}
	local prev=${COMP_WORDS[COMP_CWORD - 1]} drv="" i
	shift

	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-d | --driver) drv=${COMP_WORDS[i + 1]} ;;
		--driver=*) drv=${COMP_WORDS[i]#--driver=} ;;
		esac
	done
	case $prev in
	-d | --driver)
		COMPREPLY=($(compgen -W "$(_bach_drivers "$daemon")" -- "$cur"))
		return ;;
	-O | --option)
		[[ -n $drv ]] || drv=fake
		compopt -o nospace 2>/dev/null
		COMPREPLY=($(compgen -W "$(_bach_driver_keys "$daemon" "$drv")" -- "$cur"))
		return ;;
	--set)
		compopt -o nospace 2>/dev/null
		COMPREPLY=($(compgen -W "$(_bach_settings "$daemon")" -- "$cur"))
		return ;;
	--policy)
		COMPREPLY=($(compgen -W "stall drop" -- "$cur"))
		return ;;
	-a | --autostop)
		compopt -o nospace 2>/dev/null
		COMPREPLY=($(compgen -W "duration: records: segments:" -- "$cur"))
		return ;;
	-o | --output)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	-c | --config)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--control-socket | --label)
		return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_bach_opts_of "$@")" -- "$cur"))
	fi
}

_bachd()
{
	COMPREPLY=()
	_bach_capture_complete "${COMP_WORDS[0]}" "${COMP_WORDS[0]}" --help
}

_bach()
{
	local bach=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]}
	local prev=${COMP_WORDS[COMP_CWORD - 1]} cmd=${COMP_WORDS[1]}
	COMPREPLY=()

	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "$("$bach" help 2>/dev/null |
			sed -n '/^Commands:/,/^$/s/^  \([a-z]*\) .*/\1/p') --version --help" -- "$cur"))
		return
	fi
	case $cmd in
	help)
		((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W "$("$bach" help 2>/dev/null |
			sed -n '/^Commands:/,/^$/s/^  \([a-z]*\) .*/\1/p')" -- "$cur"))
		return ;;
	capture)
		_bach_capture_complete "$(_bach_daemon "$bach")" "$bach" help capture
		return ;;
	ctl)
		case $prev in
		-s | --socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
		-i | --instance | -t | --timeout | mark) return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$(_bach_opts_of "$bach" help ctl)" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "status start stop rotate mark" -- "$cur"))
		fi
		return ;;
	esac
	case $prev in
	-f | --format)
		case $cmd in
		dump) COMPREPLY=($(compgen -W "text csv jsonl" -- "$cur")); return ;;
		esac ;;
	--from | --from-a | --from-b)
		COMPREPLY=($(compgen -W "$(_bach_formats "$bach" in)" -- "$cur")); return ;;
	--to) COMPREPLY=($(compgen -W "$(_bach_formats "$bach" out)" -- "$cur")); return ;;
	--pins) COMPREPLY=($(compgen -W "bin vcd csv" -- "$cur")); return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_bach_opts_of "$bach" help "$cmd")" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}

complete -F _bach bach
complete -F _bachd bachd
