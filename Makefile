# Splash — developer entry points. `make test` is what CI runs.
GO ?= go
PKGS := ./...

.PHONY: build run test bench lint fmt

build:
	$(GO) build -o bin/splash ./cmd/splash

run:
	$(GO) run ./cmd/splash serve

test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 30m $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x $(PKGS)

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')
