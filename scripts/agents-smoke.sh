#!/bin/sh
# Runs the real coding agents (Claude Code, Codex, OpenCode, from npm at the
# versions pinned below) against a Splash server it starts with the embedded
# demo model on a free loopback port, through `splash claude|codex|opencode`.
# The demo model answers noise, so an agent's own verdict does not matter;
# what is checked is the wire: each agent's requests reach Splash and are
# answered 2xx (no 4xx/5xx added to /metrics), with prompt tokens counted.
# Hermes Agent is a Python package (PyPI), which this machine cannot reach:
# it is covered by the fake-executable tests only.
# Bounded: each agent runs at most $AGENT_TIMEOUT seconds (default 240).
set -eu
cd "$(dirname "$0")/.."
AGENTS_DIR=${AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/splash/agents}
AGENT_TIMEOUT=${AGENT_TIMEOUT:-240}
VERSIONS="@anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0 opencode-ai@1.18.33"

command -v npm >/dev/null || { echo "agents-smoke: npm not found (install Node.js)" >&2; exit 1; }
mkdir -p "$AGENTS_DIR"
if [ ! -x "$AGENTS_DIR/node_modules/.bin/opencode" ]; then
	echo "agents-smoke: installing $VERSIONS into $AGENTS_DIR"
	(cd "$AGENTS_DIR" && npm install --no-audit --no-fund --silent $VERSIONS)
fi
PATH="$AGENTS_DIR/node_modules/.bin:$PATH"; export PATH

server=
work=$(mktemp -d)
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/splash" ./cmd/splash
: >"$work/serve.out"
"$work/splash" serve --port 0 >"$work/serve.out" 2>"$work/serve.err" &
server=$!
i=0
until grep -q '^Ready: ' "$work/serve.out"; do
	i=$((i + 1)); [ $i -lt 120 ] || { cat "$work/serve.err"; echo "agents-smoke: server not ready" >&2; exit 1; }
	sleep 1
done
url=$(sed -n 's/^Ready: \(http:[^ ]*\).*/\1/p' "$work/serve.out")
port=${url##*:}
metric() { curl -s "$url/metrics" | awk -v k="$1" '$1 == k { print $2 }'; }

# Agents keep their state in HOME; give them a fresh one.
HOME="$work/home"; export HOME; mkdir -p "$HOME"
fail=0
check() { # name, command...
	name=$1; shift
	ok0=$(metric 'splash_http_responses_total{code="2xx"}'); bad0=$(( $(metric 'splash_http_responses_total{code="4xx"}') + $(metric 'splash_http_responses_total{code="5xx"}') ))
	p0=$(metric splash_prompt_tokens_total)
	timeout "$AGENT_TIMEOUT" "$@" >"$work/$name.out" 2>&1 || true
	sleep 2 # let the server count cancelled streams
	ok1=$(metric 'splash_http_responses_total{code="2xx"}'); bad1=$(( $(metric 'splash_http_responses_total{code="4xx"}') + $(metric 'splash_http_responses_total{code="5xx"}') ))
	p1=$(metric splash_prompt_tokens_total)
	printf '%-9s %3d answered 2xx, %d 4xx/5xx, %7.0f prompt tokens\n' "$name" $((ok1 - ok0)) $((bad1 - bad0)) "$(echo "$p1 - $p0" | bc)"
	if [ $((bad1 - bad0)) -ne 0 ] || [ "$(echo "$p1 > $p0" | bc)" != 1 ]; then
		echo "agents-smoke: $name FAILED; its output:" >&2; tail -20 "$work/$name.out" >&2; fail=1
	fi
}
CLAUDE_CODE_MAX_OUTPUT_TOKENS=16 check claude "$work/splash" claude --port "$port" -- -p "Say hi" --max-turns 1
check codex "$work/splash" codex --port "$port" -- exec --skip-git-repo-check "Say hi"
check opencode "$work/splash" opencode --port "$port" -- run "Say hi"
curl -s "$url/metrics" | grep -E '^splash_(prefix_cache_hit_tokens_total|kv_blocks_used|requests_running) '
exit $fail
