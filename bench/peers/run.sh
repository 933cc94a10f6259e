#!/usr/bin/env bash
# Runs the peer comparison: builds one binary per peer, starts the mock
# model once in its own process on 127.0.0.1, runs every peer at each
# concurrency level several times (after a warm-up inside each run), and
# prints the machine, then markdown tables of the medians relative to the
# bare go-openai loop.
#
#   ./run.sh            # short run, under three minutes on 2 cores
#   ./run.sh -long      # more turns and repetitions
#
# Environment: TURNS, WARMUP, REPS, LEVELS ("1 16") and PEERS override the
# defaults; OUT names the directory for binaries and raw results (default: a
# fresh temporary directory, kept and printed at the end). PEERS lists
# name:build-tag pairs, or build tags alone (the peer then names itself):
#
#   PEERS='bare bare_stream agcore_runtime agcore_runtime_disk' ./run.sh
set -euo pipefail
cd "$(dirname "$0")"

long=0
for arg in "$@"; do
	case "$arg" in
	-long | --long) long=1 ;;
	*) echo "usage: $0 [-long]" >&2; exit 2 ;;
	esac
done
if [[ $long == 1 ]]; then
	: "${TURNS:=10000}" "${WARMUP:=1000}" "${REPS:=9}"
else
	: "${TURNS:=1000}" "${WARMUP:=200}" "${REPS:=5}"
fi
: "${LEVELS:=1 16}"
# name:build-tag, baseline first.
: "${PEERS:=bare:bare bare-stream:bare_stream agcore-loop:agcore_loop agcore-runtime:agcore_runtime agcore-runtime-reuse:agcore_runtime_reuse agcore-runtime-disk:agcore_runtime_disk eino-react:eino_react eino-adk:eino_adk langchaingo:langchaingo}"
: "${OUT:=$(mktemp -d -t agcore-peers.XXXXXX)}"
mkdir -p "$OUT/bin"
results="$OUT/results.jsonl"
: >"$results"

echo "building into $OUT/bin" >&2
go build -o "$OUT/bin/mock" ./cmd/mock
go build -o "$OUT/bin/report" ./cmd/report
names=()
for p in $PEERS; do
	name=${p%%:*} tag=${p##*:}
	if ! go build -tags "$tag" -o "$OUT/bin/$name" ./cmd/peer; then
		echo "skipping $name: it does not build" >&2
		continue
	fi
	if [[ $p != *:* ]]; then
		# A build tag alone: the peer says its name.
		real=$("$OUT/bin/$name" -name)
		if [[ $real != "$name" ]]; then
			mv "$OUT/bin/$name" "$OUT/bin/$real"
			name=$real
		fi
	fi
	names+=("$name")
done

"$OUT/bin/mock" -addr 127.0.0.1:0 >"$OUT/mock.url" &
mock=$!
trap 'kill "$mock" 2>/dev/null || true; wait "$mock" 2>/dev/null || true' EXIT
url=""
for _ in $(seq 100); do
	url=$(head -n1 "$OUT/mock.url" 2>/dev/null || true)
	[[ -n $url ]] && break
	sleep 0.05
done
[[ -n $url ]] || { echo "the mock did not start" >&2; exit 1; }
echo "mock at $url; $REPS runs x ${#names[@]} peers x concurrency {$LEVELS}, $TURNS turns after $WARMUP warm-up" >&2

for rep in $(seq "$REPS"); do
	for c in $LEVELS; do
		# Rotate the order of the peers every repetition, so that no peer
		# always runs first (or right after the same neighbour).
		n=${#names[@]}
		for i in $(seq 0 $((n - 1))); do
			name=${names[$(((i + rep) % n))]}
			"$OUT/bin/$name" -url "$url" -turns "$TURNS" -warmup "$WARMUP" -concurrency "$c" >>"$results"
		done
	done
	echo "repetition $rep/$REPS done" >&2
done

echo "## Machine"
echo
echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) logical CPUs"
echo "- $(go version)"
echo "- kernel $(uname -sr)"
echo "- $REPS runs per peer and concurrency, each $TURNS measured turns after $WARMUP warm-up turns"
echo
order=$(IFS=,; echo "${names[*]}")
# Streaming peers are compared with the streaming loop, and the runtime on
# disk with the same runtime in memory, when those ran.
against=""
for pair in agcore-runtime=bare-stream agcore-runtime-reuse=bare-stream agcore-runtime-disk=agcore-runtime-reuse; do
	peer=${pair%%=*} base=${pair##*=}
	[[ " ${names[*]} " == *" $peer "* && " ${names[*]} " == *" $base "* ]] && against+="${against:+,}$pair"
done
if [[ " ${names[*]} " == *" agcore-runtime-disk "* && " ${names[*]} " != *" agcore-runtime-reuse "* && " ${names[*]} " == *" bare-stream "* ]]; then
	against+="${against:+,}agcore-runtime-disk=bare-stream"
fi
"$OUT/bin/report" -baseline bare -against "$against" -order "$order" "$results"
echo
echo "raw results: $results" >&2
