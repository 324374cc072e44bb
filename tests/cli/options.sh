# Driver options and the configuration, as bachd and bach capture read
# them: every driver's options come from its table (parsed, range-checked,
# listed and documented from it), and bachd --check-config checks them too.
. "$TOP/tests/lib.sh"
BACHD="$(dirname "$BACH")/bachd"

# --list-drivers and --help print every table; no table contradicts itself
expect_status 0 "$BACHD" --list-drivers
grep -q 'BUG' "$T/out" && fail "a driver's table is inconsistent: $(grep BUG "$T/out")"
cp "$T/out" "$T/drivers"
for d in fake replay sigrok usb; do
	grep -q "^$d: " "$T/drivers" || fail "--list-drivers lacks $d"
done
expect_out "  records=N "
expect_out "  vid_pid=VVVV:PPPP "
expect_status 0 "$BACHD" --help
grep -q 'BUG' "$T/out" && fail "the settings table is inconsistent: $(grep BUG "$T/out")"
expect_out "source: fake, replay, sigrok, usb"
expect_out "  ring_mb=MIB "
expect_out "  overflow_every=N:C  before every Nth frame"
expect_status 0 $BACH capture --help
expect_out "  samplerate=HZ "
expect_out "  reconnect=0|1 "

# the docs name every option of every driver, and no other
keys() { # DRIVER: its keys, from --list-drivers
	awk -v d="$1" '/^[a-z]+: / { cur = $1 } cur == d ":" && /^  [a-z_]+=/ {
		sub(/^  /, ""); sub(/=.*/, ""); print }' "$T/drivers"
}
for pair in fake:bachd.md replay:bachd.md usb:usb.md sigrok:decoding.md; do
	d=${pair%%:*}
	doc="$TOP/docs/${pair#*:}"
	n=0
	for k in $(keys "$d"); do
		grep -q "\`$k=" "$doc" || fail "docs/${pair#*:} does not document $d's $k="
		n=$((n + 1))
	done
	[ $n -gt 3 ] || fail "only $n keys found for $d"
done
# the option tables of docs/bachd.md section 3 list only keys that exist
sed -n '/^### fake/,/^### sigrok/p' "$TOP/docs/bachd.md" |
	sed -n 's/^| `\([a-z_]*\)=.*/\1/p' > "$T/doc_keys"
[ -s "$T/doc_keys" ] || fail "no option rows in docs/bachd.md section 3"
while read -r k; do
	grep -q "^  $k=" "$T/drivers" || fail "docs/bachd.md documents '$k=', which no driver has"
done < "$T/doc_keys"

# the [bachd] settings: every one in docs/bachd.md section 2 and in the
# example configuration with the default the table gives (and no other)
"$BACHD" --help | sed -n '/^Settings/,/^Drivers/p' |
	awk '/^   / { sub(/^ +/, " "); line = line $0; next }
	     { if (line != "") print line; line = $0 } END { print line }' |
	sed -n 's/^  \([a-z_]*\)=.*(\(.*, \)*default\(:\)* \([^)]*\))$/\1 \3\4/p' \
	> "$T/settings"
[ "$(wc -l < "$T/settings")" -ge 15 ] || fail "settings in --help: $(cat "$T/settings")"
EX="$TOP/systemd/bachd.conf.example"
while read -r k d; do
	case $d in
	:*) ;; # "default: none": said in words
	*)
		grep -q "^| \`$k\` | \`$d\` |" "$TOP/docs/bachd.md" ||
			fail "docs/bachd.md section 2: $k's default is $d"
		awk -v k="$k" '/^$/ { para = "" } { para = para " " $0 }
			$0 ~ "^" k " = " { print para; exit }' "$EX" |
			grep -q "Default: $d\." || fail "bachd.conf.example: $k's default is $d"
		;;
	esac
	grep -q "^| \`$k\` |" "$TOP/docs/bachd.md" || fail "docs/bachd.md lacks setting $k"
done < "$T/settings"
sed -n '/^## 2\. Configuration/,/^## 3\./s/^| `\([a-z_]*\)` |.*/\1/p' "$TOP/docs/bachd.md" |
	while read -r k; do
		grep -q "^$k " "$T/settings" || fail "docs/bachd.md documents setting $k, which bachd lacks"
	done
