# In-band markers: every record matching a `marker` rule becomes a mark
# event (source "marker") and stays in the trace; the rate cap merges a
# flood into one event a second with a count. The expected events are
# computed here from `bach dump` of the same capture, with awk.
. "$TOP/tests/lib.sh"

# matches RULE...: "rule index address be type" for every record of the
# trace (bach dump --format csv on stdin) that a rule matches: a cycle of
# the rule's kind with an enabled byte (BE# bit clear) inside its range
matches() {
	awk -F, -v rules="$*" '
	function hex(s,   n, i) {
		s = tolower(s)
		if (s !~ /^0x/) return s + 0
		sub(/^0x/, "", s); n = 0
		for (i = 1; i <= length(s); i++)
			n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return n
	}
	BEGIN {
		nr = split(rules, r, " ")
		for (i = 1; i <= nr; i++) {
			split(r[i], kv, ":"); kind[i] = kv[1]
			if (split(kv[2], lh, "-") == 2) { lo[i] = hex(lh[1]); hi[i] = hex(lh[2]) }
			else if (split(kv[2], bs, "/") == 2) { lo[i] = hex(bs[1]); hi[i] = lo[i] + hex(bs[2]) - 1 }
			else { lo[i] = hex(kv[2]); hi[i] = lo[i] }
			name[i] = sprintf("%s:0x%x-0x%x", kind[i], lo[i], hi[i])
		}
	}
	NR > 1 {
		a = hex($2); be = hex($3); t = $5
		io = (t == "IO_READ" || t == "IO_WRITE")
		mem = (t ~ /FETCH$/ || t ~ /D_READ$/ || t == "D_WRITE" || t == "WRITE_BACK")
		for (i = 1; i <= nr; i++) {
			if ((kind[i] == "io" && !io) || (kind[i] == "mem" && !mem)) continue
			for (b = 0; b < 8; b++)
				if (int(be / 2 ^ b) % 2 == 0 && a + b >= lo[i] && a + b <= hi[i]) {
					printf "%s %d %s %s %s\n", name[i], $1, $2, $3, t
					break
				}
		}
	}'
}
# events CAP: the same fields of CAP's marker events (count, last_at after)
events() {
	grep '"source":"marker"' "$1/manifest.jsonl" | sed -n \
	's/.*"at":\([0-9]*\),"record":\([0-9]*\),"source":"marker","rule":"\([^"]*\)","address":"\([^"]*\)","be":"\([^"]*\)","type":"\([A-Z_]*\)"\(.*\)}/\3 \1 \4 \5 \6 \2 \7/p'
}

