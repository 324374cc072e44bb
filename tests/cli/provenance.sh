# The manifest's started event says where a capture came from: host, bach's
# version, the gateware's, the configuration file's absolute path and the
# user's labels (label.KEY in [bachd], --set label.KEY=, --label KEY=VALUE);
# a bad label key stops bachd and bach capture with exit 2 naming it.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"

# started MEMBER DIR: a string member of DIR's started event
started() { python3 -c 'import json,sys
e = json.loads(open(sys.argv[2] + "/manifest.jsonl").readline())
assert e["event"] == "started"
v = e
for k in sys.argv[1].split("/"):
    v = v[k]
print(v if isinstance(v, str) else json.dumps(v, sort_keys=True))' "$1" "$2"; }
command -v python3 > /dev/null || skip "no python3 to read the manifest"

mkdir "$T/caps" "$T/etc"
printf '[bachd]\nlabel.machine = p166 "lab 3"\nlabel.run = 6\n[driver]\nrecords = 20000\n' > "$T/etc/b.conf"
ver=$(sed -n 's/^VERSION = //p' "$TOP/Makefile")
(cd "$T" && "$BACHD" --driver fake --output caps --config etc/../etc/b.conf \
	--label run=7 --set label.workload=kernel-build 2> "$T/log") ||
	fail "bachd with labels: $(cat "$T/log")"
C=$(capdir "$T/caps")
[ "$(started host "$C")" = "$(hostname)" ] || fail "host: $(started host "$C")"
[ "$(started bach_version "$C")" = "$ver" ] || fail "bach_version $(started bach_version "$C"), Makefile $ver"
[ "$(started gateware "$C")" = "$(started device/gateware "$C")" ] && [ "$(started gateware "$C")" = 1.0 ] ||
	fail "gateware: $(started gateware "$C"), device says $(started device/gateware "$C")"
[ "$(started config_path "$C")" = "$(realpath "$T/etc/b.conf")" ] || fail "config_path: $(started config_path "$C")"
[ "$(started config/file "$C")" = etc/../etc/b.conf ] || fail "config.file is no longer as given"
[ "$(started labels "$C")" = '{"machine": "p166 \"lab 3\"", "run": "7", "workload": "kernel-build"}' ] ||
	fail "labels: $(started labels "$C")"
"$BACH" verify -q "$C" > "$T/v" 2>&1 || fail "a capture with provenance does not verify: $(cat "$T/v")"
# a version 1 manifest (config as bach wrote it before its members were
# the settings' keys, docs/formats.md section 4) still reads
mkdir "$T/old"
cp -r "$C" "$T/old/"
V1=$(capdir "$T/old")
python3 -c 'import json, sys
p = sys.argv[1] + "/manifest.jsonl"
lines = open(p).read().splitlines(True)
e = json.loads(lines[0])
e["version"] = 1
e["config"] = json.loads(sys.argv[2])
lines[0] = json.dumps(e, separators=(",", ":")) + "\n"
open(p, "w").writelines(lines)' "$V1" '{"file":"etc/../etc/b.conf","policy":"stall","gap_markers":true,"compress":true,"level":1,"ring_bytes":268435456,"rotate_bytes":1073741824,"rotate_seconds":3600,"io":"io_uring","raw_dump":false,"compressor":"record","threads":0,"queue_depth":8,"flush_ms":200,"min_free_bytes":1000000,"min_free_percent":0,"on_full":"wait","keep_bytes":0,"keep_days":0,"keep_captures":0,"post_rotate":"","duration":0,"records":0,"segments":0,"markers":["io:0x80-0x80"],"marker_rate":100,"metrics_file":""}' ||
	fail "cannot write a version 1 started line"
[ "$(started version "$V1")" = 1 ] && [ "$(started config/ring_bytes "$V1")" = 268435456 ] ||
	fail "the version 1 line is not: $(head -n 1 "$V1/manifest.jsonl")"
"$BACH" verify -q "$V1" > "$T/v" 2>&1 || fail "a version 1 manifest does not verify: $(cat "$T/v")"
"$BACH" ls "$T/old" > "$T/ls" 2>&1 && grep -q 'clean.*machine=p166' "$T/ls" ||
	fail "bach ls of a version 1 manifest: $(cat "$T/ls")"
[ "$(started version "$C")" = 2 ] || fail "version $(started version "$C"), not 2"

# without a configuration file or labels: empty, not missing (a replay
# inherits its source's labels, tests/cli/replay_provenance.sh)
"$BACH" capture --driver replay --option path="$C" --output "$T/caps" 2> "$T/log" ||
	fail "bach capture (replay): $(cat "$T/log")"
C2=$(capdir "$T/caps")
[ "$C2" != "$C" ] || fail "no second capture"
[ "$(started config_path "$C2")" = "" ] || fail "config_path without a file: $(started config_path "$C2")"
[ "$(started gateware "$C2")" = "" ] || fail "replay has no gateware: $(started gateware "$C2")"
"$BACH" capture --driver fake --option records=100 --output "$T/caps" 2> "$T/log" ||
	fail "bach capture: $(cat "$T/log")"
[ "$(started labels "$(capdir "$T/caps")")" = "{}" ] || fail "labels without any: $(started labels "$(capdir "$T/caps")")"
"$BACH" capture --driver fake --option records=100 --output "$T/caps" --label who=me 2> "$T/log" ||
	fail "bach capture --label: $(cat "$T/log")"
[ "$(started labels "$(capdir "$T/caps")")" = '{"who": "me"}' ] || fail "bach capture --label"

# bad keys: exit 2, the key named, nothing made
n=$(ncaps "$T/caps")
for bad in 'a b=1' '9lives=1' '.x=1' 'x/y=1' "$(printf 'k%.0s' $(seq 48))=1"; do
	expect_status 2 "$BACHD" --driver fake --output "$T/caps" --label "$bad"
	expect_err "label.${bad%%=*}: a label is"
	expect_status 2 "$BACH" capture --driver fake --output "$T/caps" --label "$bad"
	expect_err "label.${bad%%=*}"
done
expect_status 2 "$BACHD" --driver fake --output "$T/caps" --label novalue
expect_err "--label: want KEY=VALUE"
expect_status 2 "$BACHD" --driver fake --output "$T/caps" --label "long=$(printf 'v%.0s' $(seq 128))"
expect_err "label.long"
printf '[bachd]\nlabel.ok = 1\nlabel.not ok = 2\n' > "$T/bad.conf"
expect_status 2 "$BACHD" --driver fake --output "$T/caps" --config "$T/bad.conf" --check-config
expect_err "bad.conf:3: label.not ok"
i=0
set --
while [ "$i" -le 16 ]; do set -- "$@" --label "k$i=v"; i=$((i + 1)); done
expect_status 2 "$BACHD" --driver fake --output "$T/caps" "$@" --check-config
expect_err "more than 16 labels"
[ "$(ncaps "$T/caps")" -eq "$n" ] || fail "a refused start made a capture"

# the settings that shape a capture are in the started event's config, as
# they were given: from a config file, --set overriding one of them
mkdir "$T/cfgcaps" "$T/m"
cat > "$T/shape.conf" <<EOF
[bachd]
min_free = 7%
on_full = stop
keep_bytes = 5000000000
keep_days = 9
keep_captures = 4
post_rotate = gzip -t "%s"
duration = 3600
records = 123456789
segments = 77
marker = io:0xE0-0xEF
marker = mem:0xFFF00000/4096
marker_rate = 50
compressor = record
level = 2
metrics_file = $T/m/shape.prom
EOF
expect_status 0 "$BACHD" --driver fake --option records=20000 --output "$T/cfgcaps" \
	--config "$T/shape.conf" --set keep_days=11
first=$(head -n 1 "$(capdir "$T/cfgcaps")/manifest.jsonl")
cfgval() { printf '%s\n' "$first" | jq -c ".config.$1"; }
for kv in min_free='"7%"' on_full='"stop"' keep_bytes=5000000000 \
	keep_days=11 keep_captures=4 post_rotate='"gzip -t \"%s\""' duration=3600 \
	records=123456789 segments=77 marker_rate=50 compressor='"record"' level=2 \
	marker='["io:0xe0-0xef","mem:0xfff00000-0xfff00fff"]' \
	metrics_file="\"$T/m/shape.prom\"" ring_mb=256 rotate_mb=1024 io_uring=true; do
	[ "$(cfgval "${kv%%=*}")" = "${kv#*=}" ] ||
		fail "config.${kv%%=*} is $(cfgval "${kv%%=*}"), given ${kv#*=}: $first"
done
# bach capture writes the same, its defaults where nothing is set
sleep 1 # a new capture id
expect_status 0 "$BACH" capture --driver fake --option records=20000 --output "$T/cfgcaps" \
	--set min_free=1000000
first=$(head -n 1 "$(capdir "$T/cfgcaps")/manifest.jsonl")
for kv in min_free=1000000 on_full='"wait"' keep_days=0 \
	post_rotate='""' duration=0 marker='[]' marker_rate=100 metrics_file='""'; do
	[ "$(cfgval "${kv%%=*}")" = "${kv#*=}" ] ||
		fail "bach capture: config.${kv%%=*} is $(cfgval "${kv%%=*}"), want ${kv#*=}: $first"
done
# every value in config is one its setting takes: the shape capture's
# config given back as --set KEY=VALUE (a list item by item), and nothing
# else, makes a capture with the same config
shape=$(head -n 1 "$(ls -d "$T"/cfgcaps/2*Z* | head -n 1)/manifest.jsonl")
sleep 1 # a new capture id
printf '%s' "$shape" | python3 -c 'import json, sys
out = []
for k, v in json.loads(sys.stdin.read())["config"].items():
    if k in ("file", "io"):
        continue
    for x in v if isinstance(v, list) else [v]:
        out += ["--set", "%s=%s" % (k, json.dumps(x) if isinstance(x, bool) else x)]
sys.stdout.write("\0".join(out))' > "$T/args" || fail "cannot read config: $shape"
xargs -0 "$BACHD" --option records=20000 < "$T/args" 2> "$T/log" ||
	fail "bachd with config's values as --set: $(cat "$T/log")"
again=$(head -n 1 "$(capdir "$T/cfgcaps")/manifest.jsonl")
python3 -c 'import json, sys
a, b = (json.loads(x)["config"] for x in sys.argv[1:])
a.pop("file"), b.pop("file")
sys.exit(a != b)' "$shape" "$again" ||
	fail "config's values given back make another config: $shape then $again"
echo ok
