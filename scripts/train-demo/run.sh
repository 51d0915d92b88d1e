#!/bin/sh
# Trains the splash-demo models from GOROOT into OUT (default
# bin/demo-model) and checks them against Splash's Go code. Steps whose
# output exists are skipped: remove OUT to start over. Extra arguments go
# to train.py (e.g. --steps 1500 --draft-steps 1500 --dflash-steps 500
# --threads 2).
set -e
cd "$(dirname "$0")/../.."
OUT=${1:-bin/demo-model}
[ $# -gt 0 ] && shift
PY=/usr/bin/python3
$PY scripts/train-demo/train.py --out "$OUT" "$@"
go build -o "$OUT/splash" ./cmd/splash
$PY scripts/train-demo/verify.py "$OUT/splash" "$OUT/corpus.jsonl" "$OUT/target" "$OUT/draft" "$OUT/dflash"
