#!/usr/bin/env bash
# Runs every fuzz target of the module for a while each, one after another.
#
#   scripts/fuzz.sh              10 seconds per target
#   scripts/fuzz.sh 60           60 seconds per target (the long CI form)
#   scripts/fuzz.sh 30 ./memory  only the targets under ./memory
#
# FUZZ_PARALLEL sets the number of fuzzing workers (default: go test's, one
# per CPU). A target that finds a failure writes the input under its
# package's testdata/fuzz/FuzzX/, where it becomes a regression case of the
# normal tests; the script goes on with the other targets, lists the ones that
# failed at the end and exits non-zero. A run that stops with an error but
# writes no input, while the corpus still passes, is reported and not
# counted as a failure (a race in Go's fuzzing coordinator, see below).
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-10}"
root="${2:-.}"
case "$secs" in
'' | *[!0-9]*)
	echo "usage: $0 [seconds-per-target] [package-dir]" >&2
	exit 2
	;;
esac

parallel=()
if [ -n "${FUZZ_PARALLEL:-}" ]; then
	parallel=(-parallel "$FUZZ_PARALLEL")
fi

failed=()
flaked=()
total=0
mod="$(go list -m -f '{{.Dir}}')"
# Only the module's own packages: nested modules and testdata are skipped.
while IFS= read -r dir; do
	pkg=".${dir#"$mod"}"
	for name in $(cat "$dir"/*_test.go 2>/dev/null | grep -oE '^func Fuzz[A-Za-z0-9_]+' | sed 's/^func //' | sort -u); do
		total=$((total + 1))
		echo "=== $name ($pkg, ${secs}s)"
		corpus="$dir/testdata/fuzz/$name"
		before="$(ls "$corpus" 2>/dev/null | wc -l)"
		if go test -run '^$' -fuzz "^${name}\$" -fuzztime "${secs}s" "${parallel[@]}" "$pkg"; then
			continue
		fi
		# Go's fuzzing coordinator (internal/fuzz, Go 1.26) can fail a target
		# with a bare "context deadline exceeded" when -fuzztime ends while a
		# worker is busy: its stop() checks only the workers' context, which
		# is cancelled just after the deadline's. A real finding writes its
		# input to the corpus; without one, the corpus is replayed to tell
		# them apart.
		after="$(ls "$corpus" 2>/dev/null | wc -l)"
		if [ "$after" = "$before" ] && go test -count=1 -run "^${name}\$" "$pkg" >/dev/null; then
			echo "--- $name: the fuzzing run stopped at its deadline without a finding; its corpus passes" >&2
			flaked+=("$name ($pkg)")
			continue
		fi
		failed+=("$name ($pkg)")
	done
done < <(go list -f '{{.Dir}}' "$root/...")

echo "fuzzed $total targets for ${secs}s each; ${#failed[@]} failed, ${#flaked[@]} stopped early without a finding"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'FAILED: %s\n' "${failed[@]}" >&2
	exit 1
fi
