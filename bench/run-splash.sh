#!/bin/sh
# run-splash.sh: the standard `splash bench` sweep, for `make bench`.
#
# It builds splash, starts `splash serve` on a loopback port with the model in
# MODEL, waits until the server lists its models, runs the standard sweep and
# writes the JSON report and its plots under bench/results/, then stops the
# server. With BASE_URL set it starts nothing and measures that server
# instead (llama.cpp, vLLM, Ollama, LM Studio, or a Splash already running),
# with the very same sweep, so the two reports compare:
#
#   MODEL=path/to/package bench/run-splash.sh
#   BASE_URL=http://127.0.0.1:8081 LABEL=llamacpp bench/run-splash.sh
#   go run ./cmd/splash bench --compare bench/results/splash.json bench/results/llamacpp.json
#
# Settings (environment): MODEL (default: the embedded splash-demo), PORT (18080), SERVE_ARGS (extra flags for
# splash serve), BASE_URL, LABEL (splash), OUT (bench/results), SWEEP
# (1,2,4,8,16,32,64), REQUESTS (64 per step), DURATION (60s per step),
# INPUT_LEN (512), OUTPUT_LEN (128), API (chat), WORKLOAD (synthetic),
# EXTRA (more splash bench flags, e.g. "--slo ttft=1s,tpot=50ms").
set -eu

cd "$(dirname "$0")/.."
PORT=${PORT:-18080}
LABEL=${LABEL:-splash}
OUT=${OUT:-bench/results}
SWEEP=${SWEEP:-1,2,4,8,16,32,64}
REQUESTS=${REQUESTS:-64}
DURATION=${DURATION:-60s}
INPUT_LEN=${INPUT_LEN:-512}
OUTPUT_LEN=${OUTPUT_LEN:-128}
API=${API:-chat}
WORKLOAD=${WORKLOAD:-synthetic}
GO=${GO:-go}

mkdir -p bin "$OUT"
$GO build -o bin/splash ./cmd/splash

if [ -z "${BASE_URL:-}" ]; then
	BASE_URL="http://127.0.0.1:$PORT"
	# Without MODEL, splash serves its embedded demo model.
	# shellcheck disable=SC2086 # SERVE_ARGS is a list of flags
	bin/splash serve ${MODEL:+--model "$MODEL"} --host 127.0.0.1 --port "$PORT" ${SERVE_ARGS:-} &
	server=$!
	trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT INT TERM
	tries=0
	until curl -sf "$BASE_URL/v1/models" >/dev/null 2>&1; do
		tries=$((tries + 1))
		if [ "$tries" -gt 240 ] || ! kill -0 "$server" 2>/dev/null; then
			echo "run-splash.sh: splash serve did not come up on $BASE_URL" >&2
			exit 1
		fi
		sleep 0.5
	done
fi

# shellcheck disable=SC2086 # EXTRA is a list of flags
bin/splash bench --base-url "$BASE_URL" --api "$API" --workload "$WORKLOAD" \
	--concurrency "$SWEEP" --requests "$REQUESTS" --duration "$DURATION" \
	--input-len "$INPUT_LEN" --output-len "$OUTPUT_LEN" --seed 0 \
	--json "$OUT/$LABEL.json" --plot "$OUT/$LABEL.svg" --plot "$OUT/$LABEL.png" ${EXTRA:-}
echo "run-splash.sh: wrote $OUT/$LABEL.json, .svg and .png" >&2
