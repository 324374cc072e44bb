# The Python module (python/bach over libbach.so.0): its pytest suite
# against the library just built, then make install-python into a staging
# root, imported from there by Debian's python3.
. "$TOP/tests/lib.sh"
[ -z "${BACH_SANITIZED:-}" ] || skip "a sanitized libbach cannot be loaded into python3; tested in the plain pass"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3"
"$PY" -c 'import numpy, cffi, pytest' 2>/dev/null || skip "python3-numpy, -cffi or -pytest missing (scripts/deps.sh)"
BACH_LIBRARY="$TOP/$BUILD/libbach.so.0" PYTHONPATH="$TOP/python" \
	"$PY" -m pytest -q -p no:cacheprovider "$TOP/python/tests" ||
	fail "pytest python/tests"

# installed: where Debian's python3 looks, for PREFIX=/usr and /usr/local
R="$T/root"
for prefix in /usr /usr/local; do
	make -s -C "$TOP" NO_DEPS=1 BUILD="$BUILD" DESTDIR="$R" PREFIX=$prefix \
		install-python > "$T/install.log" 2>&1 ||
		fail "make install-python: $(cat "$T/install.log")"
	dir=$(cd "$R$prefix/lib" && ls -d python3*/dist-packages)
	for f in __init__.py _lib.py plot.py dist.py; do
		[ -f "$R$prefix/lib/$dir/bach/$f" ] || fail "$prefix: $f not installed: $(find "$R")"
	done
	"$PY" -c "import sys; sys.exit('$prefix/lib/$dir' not in sys.path)" ||
		fail "$prefix/lib/$dir is not on python3's path"
	grep -q "LIBRARY = \"$prefix/lib/libbach.so.0\"" "$R$prefix/lib/$dir/bach/_config.py" ||
		fail "_config.py: $(cat "$R$prefix/lib/$dir/bach/_config.py")"
done
$BACH gen --records 1000 --seed 2 -o "$T/a.byu"
cd "$T"
LD_LIBRARY_PATH="$R/usr/lib" PYTHONPATH="$R/usr/lib/python3/dist-packages" "$PY" -c "
import bach, sys
assert bach.__file__.startswith('$R'), bach.__file__
a = bach.open('a.byu').read()
assert len(a) == 1000 and a.tobytes() == open('a.byu', 'rb').read()
" || fail "the installed module"
echo "python: ok"