# bachd's defaults are the table's: a capture with no settings shows every
# setting --help lists in its started event's config, by its key, with the
# default --help gives (yes and no as true and false, names as strings);
# "none" is an empty string or list. Besides them config has file and io.
mkdir "$T/def"
expect_status 0 "$BACHD" --driver fake --option records=10 --output "$T/def"
head -n 1 "$T"/def/2*Z/manifest.jsonl > "$T/started"
jq -r '.config | keys[]' "$T/started" | sort > "$T/config_keys" ||
	fail "no config: $(cat "$T/started")"
{ cut -d ' ' -f 1 "$T/settings"; echo file; echo io; } | sort | diff - "$T/config_keys" > "$T/keys_diff" ||
	fail "config's keys are not the settings' (< --help, > config): $(cat "$T/keys_diff")"
while read -r k d; do
	case $k:$d in
	output:* | driver:*) continue ;; # given
	level:0) want=3 ;; # 0: the compressor's own level, zstd's 3
	*::*) want='""|[]' ;;
	*:yes) want=true ;;
	*:no) want=false ;;
	*:[0-9]*) want=$d ;;
	*) want="\"$d\"" ;;
	esac
	got=$(jq -c ".config.$k" "$T/started")
	printf '%s\n' "$want" | tr '|' '\n' | grep -qxF -e "$got" ||
		fail "config.$k is $got, the default $d: $(cat "$T/started")"
done < "$T/settings"
# a bad setting says what it wants, an unknown one lists the known ones
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" --set queue_depth=1
expect_err "queue_depth: want a number from 2 to 256, not '1'"
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" --set log_level=loud
expect_err "log_level: debug, info, notice or warning, not 'loud'"
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" --set compres=no
expect_err "unknown setting 'compres' (output, driver, policy, gap_markers, compress,"
expect_status 0 "$BACHD" --check-config --driver fake --output "$T" --set ring_mb=0x10 \
	--set compress=off --set log_level=warning
# the manifest shows every value, so a number is one its readers take:
# jansson, and so bach verify and bach ls, read none past 2^63 - 1
for kv in records=18446744073709551615 keep_bytes=9223372036854775808 \
	min_free=9223372036854775808; do
	expect_status 2 "$BACHD" --check-config --driver fake --output "$T" --set "$kv"
	expect_err "${kv%%=*}: want"
done
expect_err "or a percentage"
mkdir "$T/big"
expect_status 0 "$BACH" capture --driver fake --option records=1000 --output "$T/big" \
	--set records=9223372036854775807 --set keep_bytes=9223372036854775807
expect_status 0 "$BACH" verify -q "$T"/big/2*Z
expect_status 0 "$BACH" ls "$T/big"

# the configuration must be a regular text file of sensible size: a
# directory was read as an empty file, /dev/zero hung
mkdir "$T/conf.d"
expect_status 2 timeout 20 "$BACHD" --check-config --config "$T/conf.d" --driver fake --output "$T"
expect_err "$T/conf.d: not a regular file (a directory)"
expect_status 2 timeout 20 "$BACHD" --check-config --config /dev/zero --driver fake --output "$T"
expect_err "/dev/zero: not a regular file (a character device)"
mkfifo "$T/fifo"
expect_status 2 timeout 20 $BACH capture --check-config --config "$T/fifo" --driver fake --output "$T"
expect_err "$T/fifo: not a regular file (a FIFO)"
head -c 1100000 /dev/zero | tr '\0' '#' > "$T/big.conf"
expect_status 2 "$BACHD" --check-config --config "$T/big.conf" --driver fake --output "$T"
expect_err "$T/big.conf: larger than 1024 KiB"
printf '[bachd]\noutput = %s\0\n' "$T" > "$T/nul.conf"
expect_status 2 "$BACHD" --check-config --config "$T/nul.conf" --driver fake
expect_err "$T/nul.conf:2: a NUL byte"
# a line longer than libinih reads is an error that says so, on its line
# (it used to be cut in two: "syntax error" on the next line); a long
# comment is passed over
long=$(printf '%0200d' 0)
printf '[bachd]\n# %s\npolicy = drop\noutput = %s/%s\n' "$long" "$T" "$long" > "$T/long.conf"
expect_status 2 "$BACHD" --check-config --config "$T/long.conf" --driver fake
expect_err "$T/long.conf:4: line longer than 198 bytes, the most libinih reads"
printf '[bachd]\n; %s\n\n[driver]\n# %s\nrate = 5\n' "$long" "$long" > "$T/longc.conf"
expect_status 0 "$BACHD" --check-config --config "$T/longc.conf" --driver fake --output "$T"
# the line of the first error, whatever its kind
printf '[bachd]\nnonsense\npolicy = fast\n' > "$T/syntax.conf"
expect_status 2 "$BACHD" --check-config --config "$T/syntax.conf" --driver fake --output "$T"
expect_err "$T/syntax.conf:2: syntax error"

