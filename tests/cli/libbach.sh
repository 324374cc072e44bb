# libbach installed (docs/api.md): make install-lib into a staging
# root, then a program built only from what was installed (headers,
# bach.pc, libbach.so.0) reads traces; the library exports the public API
# and nothing else.
. "$TOP/tests/lib.sh"
[ -z "${BACH_SANITIZED:-}" ] || skip "the installed library is tested in the plain pass"
command -v pkg-config >/dev/null || skip "no pkg-config"
R="$T/root"
make -s -C "$TOP" NO_DEPS=1 BUILD="$BUILD" DESTDIR="$R" PREFIX=/usr install-lib \
	> "$T/install.log" 2>&1 || fail "make install-lib: $(cat "$T/install.log")"
L="$R/usr/lib"
for f in "$L/libbach.so.0" "$L/libbach.so" "$L/pkgconfig/bach.pc" \
	"$R/usr/include/bach/bach.h" "$R/usr/include/bach/trace.h"; do
	[ -e "$f" ] || fail "not installed: $f"
done
readelf -d "$L/libbach.so.0" | grep -q 'SONAME.*\[libbach\.so\.0\]' ||
	fail "soname: $(readelf -d "$L/libbach.so.0" | grep SONAME)"

# exported: exactly the functions the installed headers declare (less
# their static inline ones), and the EOF block
nm -D --defined-only "$L/libbach.so.0" | awk '$2 ~ /^[TDRB]$/ { sub(/@.*/, "", $3); print $3 }' |
	sort -u > "$T/exported"
cat "$R"/usr/include/bach/*.h | tr '\n' ' ' | sed 's|/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/||g' |
	grep -o 'bach_[a-z0-9_]*(' | tr -d '(' | sort -u > "$T/called"
cat "$R"/usr/include/bach/*.h | grep -o 'static inline [^(]*\bbach_[a-z0-9_]*(' |
	grep -o 'bach_[a-z0-9_]*' | sort -u > "$T/inline"
{ comm -23 "$T/called" "$T/inline"; echo bach_bgzf_eof; } | sort -u > "$T/declared"
same "$T/exported" "$T/declared"
grep -q 'bach_reader_seek' "$T/exported" || fail "no bach_reader_seek exported"

# the example, built against the installed copy only
export PKG_CONFIG_PATH="$L/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$R"
pkg-config --exists bach || fail "pkg-config bach: not found"
[ "$(pkg-config --modversion bach)" = "$(sed -n 's/^VERSION = //p' "$TOP/Makefile")" ] ||
	fail "bach.pc version"
cc -std=c11 -Wall -Wextra -Werror -o "$T/count_types" "$TOP/examples/count_types.c" \
	$(pkg-config --cflags --libs bach) 2> "$T/cc.log" || fail "example: $(cat "$T/cc.log")"
export LD_LIBRARY_PATH="$L"
ldd "$T/count_types" | grep -q "$L/libbach.so.0" || fail "not linked to the installed copy: $(ldd "$T/count_types")"

# its counts are those of bach dump's lines, counted by awk
$BACH gen --records 50000 --seed 4 -o "$T/a.byu.gz"
"$T/count_types" "$T/a.byu.gz" > "$T/got"
$BACH dump "$T/a.byu.gz" | awk '{ c[$3]++ } END { for (k in c) printf "%-11s %d\n", k, c[k] }' |
	sort > "$T/want"
sort "$T/got" | cmp -s - "$T/want" || fail "counts: $(diff "$T/got" "$T/want")"
# a range through the library's seek
"$T/count_types" "$T/a.byu.gz" 20000:20100 | sort > "$T/got"
$BACH dump --range 20000:20100 "$T/a.byu.gz" |
	awk '{ c[$3]++ } END { for (k in c) printf "%-11s %d\n", k, c[k] }' | sort > "$T/want"
same "$T/got" "$T/want"
# standard input
[ "$(cat "$T/a.byu.gz" | "$T/count_types" - | awk '{ s += $2 } END { print s }')" = 50000 ] ||
	fail "stdin"
# damage: the library's message names the file and the offset, exit 1
head -c 30000 "$T/a.byu.gz" > "$T/cut.byu.gz"
expect_status 1 "$T/count_types" "$T/cut.byu.gz"
expect_err "cut.byu.gz: truncated gzip member at byte offset"
expect_status 2 "$T/count_types" "$T/missing.byu"
expect_err "missing.byu: No such file or directory"

# timing (bach_reader_times()): examples/dump_times, built the same way,
# prints each record's clock; it must be bach dump --time's, through the
# gaps of a capture whose link lost frames, for a range too
cc -std=c11 -Wall -Wextra -Werror -o "$T/dump_times" "$TOP/examples/dump_times.c" \
	$(pkg-config --cflags --libs bach) 2> "$T/cc.log" || fail "dump_times: $(cat "$T/cc.log")"
mkdir "$T/c"
$BACH capture --driver fake --option records=30000 --option seed=3 \
	--option frame=1000 --option drop_every=4 --option timing=1 \
	--output "$T/c" 2> "$T/err" || fail "capture: $(cat "$T/err")"
C=$(ls -d "$T"/c/2*Z*)
expect_status 0 "$T/dump_times" "$C"
# (the example prints a gap marker as the BYU reference line does, INVALID;
# bach dump as a gap, GAP:lost=N:cause=C)
$BACH dump --time "$C" | cut -d' ' -f1-4 | sed 's/ GAP:[^ ]* / INVALID /' > "$T/want"
grep -q ' INVALID ' "$T/want" || fail "no gap marker in the capture"
same "$T/out" "$T/want"
expect_err "clock rate 66666666 Hz"
expect_status 0 "$T/dump_times" "$C" 21000:21500
$BACH dump --time --range 21000:21500 "$C" | cut -d' ' -f1-4 | sed 's/ GAP:[^ ]* / INVALID /' > "$T/want"
same "$T/out" "$T/want"
# a damaged or missing sidecar: the message names it and the offset
S=$(ls "$C"/seg-*.byu.zst | head -1)
cp "$S" "$T/d.byu.zst"
cut_member "${S%.byu.zst}.time.gz" "$T/d.time.gz"
expect_status 1 "$T/dump_times" "$T/d.byu.zst"
expect_err "d.time.gz: truncated gzip member at byte offset"
# more entries than records
$BACH convert -q --range 0:1000 "$S" "$T/e.byu.gz"
cp "${S%.byu.zst}.time.gz" "$T/e.time.gz"
expect_status 1 "$T/dump_times" "$T/e.byu.gz"
expect_err "e.time.gz: more entries than"
expect_status 2 "$T/dump_times" "$T/a.byu.gz"
expect_err "a.byu.gz: no timing sidecar"
echo "libbach: ok"
