#!/usr/bin/env bash
# Runs agcore's whole test suite, offline once its test peers are installed.
# Arguments are passed to `go test` (for example: scripts/test.sh -race, or
# scripts/test.sh -run TestKill ./actors).
#
# The MCP integration tests talk to real MCP servers from the npm registry,
# pinned in toolsys/mcp/testdata/peers/package-lock.json, and run the
# official MCP conformance suite pinned in
# toolsys/mcp/testdata/conformance/package-lock.json; they are installed
# here with `npm ci` the first time (or when a lock file changes).
set -euo pipefail
cd "$(dirname "$0")/.."

# The official MCP conformance suite, with the Node 22 it needs, is pinned
# the same way in toolsys/mcp/testdata/conformance.
for peers in toolsys/mcp/testdata/peers toolsys/mcp/testdata/conformance; do
	if [ -f "$peers/package-lock.json" ]; then
		stamp="$peers/node_modules/.agcore-lock"
		if ! cmp -s "$peers/package-lock.json" "$stamp" 2>/dev/null; then
			if command -v npm >/dev/null 2>&1; then
				echo "installing MCP test peers (npm ci in $peers)" >&2
				(cd "$peers" && npm ci --no-audit --no-fund --loglevel=error)
				cp "$peers/package-lock.json" "$stamp"
			else
				echo "npm not found: MCP integration tests will be skipped" >&2
			fi
		fi
	fi
done

pkgs=()
for a in "$@"; do
	case "$a" in ./*) pkgs+=("$a") ;; esac
done
if [ ${#pkgs[@]} -eq 0 ]; then
	go test "$@" ./...
else
	go test "$@"
fi