# --check-config checks the [driver] section against the driver's table:
# a misspelled key, found before the start systemd would not restart
printf '[bachd]\noutput = %s\ndriver = fake\n\n[driver]\nrate = 10\nrecrods = 10\n' \
	"$T" > "$T/typo.conf"
expect_status 2 "$BACHD" --check-config --config "$T/typo.conf"
expect_err "$T/typo.conf:7: unknown option 'recrods' for fake (records, seed, rate,"
expect_status 2 $BACH capture --check-config --config "$T/typo.conf"
expect_err "$T/typo.conf:7: unknown option 'recrods'"
printf '[bachd]\noutput = %s\ndriver = fake\n[driver]\nframe = 70000\n' "$T" > "$T/range.conf"
expect_status 2 "$BACHD" --check-config --config "$T/range.conf"
expect_err "$T/range.conf:5: option frame: want a number from 1 to 65535, not '70000'"
# an option for another driver than the one named is refused too
expect_status 2 "$BACHD" --check-config --driver replay --output "$T" --option records=5
expect_err "unknown option 'records' for replay (path, rate, pace,"
expect_status 2 "$BACHD" --check-config --driver replay --output "$T"
expect_err "option path=FILE is required for replay"
# checks across options, without a device
expect_status 2 "$BACHD" --check-config --driver usb --output "$T" --option timeout=1
expect_err "option timeout: 1 s is too short for status_ms=1000"
expect_status 0 "$BACHD" --check-config --driver usb --output "$T" --option timeout=1 \
	--option status_ms=500 --option vid_pid=0403:6010 --option path=1-2.3
expect_status 0 "$BACHD" --check-config --driver sigrok --output "$T" --option device=demo \
	--option samplerate=24MHz --option limit=1.5k
# a later --option replaces the file's
expect_status 0 "$BACHD" --check-config --config "$T/range.conf" --option frame=1000
# the directories a start needs: the output directory and the metrics
# file's exist and can be written in (what bachd would exit 2 for)
expect_status 2 "$BACHD" --check-config --driver fake --output "$T/nodir"
expect_err "output directory $T/nodir: No such file or directory"
expect_status 2 $BACH capture --check-config --driver fake --output "$T/nodir"
expect_err "output directory $T/nodir: No such file or directory"
expect_status 2 "$BACHD" --check-config --driver fake --output "$T/range.conf"
expect_err "output directory $T/range.conf: not a directory"
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" \
	--set metrics_file="$T/nodir/bachd.prom"
expect_err "metrics_file $T/nodir/bachd.prom: No such file or directory"
expect_status 0 "$BACHD" --check-config --driver fake --output "$T" \
	--set metrics_file="$T/bachd.prom"
if command -v setpriv > /dev/null 2>&1 && id nobody > /dev/null 2>&1 &&
	[ "$(id -u)" -eq 0 ]; then
	# a user who may not write in / (bachd's own user, not root)
	expect_status 2 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$BACHD" --check-config --driver fake --output /
	expect_err "output directory /: cannot write in /: Permission denied"
	expect_status 2 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$BACHD" --check-config --driver fake --output /tmp \
		--set metrics_file=/bachd.prom
	expect_err "metrics_file /bachd.prom: cannot write in /: Permission denied"
fi

# several configuration files are read in the order they are given,
# whatever their form (--config=FILE and -cFILE came after every
# --config FILE and -c FILE), before the rest of the command line
printf '[bachd]\npolicy = drop\nring_mb = 8\n' > "$T/a.conf"
printf '[bachd]\npolicy = stall\n' > "$T/b.conf"
mkdir "$T/order"
expect_status 0 "$BACHD" --driver fake --option records=10 --output "$T/order" \
	--config="$T/a.conf" -c "$T/b.conf"
