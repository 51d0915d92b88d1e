# Splash — developer entry points. `make test` is what CI runs.
GO ?= go
PKGS := ./...

.PHONY: build run test fuzz-short bench gobench lint fmt

build:
	$(GO) build -o bin/splash ./cmd/splash

run:
	$(GO) run ./cmd/splash serve

test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 30m $(PKGS)
	$(MAKE) fuzz-short

# Every request parser and the streaming decoders, fuzzed a few seconds each.
FUZZ_HTTP := FuzzChatRequest FuzzMessagesRequest FuzzCompletionsRequest FuzzResponsesRequest FuzzTokenizeRequest FuzzThinkSplitter
fuzz-short:
	for f in $(FUZZ_HTTP); do $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 3s ./http/ || exit 1; done
	$(GO) test -run '^$$' -fuzz '^FuzzStreamDecoder$$' -fuzztime 3s ./tokenizer/

# A standard, bounded `splash bench` sweep against a Splash server started with
# the embedded demo model (MODEL=DIR for another); results in bench/results/.
bench:
	SWEEP=$${SWEEP:-1,2,4,8} REQUESTS=$${REQUESTS:-16} DURATION=$${DURATION:-30s} \
	INPUT_LEN=$${INPUT_LEN:-128} OUTPUT_LEN=$${OUTPUT_LEN:-32} sh bench/run-splash.sh

# Go benchmarks of every package (short).
gobench:
	$(GO) test -run '^$$' -bench . -benchtime 3x $(PKGS)

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')
