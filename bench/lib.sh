# Shared by the bench/*.sh scripts (sourced): arithmetic, timing and the
# MEETS/MISSES line. A script sets missed=0 first and exits with it.
calc() { awk "BEGIN { print $1 }"; }
now() { date +%s.%N; }
fmt() { printf '%.2f' "$1"; }
# median VALUE...: the middle one (of an even count, the mean of the two)
median() {
	printf '%s\n' "$@" | sort -g |
		awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
check() { # NAME OK-EXPR DETAIL
	if [ "$(calc "($2) ? 1 : 0")" -eq 1 ]; then r=MEETS; else r=MISSES; missed=1; fi
	printf '%-58s %s  (%s)\n' "$1" "$r" "$3"
}
# secs CMD...: wall time of CMD, output discarded
secs() {
	t0=$(now)
	"$@" > /dev/null
	t1=$(now)
	calc "$t1 - $t0"
}
# bench_trace FILE N: FILE holds bach gen's N records of seed 1 ($BACH)
bench_trace() {
	if [ ! -f "$1" ] || [ "$(wc -c < "$1")" -ne $(($2 * 6)) ]; then
		echo "generating $(($2 * 6 / 1048576)) MiB trace ($2 records)..."
		"$BACH" gen --records "$2" --seed 1 -o "$1"
	fi
}
# manifest_span MANIFEST: seconds from its "started" event to its last
# "segment" event (a capture's time without bachd's start and exit)
manifest_span() {
	awk -F'"' '
		function s(t) { return substr(t, 12, 2) * 3600 + substr(t, 15, 2) * 60 + substr(t, 18, 6) }
		/"event":"started"/ { t0 = s($4) }
		/"event":"segment"/ { t1 = s($4) }
		END { d = t1 - t0; if (d < 0) d += 86400; if (d <= 0) d = 0.001; print d }' "$1"
}
