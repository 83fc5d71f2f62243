#!/usr/bin/env bash
# make bench: prints the performance figures each issue names, section by section.
#
#   BENCH=edge,ingest make bench     only some sections (edge ingest intelligence transfers user-labels balances token-analytics stream-fanout)
#   BENCH_ROWS=200000 make bench     a smaller transfers load (default 10,000,000 rows, as issue 6 asks)
#   BENCH_EDGE_ROUNDS=3 make bench   fewer interleaved edge rounds (default 5; the median is printed)
#   BENCH_WRITERS=1 make bench       transfers loaded (and raw-COPYed) by one writer (default 2, as two replicas)
#   BENCH_TRANSFERS_BASELINE=pre-split make bench   transfers beside a baseline build (a revision; pre-split: before
#                                    the store split) on one loaded database, ratios printed (scripts/bench-transfers-baseline.sh)
#   BENCH_BAL_ADDRESSES=200000 make bench   a smaller balances world (default 1,000,000 addresses, as issue 25 asks)
#   BENCH_STREAM_CLIENTS=2000 make bench   fewer stream clients (default 10,000 at 2,000 transfers/s)
#   BENCH_STREAM_MIX=single make bench     stream clients of one filter each (default watchlists: 1 to 5 a client)
#
# Figures are printed, never asserted. Every section shares this machine's cores with PostgreSQL,
# Redis and the in-process broker; compare figures printed side by side in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-buildvcs=false
want="${BENCH:-edge,ingest,intelligence,user-labels,transfers,balances,token-analytics,stream-fanout}"

section() {
  case ",$want," in *",$1,"*) ;; *) return 1 ;; esac
  printf '\n==================== %s ====================\n' "$2"
}

if section edge "edge: overhead of the full edge vs direct handler and bare reverse proxy (issues 2, 3)"; then
  (cd services/edge && go run ./cmd/edgebench -duration "${BENCH_EDGE_DURATION:-5s}" -rounds "${BENCH_EDGE_ROUNDS:-5}")
fi

if section ingest "ingest: JSON-RPC decode of mainnet block 18,000,000 and simulator -> Kafka (issue 4)"; then
  (cd services/ingest && go test -run '^$' -bench DecodeMainnet -benchtime 300x ./internal/evm/)
  (cd sim && go test -run '^$' -bench PublishToKafka -benchtime 20x .)
fi

if section intelligence "intelligence: deposit detection vs ground truth, lookups with 1M labelled addresses (issue 5)"; then
  (cd services/intelligence && go test -run '^$' -bench DepositDetection -benchtime 1x .)
  (cd services/intelligence && go test -run '^$' -bench AddressLookup -benchtime 1x -v .)
fi

if section user-labels "user-labels: label reads with 10,000 labels, 1,000-address internal lookup (issue 7)"; then
  (cd services/user-labels && go test -run '^$' -bench . -benchtime 500x ./internal/http/)
fi

if section transfers "transfers: ingest rate vs raw COPY and query latency at ${BENCH_ROWS:-10000000} rows (issue 6)"; then
  if [ -n "${BENCH_TRANSFERS_BASELINE:-}" ]; then
    bash scripts/bench-transfers-baseline.sh
  else
    (cd services/transfers && go run ./cmd/transfers-bench)
  fi
fi

if section balances "balances: observation throughput vs raw COPY and query latency at ${BENCH_BAL_ADDRESSES:-1000000} addresses (issue 25)"; then
  (cd services/balances && go run ./cmd/balances-bench)
fi

if section token-analytics "token-analytics: flow rollup vs raw COPY, /token/top over ${BENCH_TA_TOKENS:-5000} tokens with a month of hourly rollups, top_flow, volume, trending over years of price history (issue 26)"; then
  (cd services/token-analytics && go run ./cmd/token-analytics-bench)
fi

if section stream-fanout "stream-fanout: clients with mixed filters at a fixed transfer rate, indexed vs naive matcher vs Centrifugo v6 (issue 27)"; then
  (cd services/stream-fanout && go test -run '^$' -bench Process -benchtime 2000x ./internal/engine/)
  (cd services/stream-fanout && go run ./cmd/stream-bench)
fi
