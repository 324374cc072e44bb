# Shared by the bench/*.sh scripts (sourced): arithmetic, timing and the
# MEETS/MISSES line. A script sets missed=0 first and exits with it.
calc() { awk "BEGIN { print $1 }"; }
now() { date +%s.%N; }
fmt() { printf '%.2f' "$1"; }
check() { # NAME OK-EXPR DETAIL
	if [ "$(calc "($2) ? 1 : 0")" -eq 1 ]; then r=MEETS; else r=MISSES; missed=1; fi
	printf '%-58s %s  (%s)\n' "$1" "$r" "$3"
}