mkdir "$T/caps"
# port 0x80 (the POST port) and port 0x64 alone: 0x60's quadword, byte 4;
# by each path of the scan (lib/cpus.h: BACH_SIMD narrows it), the same
R1="io:0x80 io:0x64-0x64"
for simd in "" avx2 none; do
	rm -rf "$T/caps"/*
	BACH_SIMD=$simd "$BACH" capture --driver fake --option records=300000 --option seed=7 \
		--output "$T/caps" --set marker=io:0x80,io:0x64-0x64 --set marker_rate=1000000 \
		2> "$T/log" || fail "capture with markers: $(cat "$T/log")"
	C=$(ls -d "$T"/caps/2*Z*)
	"$BACH" dump --format csv "$C" | matches $R1 | sort > "$T/want"
	[ "$(wc -l < "$T/want")" -gt 100 ] || fail "the workload touched the ports only $(wc -l < "$T/want") times"
	grep -q 'io:0x64-0x64 .* 0xfe ' "$T/want" && fail "awk took port 0x60 for 0x64"
	events "$C" > "$T/ev"
	# lossless: record is at; then the events are exactly the matches
	awk '$2 != $6 { exit 1 }' "$T/ev" || fail "a marker's record is not its at (BACH_SIMD=$simd): $(head -n 3 "$T/ev")"
	cut -d' ' -f1-5 "$T/ev" | sort > "$T/got"
	same "$T/want" "$T/got"
	grep -q '"count"' "$C/manifest.jsonl" && fail "merged although under marker_rate"
done
# the records stay in the trace
"$BACH" gen --records 300000 --seed 7 -o "$T/gen.byu"
"$BACH" dump "$T/gen.byu" > "$T/gen.txt"
"$BACH" dump "$C" | cmp -s - "$T/gen.txt" || fail "the trace is not the workload's records"

# the cap: at most marker_rate events a second per rule, the rest merged;
# every match is counted once, and each event starts at a match
rm -rf "$T/caps"/*
R2="mem:0x184000/4096 io:0x80"
"$BACH" capture --driver fake --option records=1500000 --option seed=7 \
	--option rate=600000 --output "$T/caps" --set marker=mem:0x184000/4096 \
	--set marker=io:0x80 --set marker_rate=20 2> "$T/log" ||
	fail "capture with a capped marker: $(cat "$T/log")"
C=$(ls -d "$T"/caps/2*Z*)
"$BACH" dump --format csv "$C" | matches $R2 > "$T/want"
events "$C" > "$T/ev"
for r in mem:0x184000-0x184fff io:0x80-0x80; do
	want=$(grep -c "^$r " "$T/want")
	got=$(awk -v r="$r" '$1 == r { n += 1; if (match($0, /"count":[0-9]+/)) n += substr($0, RSTART + 8, RLENGTH - 8) - 1 } END { print n + 0 }' "$T/ev")
	[ "$want" -eq "$got" ] || fail "$r: $want matches, the events count $got"
	nev=$(grep -c "^$r " "$T/ev")
	# about 2.5 s: at most 20 a second plus one merged event a second
	[ "$nev" -le 90 ] || fail "$r: $nev events, the cap is 20 a second"
	grep "^$r " "$T/ev" | grep -q '"count"' || fail "$r: nothing merged at 20 a second"
done
cut -d' ' -f1-5 "$T/ev" | sort > "$T/first"
sort "$T/want" | comm -23 "$T/first" - > "$T/bad"
[ ! -s "$T/bad" ] || fail "events that are no match: $(head -n 3 "$T/bad")"
"$BACH" verify -q "$C" > "$T/v" 2>&1 || fail "verify: $(cat "$T/v")"

# bad rules: exit 2 naming the key, in the file and on the command line
for bad in io:0x10000 io:0x20-0x10 mem:0x1000/0 mem:0xfffff000/0x2000 port:0x80 \
	io:080 'io:0x80,,io:0x81' io:; do
	expect_status 2 "$BACH" capture --driver fake --output "$T/caps" --set "marker=$bad" --check-config
	expect_err "marker: want io:LO-HI"
done
# a comma with no rule after it (or before it) is an empty rule: refused,
# as two commas were, in the file too (a trailing comma was taken)
for bad in io:0x80, ,io:0x80 'io:0x80,mem:0x1000/16,'; do
	expect_status 2 "$BACH" capture --driver fake --output "$T/caps" --set "marker=$bad" --check-config
	expect_err "marker: want io:LO-HI"
	expect_err "(an empty rule: a comma with no rule on one side), not '$bad'"
done
printf '[bachd]\nmarker = io:0x80,\n' > "$T/comma.conf"
expect_status 2 "$BACH" capture --driver fake --output "$T/caps" --config "$T/comma.conf" --check-config
expect_err "comma.conf:2: marker: want"
printf '[bachd]\nmarker = io:0x80\nmarker = mem:zz\n' > "$T/bad.conf"
expect_status 2 "$BACH" capture --driver fake --output "$T/caps" --config "$T/bad.conf" --check-config
expect_err "bad.conf:3: marker: want"
expect_status 2 "$BACH" capture --driver fake --output "$T/caps" --set marker_rate=0 --check-config
expect_err "marker_rate"
printf '[bachd]\nmarker = io:0x80, mem:0xFFF00000/4096\nmarker = io:0xe0-0xef\n' > "$T/ok.conf"
expect_status 0 "$BACH" capture --driver fake --output "$T/caps" --config "$T/ok.conf" --set marker= --check-config
