# Several boards in one monitoring system, with the real components: two
# bachd instances (as bachd@lab1 and bachd@lab2 run them, BACHD_INSTANCE
# set) write their metrics files into one directory; Debian's
# node_exporter reads it with its textfile collector; a Prometheus server
# scrapes node_exporter, with the shipped alerting rules loaded. Through
# Prometheus's HTTP API each instance's bach_records_written_total is its
# own manifest's, and node_textfile_scrape_error is 0. (Without
# instance_name both files held the same series, and node_exporter kept
# one board's and dropped the other's.) Everything listens on loopback on
# a port the kernel picked and is stopped by its pid.
. "$TOP/tests/lib.sh"
. "$TOP/tests/helpers/bachd_lib.sh"
NE=$(command -v prometheus-node-exporter || command -v node_exporter || true)
[ -n "$NE" ] || skip "no node_exporter (Debian package prometheus-node-exporter; scripts/deps.sh)"
command -v prometheus > /dev/null || skip "no prometheus server (Debian package prometheus; scripts/deps.sh)"
for b in curl jq ss; do
	command -v "$b" > /dev/null || skip "no $b"
done

# port PID: the TCP port PID listens on (it asked for port 0)
port() { ss -Hltnp | sed -n "s/^LISTEN .* 127\.0\.0\.1:\([0-9]*\) .*pid=$1,.*/\1/p" | head -n 1; }
listening() { [ -n "$(port "$1")" ]; }
# within SECONDS CMD...: poll CMD every 0.2 s until it succeeds; 1 if it
# never did (the caller says what it saw)
within() {
	wi_n=$(($1 * 5))
	shift
	until "$@" > /dev/null 2>&1; do
		wi_n=$((wi_n - 1))
		[ "$wi_n" -gt 0 ] || return 1
		sleep 0.2
	done
}
# query EXPR: the instant vector EXPR as "LABELS VALUE" lines, sorted
query() {
	curl -fsS --max-time 5 "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$1" > "$T/q" &&
		jq -r '.data.result[] | "\(.metric | del(.__name__, .job, .instance) | tojson) \(.value[1])"' "$T/q" |
		sort
}

mkdir "$T/metrics" "$T/lab1" "$T/lab2" "$T/tsdb"
bg "$NE" --web.listen-address=127.0.0.1:0 --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$T/metrics" 2> "$T/ne.log"
NEPID=$BGPID
wait_until 10 "node_exporter to listen: $(cat "$T/ne.log")" listening "$NEPID"
NEP=$(port "$NEPID")
cat > "$T/prometheus.yml" << EOF2
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $TOP/systemd/prometheus/bach.rules.yml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$NEP']
EOF2
promtool check config "$T/prometheus.yml" > "$T/out" 2>&1 || fail "promtool check config: $(cat "$T/out")"
bg prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address=127.0.0.1:0 2> "$T/prom.log"
PROMPID=$BGPID
wait_until 20 "prometheus to listen: $(tail -n 3 "$T/prom.log")" listening "$PROMPID"
PP=$(port "$PROMPID")
ready() { curl -fsS --max-time 2 "http://127.0.0.1:$PP/-/ready"; }
wait_until 20 "prometheus to be ready: $(tail -n 3 "$T/prom.log")" ready
# and to have scraped node_exporter, so that it sees the captures run
scraped() { [ "$(query 'up{job="node"}')" = "{} 1" ]; }
within 20 scraped || fail "prometheus has not scraped node_exporter: $(query up) $(tail -n 3 "$T/prom.log")"

# two instances of one configuration, as the template runs them (its
# Environment=BACHD_INSTANCE=%i); lab2 loses records (frames the fake
# board drops), and both copy their label.room
for i in lab1 lab2; do
	case $i in
	lab1) n=600000 extra="" ;;
	*) n=800000 extra="--option drop_every=7" ;;
	esac
	BACHD_INSTANCE=$i
	export BACHD_INSTANCE
	# shellcheck disable=SC2086
	bg "$BACHD" --driver fake --option rate=100000 --option records=$n $extra \
		--output "$T/$i" --label room=b2 --set metrics_labels=room \
		--set metrics_file="$T/metrics/$i.prom" --set metrics_interval=1 \
		--control-socket "$T/$i.sock" 2> "$T/$i.log"
	eval "pid_$i=\$BGPID"
done
unset BACHD_INSTANCE
for i in lab1 lab2; do
	eval "reap_within 30 \$pid_$i"
	[ "$RC" -eq 0 ] || fail "bachd $i exited $RC: $(tail -n 5 "$T/$i.log")"
done
C1=$(capdir "$T/lab1")
C2=$(capdir "$T/lab2")
w1=$(ended "$C1" written)
w2=$(ended "$C2" written)
[ "$(ended "$C2" lost)" -gt 0 ] || fail "lab2 lost nothing: a weak test"
[ "$w1" -ne "$w2" ] || fail "both wrote $w1: a weak test"

# Prometheus has each instance's final figures, as its manifest says
want=$(printf '{"instance_name":"lab1","room":"b2"} %s\n{"instance_name":"lab2","room":"b2"} %s' "$w1" "$w2")
final() { [ "$(query bach_records_written_total)" = "$want" ]; }
within 30 final ||
	fail "bach_records_written_total: $(query bach_records_written_total), want $want"
[ "$(query node_textfile_scrape_error)" = "{} 0" ] ||
	fail "node_textfile_scrape_error: $(query node_textfile_scrape_error)"
[ "$(query 'bach_up == 0' | wc -l)" -eq 2 ] || fail "bach_up after the end: $(query bach_up)"
# both seen running, each its own series
[ "$(query 'max_over_time(bach_up[2m])')" = "$(printf '{"instance_name":"lab1","room":"b2"} 1\n{"instance_name":"lab2","room":"b2"} 1')" ] ||
	fail "bach_up while they ran: $(query 'max_over_time(bach_up[2m])')"
# each file read
[ "$(query node_textfile_mtime_seconds | wc -l)" -eq 2 ] ||
	fail "node_exporter read $(query node_textfile_mtime_seconds)"
lost2=$(query 'bach_records_lost_total{cause="frames"}' | sed -n 's/.*"lab2".* //p')
[ "$lost2" = "$(ended "$C2" lost)" ] || fail "lab2 lost $lost2, its manifest $(ended "$C2" lost)"

# the shipped rules run on the server: all loaded and healthy, and the
# loss alert is lab2's, for cause frames
rules_ok() {
	curl -fsS --max-time 5 "http://127.0.0.1:$PP/api/v1/rules" > "$T/rules" &&
		[ "$(jq '[.data.groups[].rules[] | select(.health == "ok")] | length' "$T/rules")" -eq 6 ]
}
within 20 rules_ok || fail "not six healthy rules: $(cat "$T/rules")"
lost_alert() {
	curl -fsS --max-time 5 "http://127.0.0.1:$PP/api/v1/alerts" > "$T/alerts" &&
		[ "$(jq -c '[.data.alerts[] | select(.labels.alertname == "BachRecordsLost") | [.labels.instance_name, .labels.cause]]' "$T/alerts")" = '[["lab2","frames"]]' ]
}
within 20 lost_alert || fail "BachRecordsLost should be lab2's, for frames: $(cat "$T/alerts")"

kill -TERM "$PROMPID" "$NEPID"
reap_within 20 "$PROMPID"
reap_within 10 "$NEPID"
echo ok
