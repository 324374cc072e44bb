# The alerting rules shipped for bachd's metrics
# (systemd/prometheus/bach.rules.yml, docs/service.md section 3): promtool
# takes them, and its unit tests (bach.rules.test.yml) see each alert fire
# on its failure and stay quiet on a healthy capture. Every metric the
# rules name is one bachd writes (docs/bachd.md section 8) or node_exporter's.
. "$TOP/tests/lib.sh"
command -v promtool > /dev/null || skip "no promtool (Debian package prometheus; scripts/deps.sh)"
D="$TOP/systemd/prometheus"
promtool check rules "$D/bach.rules.yml" > "$T/out" 2>&1 || fail "promtool check rules: $(cat "$T/out")"
grep -q "SUCCESS: 6 rules found" "$T/out" || fail "promtool check rules: $(cat "$T/out")"
(cd "$D" && promtool test rules bach.rules.test.yml) > "$T/out" 2>&1 ||
	fail "promtool test rules: $(cat "$T/out")"
for a in BachRecordsLost BachDiskBelowMinFree BachStalling BachdNotUp BachdMetricsStale \
	BachNoSegmentClosed; do
	grep -q "alert: $a\$" "$D/bach.rules.yml" || fail "no alert $a"
	grep -q "alertname: $a," "$D/bach.rules.test.yml" || fail "alert $a is not tested"
	grep -q "\`$a\`" "$TOP/docs/service.md" || fail "docs/service.md does not say what $a is"
done
grep -o 'bach_[a-z_]*' "$D/bach.rules.yml" | sort -u | while read -r m; do
	grep -q "\`${m}[\`{]" "$TOP/docs/bachd.md" ||
		fail "the rules use $m, which docs/bachd.md section 8 does not list"
	grep -q "\"$m\"" "$TOP/daemon/metrics.c" || fail "the rules use $m, which bachd does not write"
done
echo ok
