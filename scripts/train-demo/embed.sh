#!/bin/sh
# Packs the trained demo in DIR (default bin/demo-model) as the splash-demo
# the binary embeds: cmd/splash/demo/splash-demo (the target and its draft
# model) and, when the DFlash draft packs onto the target,
# cmd/splash/demo/splash-demo-dflash (the target and its DFlash draft), every
# file gzip-compressed (-n: no name or time, so the same weights give the
# same bytes). splash-demo-dflash keeps only the files that differ from
# splash-demo's: Splash extracts it over them (cmd/splash/demopackage.go).
# QUANT (default q8) is the weight matrices' type.
set -e
cd "$(dirname "$0")/../.."
DIR=${1:-bin/demo-model}
QUANT=${2:-q8}
go build -o "$DIR/splash" ./cmd/splash
embed() { # NAME DRAFT_DIR
	rm -rf "$DIR/pack-$1" "cmd/splash/demo/$1"
	"$DIR/splash" pack --quant "$QUANT" --name splash-demo --draft "$2" "$DIR/target" "$DIR/pack-$1" || return 1
	(cd "$DIR/pack-$1" && find . -type f | sort) | while read -r f; do
		mkdir -p "$(dirname "cmd/splash/demo/$1/$f")"
		gz="cmd/splash/demo/$1/$f.gz"
		gzip -9 -n -c "$DIR/pack-$1/$f" >"$gz"
		if [ "$1" != splash-demo ] && cmp -s "$gz" "cmd/splash/demo/splash-demo/$f.gz"; then
			rm "$gz"
		fi
	done
	rm -rf "$DIR/pack-$1"
}
embed splash-demo "$DIR/draft"
if [ -d "$DIR/dflash" ] && ! embed splash-demo-dflash "$DIR/dflash"; then
	rm -rf "cmd/splash/demo/splash-demo-dflash"
	echo "embed: the DFlash draft does not pack onto this target; splash-demo-dflash is not embedded" >&2
fi
du -b -s cmd/splash/demo/splash-demo*
# The issue's budget for the trained demo in the binary.
total=$(du -b -s -c cmd/splash/demo/splash-demo* | tail -n 1 | cut -f 1)
if [ "$total" -gt 20000000 ]; then
	echo "embed: the packages take $total bytes, over the 20 MB budget; try DEMO_QUANT=q8" >&2
	exit 1
fi