first=$(head -n 1 "$T"/order/2*Z/manifest.jsonl)
[ "$(printf '%s' "$first" | jq -c '[.config.policy, .config.ring_mb, .config_path]')" = \
	"[\"stall\",8,\"$(realpath "$T/b.conf")\"]" ] || fail "--config=a -c b: $first"
rm -r "$T/order" && mkdir "$T/order"
expect_status 0 "$BACHD" --driver fake --option records=10 --output "$T/order" \
	--set ring_mb=16 -c"$T/b.conf" --config "$T/a.conf"
[ "$(jq -c '[.config.policy, .config.ring_mb]' "$T"/order/2*Z/manifest.jsonl | head -n 1)" = \
	'["drop",16]' ] || fail "-cb --config a: $(head -n 1 "$T"/order/2*Z/manifest.jsonl)"

# --policy, --no-compress, --no-gap-markers, --no-io-uring and
# --control-socket are settings by another name: the same capture as with
# --set, and a later one of either replaces an earlier one
mkdir "$T/alias" "$T/set"
expect_status 0 "$BACH" capture --driver fake --option records=1000 --output "$T/alias" \
	--set compress=yes --no-compress --no-gap-markers --no-io-uring --policy drop \
	--control-socket none
expect_status 0 "$BACH" capture --driver fake --option records=1000 --output "$T/set" \
	--set compress=no --set gap_markers=no --set io_uring=no --set policy=drop \
	--set control_socket=none
[ "$(jq -c '.config | del(.output)' "$T"/alias/2*Z/manifest.jsonl | head -n 1)" = \
	"$(jq -c '.config | del(.output)' "$T"/set/2*Z/manifest.jsonl | head -n 1)" ] ||
	fail "aliases and --set differ: $(head -n 1 "$T"/alias/2*Z/manifest.jsonl)"
ls "$T"/alias/2*Z/seg-000001.byu > /dev/null || fail "--no-compress wrote no .byu"
mkdir "$T/later"
expect_status 0 "$BACH" capture --driver fake --option records=1000 --output "$T/later" \
	--no-compress --set compress=yes
ls "$T"/later/2*Z/seg-000001.byu.zst > /dev/null || fail "--set compress=yes after --no-compress"

# records=0 is refused (it once meant "run forever" and filled a disk);
# leaving records out runs until stopped
expect_status 2 timeout 20 "$BACHD" --driver fake --option records=0 --output "$T"
expect_err "option records: want a number of at least 1, not '0' (leave it out to run until stopped)"
# a number too big for its field is refused, never wrapped
expect_status 2 timeout 20 "$BACHD" --driver fake --option records=100 \
	--option overflow_every=1:4294967296 --output "$T"
expect_err "option overflow_every: want N:C, C 0 to 4294967295, not '1:4294967296'"
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" \
	--option seed=18446744073709551616
expect_err "option seed: want a number"
# numbers: decimal or 0x hex; a leading zero is not octal, it is refused
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" --option frame=010
expect_err "no leading zeros), not '010'"
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" --option timing=2
expect_err "option timing: want 0 or 1 (or yes/no, true/false, on/off), not '2'"
mkdir "$T/hex"
expect_status 0 "$BACHD" --driver fake --option records=0x1000 --option frame=0x100 \
	--option timing=yes --output "$T/hex"
grep -q '"event":"ended","state":"clean","produced":4096,' "$T"/hex/2*Z/manifest.jsonl ||
	fail "records=0x1000: $(tail -n 1 "$T"/hex/2*Z/manifest.jsonl)"
# a value with a newline stays on one line of the message
expect_status 2 "$BACHD" --check-config --driver fake --output "$T" --option "rate=1
2"
expect_err "not '1\\n2'"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "the message split: $(cat "$T/err")"

# a repeatable option keeps every value (replay's input=), in the manifest too;
# any other key keeps its last
"$BACH" gen --records 1000 --seed 3 -o "$T/t.byu"
mkdir "$T/rep"
expect_status 0 "$BACHD" --driver replay --option path="$T/t.byu" --option input=a=1 \
	--option rate=5 --option input=b=2 --option rate=0 --output "$T/rep"
grep -q '"options":{"path":"[^"]*","input":"a=1","input":"b=2","rate":"0"}' \
	"$T"/rep/2*Z/manifest.jsonl || fail "options: $(head -n 1 "$T"/rep/2*Z/manifest.jsonl)"
echo ok
