# The C sources are as .clang-format lays them out (issue 13, item 6): the
# tree was formatted once with `make format`, and stays so.
. "$TOP/tests/lib.sh"
command -v clang-format > /dev/null ||
	fail "clang-format missing (scripts/deps.sh installs it)"
cd "$TOP" || fail "no $TOP"
git rev-parse --git-dir > /dev/null 2>&1 || skip "not a git checkout: the sources to check are git's"
# shellcheck disable=SC2046
clang-format --dry-run --Werror $(git ls-files '*.c' '*.h') 2> "$T/err" ||
	fail "not formatted (run make format): $(head -n 20 "$T/err")"
echo ok
