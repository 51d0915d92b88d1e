# Splash — developer entry points. `make test` is what CI runs.
GO ?= go
PKGS := ./...

.PHONY: build run test fuzz-short bench bench-kernels gobench agents-smoke lint fmt demo-model demo-embed demo-quality demo-speculation

build:
	$(GO) build -o bin/splash ./cmd/splash

run:
	$(GO) run ./cmd/splash serve

test:
	$(GO) vet $(PKGS)
	@sh scripts/install-chromium.sh || echo "SKIP: browser tests will skip: Chromium could not be installed"
	$(GO) test -count=1 -timeout 30m $(PKGS)
	@if sh scripts/install-qemu-user.sh; then GOARCH=arm64 $(GO) test -c -o bin/cpu-arm64.test ./metal/cpu && qemu-aarch64 bin/cpu-arm64.test -test.count=1; else echo "SKIP: metal/cpu arm64 tests: qemu-aarch64 is not installed and could not be installed"; fi
	$(MAKE) fuzz-short

# Every request parser, the streaming decoders, prompt encoding (content never
# yields a control token), the model config parsers and the image decoder,
# fuzzed a few seconds each.
# A count, not a duration: Go 1.26's fuzz coordinator can report a bare
# "context deadline exceeded" failure when a -fuzztime duration ends while a
# worker is mid-input (go.dev/issue/75804, fixed in Go 1.27); a count has no
# deadline to race, so a failure here is always a real finding.
FUZZ_N ?= 4000x
FUZZ_API := FuzzChatRequest FuzzMessagesRequest FuzzCompletionsRequest FuzzResponsesRequest FuzzTokenizeRequest FuzzThinkSplitter FuzzChatContentNeverControl
fuzz-short:
	for f in $(FUZZ_API); do $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZ_N) ./api/ || exit 1; done
	for f in FuzzStreamDecoder FuzzContentNeverControl; do $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZ_N) ./tokenizer/ || exit 1; done
	$(GO) test -run '^$$' -fuzz '^FuzzParseHybridConfig$$' -fuzztime $(FUZZ_N) ./model/
	$(GO) test -run '^$$' -fuzz '^FuzzParseVisionConfig$$' -fuzztime $(FUZZ_N) ./model/
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZ_N) ./imageprep/
	$(GO) test -run '^$$' -fuzz '^FuzzResolveData$$' -fuzztime $(FUZZ_N) ./mediaurl/
	$(GO) test -run '^$$' -fuzz '^FuzzExtract$$' -fuzztime $(FUZZ_N) ./pdfdoc/

# A standard, bounded `splash bench` sweep against a Splash server started with
# the embedded demo model (MODEL=DIR for another); results in bench/results/.
bench:
	SWEEP=$${SWEEP:-1,2,4,8} REQUESTS=$${REQUESTS:-16} DURATION=$${DURATION:-30s} \
	INPUT_LEN=$${INPUT_LEN:-128} OUTPUT_LEN=$${OUTPUT_LEN:-32} sh bench/run-splash.sh

# CPU kernel report: (a) memory read bandwidth probe, and the int8
# dot-product peak probe (DotPeak), (b) q4/q8 matrix-vector weight GB/s and
# fraction of (a) (frac: against the probe read between the products, the
# same statistic over the same time; bestfrac: against its best of three),
# (c) matrix-matrix GOPS at 8/64/512 rows and their
# fraction of the one-thread peak, (d) decode and prefill tokens/s of the
# random Qwen3-0.6B-shaped q4 package on one core and on all, prefill also
# as a fraction of the peak (the first run builds the package, ~30 s), on
# the KV cache serve picks by default (SPLASH_KV_CACHE_TYPE=f32|f16|bf16|q8
# for another), decode at a context of 4096 with each cache type, and a
# prompt chunk's cost by context with an f16 and a bf16 cache.
bench-kernels:
	$(GO) test -run '^$$' -bench 'MemReadBandwidth|DotPeak|MatVecDRAM|MatMatDRAM' -benchtime 30x ./metal/cpu/
	$(GO) test -run '^$$' -bench 'MatVec$$|MatMat' -benchtime 10x ./metal/cpu/
	$(GO) test -run '^$$' -bench 'Decode0_6BQ4|DecodeLong0_6BQ4' -benchtime 60x -cpu 1,$$(nproc) ./model/
	$(GO) test -run '^$$' -bench 'Prefill0_6BQ4' -benchtime 3x -cpu 1,$$(nproc) ./model/
	SPLASH_KV_CACHE_TYPE=f16 $(GO) test -run '^$$' -bench 'PrefillChunk0_6BQ4' -benchtime 3x ./model/
	SPLASH_KV_CACHE_TYPE=bf16 $(GO) test -run '^$$' -bench 'PrefillChunk0_6BQ4' -benchtime 3x ./model/

# The real Claude Code, Codex and OpenCode (from npm) against a Splash it
# starts with the demo model; needs the npm registry, so not part of test.
agents-smoke:
	sh scripts/agents-smoke.sh

# Go benchmarks of every package (short).
gobench:
	$(GO) test -run '^$$' -bench . -benchtime 3x $(PKGS)

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

# The full soak test (200 mixed requests from 32 clients, 20 hanging up
# mid-stream, against the real engine) and the HTTP overhead benchmarks.
.PHONY: soak
soak:
	$(GO) test -count=1 -run '^TestSoak$$' -v ./cmd/splash/
	$(GO) test -run '^$$' -bench 'Health|StreamOverhead' -benchtime 1s ./api/

# The splash-demo models trained from GOROOT (a Qwen3.5 hybrid target and a
# Qwen3 draft, with their tokenizer; README "Training the demo model") into
# DEMO_OUT, then checked against Splash's tokenizer, template and loaders.
# Installs Debian's python3-torch first; not part of test.
DEMO_OUT ?= bin/demo-model
demo-model:
	sh scripts/train-demo/install.sh
	sh scripts/train-demo/run.sh $(DEMO_OUT) $(DEMO_ARGS)

# Packs the trained demo in DEMO_OUT into cmd/splash/demo as the splash-demo
# the binary embeds (weights DEMO_QUANT, q8 by default); commit the result.
DEMO_QUANT ?= q8
demo-embed:
	sh scripts/train-demo/embed.sh $(DEMO_OUT) $(DEMO_QUANT)

# The README's demo tables (scripts/demo-tables): held-out bits per byte of
# the target in DEMO_OUT for each weight and KV cache type, and speculation
# (mean accepted length, tokens/s) of the embedded splash-demo per --spec.
demo-quality:
	$(GO) build -o bin/splash ./cmd/splash
	$(GO) run ./scripts/demo-tables quality -splash bin/splash -target $(DEMO_OUT)/target -corpus $(DEMO_OUT)/corpus.jsonl

demo-speculation:
	$(GO) build -o bin/splash ./cmd/splash
	$(GO) run ./scripts/demo-tables speculation -splash bin/splash -corpus $(DEMO_OUT)/corpus.jsonl
