#!/usr/bin/env bash
# The benchmarks' command lines (ctest bench_cli_test): for each tool, --help prints its usage on standard output and
# exits 0 without running anything or writing a file, and an argument it does not know is named with exit code 2.
# (checkpoint_throughput once took --help for its directory and wrote 256 MiB under ./--help.)
#
#   bench/cli_test.sh BIN_DIR TOOL...
set -euo pipefail
bin=$1
shift
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
  echo "bench_cli_test: $*" >&2
  failed=1
}
for tool in "$@"; do
  dir="$work/$tool"
  mkdir "$dir"
  code=0
  (cd "$dir" && "$bin/$tool" --help > "$work/out" 2> "$work/err") || code=$?
  [ "$code" -eq 0 ] || fail "$tool --help exited $code: $(cat "$work/err")"
  head -n 1 "$work/out" | grep -q "^usage: $tool " || fail "$tool --help printed no usage line: $(head -c 300 "$work/out")"
  [ -z "$(ls -A "$dir")" ] || fail "$tool --help wrote $(ls -A "$dir")"
  code=0
  (cd "$dir" && "$bin/$tool" --no-such-flag > "$work/out" 2> "$work/err") || code=$?
  [ "$code" -eq 2 ] || fail "$tool --no-such-flag exited $code, not 2"
  grep -q "^$tool: unknown argument '--no-such-flag'" "$work/err" || fail "$tool --no-such-flag said: $(head -c 300 "$work/err")"
  [ -z "$(ls -A "$dir")" ] || fail "$tool --no-such-flag wrote $(ls -A "$dir")"
done
# auction_bench --first K: the generated instances from index K, each the same as in a run from 0 (its dump, the
# solve's times aside, byte for byte, under its own index), and a --first that is not a whole number, or one with
# --recorded, is refused. --dump makes its directory, and one it cannot make stops the run before any auction.
if [[ " $* " == *" auction_bench "* ]]; then
  mkdir "$work/all"
  common=(--apps gangs --sizes 20x64 --budget 0 --solvers shape)
  "$bin/auction_bench" "${common[@]}" --instances 2 --dump "$work/all" > /dev/null
  "$bin/auction_bench" "${common[@]}" --first 1 --instances 1 --dump "$work/made/one" > /dev/null
  mv "$work/made/one" "$work/one"
  touch "$work/file"
  code=0
  "$bin/auction_bench" "${common[@]}" --dump "$work/file/dir" > "$work/out" 2> "$work/err" || code=$?
  [ "$code" -eq 2 ] && grep -q "^auction_bench: --dump $work/file/dir: cannot make the directory" "$work/err" &&
    ! grep -q "^| 20 " "$work/out" ||
    fail "auction_bench --dump under a file exited $code and said: $(head -c 300 "$work/err")"
  # shape_cuts --without on a dump: a row per winner of the PF optimum, its optimum without the winner below the LP.
  if [[ " $* " == *" shape_cuts "* ]]; then
    "$bin/shape_cuts" "$work/all/20x64-0.json" --without --families gomory --rounds 2 > "$work/out"
    rows=$(grep -c "^| 20x64-0.json | " "$work/out" || true)
    [ "$rows" -gt 0 ] || fail "shape_cuts --without printed no winner: $(head -c 300 "$work/out")"
    awk -F'|' '/^\| 20x64-0.json / { gsub(/[ %]/, "", $5); if ($5 + 0 < 0) bad = 1 } END { exit bad }' "$work/out" ||
      fail "shape_cuts --without: an LP bound below the optimum without its winner: $(head -c 600 "$work/out")"
  fi
  untimed() { sed -E 's/"auction":\{"shape":\{[^}]*\}\},//' "$1"; }
  if [ "$(ls "$work/one")" != "20x64-1.json" ]; then
    fail "auction_bench --first 1 --instances 1 dumped $(ls "$work/one"), not 20x64-1.json"
  elif [ "$(untimed "$work/one/20x64-1.json")" != "$(untimed "$work/all/20x64-1.json")" ]; then
    fail "auction_bench --first 1 dumped another instance than the second of a run from 0"
  fi
  code=0
  "$bin/auction_bench" --first x > /dev/null 2> "$work/err" || code=$?
  [ "$code" -ne 0 ] && grep -q "^auction_bench: --first must be a whole number" "$work/err" ||
    fail "auction_bench --first x exited $code and said: $(head -c 300 "$work/err")"
  code=0
  "$bin/auction_bench" --recorded "$work/none.log" --first 1 > /dev/null 2> "$work/err" || code=$?
  [ "$code" -ne 0 ] && grep -q "^auction_bench: --first picks generated instances" "$work/err" ||
    fail "auction_bench --recorded --first exited $code and said: $(head -c 300 "$work/err")"
fi
[ "$failed" -eq 0 ] && echo "bench_cli_test: $# tools: --help and an unknown argument answered as they should"
exit "$failed"
