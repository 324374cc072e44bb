# The C sources are as .clang-format lays them out: the
# tree was formatted once with `make format`, and stays so. And no file
# cites an issue tracker the repository does not have.
. "$TOP/tests/lib.sh"
command -v clang-format > /dev/null ||
	fail "clang-format missing (scripts/deps.sh installs it)"
cd "$TOP" || fail "no $TOP"
git rev-parse --git-dir > /dev/null 2>&1 || skip "not a git checkout: the sources to check are git's"
# shellcheck disable=SC2046
clang-format --dry-run --Werror $(git ls-files '*.c' '*.h') 2> "$T/err" ||
	fail "not formatted (run make format): $(head -n 20 "$T/err")"

# Section rulers, "/* ---- name ---...--- */", stay on one line: one too
# long for 80 columns is broken by clang-format into a ruler whose "*/"
# (or its dashes) stands alone on the next line
git ls-files -z '*.c' '*.h' | xargs -0 awk '
	FNR == 1 { prev = "" }
	prev ~ /^[ \t]*\/\* *(--|==)/ && prev !~ /\*\/[ \t]*$/ &&
	    /^[ \t]*(\*[ \t]*[-=]+[ \t]*)?\*\/[ \t]*$/ { print FILENAME ":" (FNR - 1) ": " prev }
	{ prev = $0 }' > "$T/rulers"
[ ! -s "$T/rulers" ] ||
	fail "rulers broken over two lines (make each one line within 80 columns): $(head -n 20 "$T/rulers")"

# A number in a tracker that is not here means nothing to a reader: a
# comment says what it means, or names the document that does
git ls-files -z | xargs -0 grep -nIiE '\<issues? [0-9]+' > "$T/issues" || true
[ ! -s "$T/issues" ] ||
	fail "cites an issue tracker the repository does not have: $(head -n 20 "$T/issues")"
# A message is one string literal, never chopped across lines (.clang-format
# has BreakStringLiterals: false; grep finds a message whole). Two literals
# on two lines are allowed after a "\n" (a line of text each) or where the
# first ends in a hex or octal escape the second would extend.
# shellcheck disable=SC2046
perl -0ne 'while (/"((?:[^"\\\n]|\\.)*)"[ \t]*\n[ \t]*"/g) {
	my $b = $1; my $n = 1 + (substr($_, 0, $-[0]) =~ tr/\n//);
	print "$ARGV:$n\n" unless $b =~ /\\n$|\\x[0-9a-fA-F]+$|\\[0-7]{1,3}$/ }' \
	$(git ls-files '*.c' '*.h') > "$T/split"
[ ! -s "$T/split" ] ||
	fail "string literals chopped across lines (join them): $(head -n 20 "$T/split")"
echo ok
