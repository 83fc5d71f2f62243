#!/usr/bin/env bash
# The transfers bench of a baseline build beside the current build's, in one run, on one loaded
# database: scripts/bench.sh runs it when BENCH_TRANSFERS_BASELINE names a revision ("pre-split":
# the build before the store split, the first parent of merge 20df8b8).
#
#   BENCH=transfers BENCH_TRANSFERS_BASELINE=pre-split BENCH_ROWS=200000 make bench
#
# 1. The baseline's transfers-bench (built from `git archive` of the revision, in .cache) loads
#    the rows with BENCH_KEEP set, prints its write path's figures and times its queries, and
#    leaves its databases.
# 2. The current build times its queries on a copy of the database the baseline loaded
#    (CREATE DATABASE ... TEMPLATE, then BENCH_QUERY_DB; its migrations bring the copy's schema
#    forward, which the baseline could not read after a rename), then the baseline again on its
#    own, alternating for BENCH_TRANSFERS_ROUNDS (2) passes of each.
# 3. The current build loads the same rows into databases of its own (BENCH_NO_QUERIES) and
#    prints its write path's figures.
# 4. Both builds' figures side by side, with current/baseline ratios and the spread of the
#    baseline's passes (transfers-bench compare).
# The baseline is driven only by the environment it already reads (BENCH_KEEP, BENCH_QUERY_DB
# and the BENCH_* settings every run shares). Every database the runs leave is dropped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-buildvcs=false
rev="${BENCH_TRANSFERS_BASELINE:?name a revision, or pre-split}"
if [ "$rev" = pre-split ]; then
  rev=20df8b8^1
fi
rev=$(git rev-parse --verify "$rev^{commit}")
cache="$PWD/.cache/bench-baseline"
src="$cache/src-$rev"
if [ ! -x "$cache/transfers-bench-$rev" ]; then
  rm -rf "$src" && mkdir -p "$src"
  git archive "$rev" | tar -x -C "$src"
  (cd "$src/services/transfers" && go build -o "$cache/transfers-bench-$rev" ./cmd/transfers-bench)
  rm -rf "$src"
fi
(cd services/transfers && go build -o "$cache/transfers-bench-current" ./cmd/transfers-bench)

out="$cache/out-$$"
mkdir -p "$out"
server="${BENCH_DATABASE_URL:-${CHAININTEL_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}}"
cleanup() {
  # The baseline's kept databases (its load's and its raw COPYs').
  grep -ho 'keeping scratch database .*' "$out"/*.txt 2>/dev/null | sed 's/^keeping scratch database //; s/?.*//; s|.*/||' |
    sort -u | while read -r db; do dropdb --if-exists --maintenance-db="$server" "$db" || true; done
  rm -rf "$out"
}
trap cleanup EXIT

rounds="${BENCH_TRANSFERS_ROUNDS:-2}"
loadavg() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"; }
echo "--- baseline $rev: load and queries, pass 1 of $rounds ($(loadavg))"
(unset BENCH_QUERY_DB BENCH_NO_QUERIES; BENCH_KEEP=1 "$cache/transfers-bench-$rev") | tee "$out/base-1.txt"
db=$(grep -o 'keeping scratch database .*citest_bench_[0-9a-f]\{8\}\b.*' "$out/base-1.txt" | sed 's/^keeping scratch database //' | tail -1)
if [ -z "$db" ]; then
  echo "the baseline left no loaded database" >&2
  exit 1
fi
# The current build's copy: the same rows, pages and statistics, migrated forward on first use.
dbname=$(sed 's/?.*//; s|.*/||' <<<"$db")
curname="${dbname}_cur"
createdb --maintenance-db="$server" -T "$dbname" "$curname"
curdb="${db/\/$dbname/\/$curname}"
echo "keeping scratch database $curdb" >"$out/cur-db.txt"
base="$out/base-1.txt" cur="$out/cur-load.txt"
for i in $(seq 1 "$rounds"); do
  echo "--- current build: queries on a copy of the database the baseline loaded, pass $i of $rounds ($(loadavg))"
  (unset BENCH_KEEP BENCH_NO_QUERIES; BENCH_QUERY_DB="$curdb" "$cache/transfers-bench-current") | tee "$out/cur-$i.txt"
  cur="$cur,$out/cur-$i.txt"
  if [ "$i" -lt "$rounds" ]; then
    # The baseline's next pass on the same database: passes alternate, so a change of the
    # machine's load falls on both builds.
    echo "--- baseline $rev: queries, pass $((i + 1)) of $rounds ($(loadavg))"
    if (unset BENCH_KEEP BENCH_NO_QUERIES; BENCH_QUERY_DB="$db" "$cache/transfers-bench-$rev") | tee "$out/base-$((i + 1)).txt"; then
      base="$base,$out/base-$((i + 1)).txt"
    fi
  fi
done
echo "--- current build: load ($(loadavg))"
(unset BENCH_KEEP BENCH_QUERY_DB; BENCH_NO_QUERIES=1 "$cache/transfers-bench-current") | tee "$out/cur-load.txt"

echo "--- side by side: baseline $rev, current $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- services/transfers libs sim || echo ' with uncommitted changes'), $(loadavg)"
"$cache/transfers-bench-current" compare "$base" "$cur"
