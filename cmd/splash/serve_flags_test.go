package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v4"

	"github.com/splash-inference/splash/metal/cpu"
)

// TestServeFlagsPrecedence: a flag beats its SPLASH_ variable, which beats
// the default; repeatable flags collect every value.
func TestServeFlagsPrecedence(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(f *serveFlags) bool
	}{
		{"default", nil, nil, func(f *serveFlags) bool {
			return f.port == 8000 && f.host == "127.0.0.1" && f.maxImagePixels == 4194304
		}},
		{"env", nil, map[string]string{"SPLASH_PORT": "9001", "SPLASH_MAX_CONTEXT": "100K", "SPLASH_API_KEY": "k"},
			func(f *serveFlags) bool { return f.port == 9001 && f.maxContext == "100K" && f.apiKey == "k" }},
		{"flag over env", []string{"--port", "9002"}, map[string]string{"SPLASH_PORT": "9001"}, func(f *serveFlags) bool { return f.port == 9002 }},
		{"repeats", []string{"--allowed-host", "a.example", "--allowed-host", "b.example"}, nil,
			func(f *serveFlags) bool { return slices.Equal(f.allowedHosts, []string{"a.example", "b.example"}) }},
		{"image pixels env", nil, map[string]string{"SPLASH_MAX_IMAGE_PIXELS": "1000000"}, func(f *serveFlags) bool { return f.maxImagePixels == 1000000 }},
		{"origins env", nil, map[string]string{"SPLASH_ALLOWED_ORIGIN": "http://localhost:3000"},
			func(f *serveFlags) bool { return slices.Equal(f.allowedOrigins, []string{"http://localhost:3000"}) }},
		{"connection caps env", nil, map[string]string{"SPLASH_MAX_CONNECTIONS": "100", "SPLASH_MAX_CONNECTIONS_PER_IP": "10"},
			func(f *serveFlags) bool { return f.maxConns == 100 && f.maxConnsPerIP == 10 }},
		{"bool env", nil, map[string]string{"SPLASH_NO_WEBUI": "true"}, func(f *serveFlags) bool { return f.noWebUI }},
		{"media defaults", nil, nil, func(f *serveFlags) bool {
			return !f.remoteMedia && f.maxMediaBytes == "32M" && f.maxPDFPages == 100
		}},
		{"media env", nil, map[string]string{"SPLASH_ALLOW_REMOTE_MEDIA": "true", "SPLASH_MAX_MEDIA_BYTES": "4M", "SPLASH_MAX_PDF_PAGES": "20"},
			func(f *serveFlags) bool { return f.remoteMedia && f.maxMediaBytes == "4M" && f.maxPDFPages == 20 }},
		{"media flags", []string{"--allow-remote-media", "--max-pdf-pages", "7"}, map[string]string{"SPLASH_MAX_PDF_PAGES": "20"},
			func(f *serveFlags) bool { return f.remoteMedia && f.maxPDFPages == 7 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"SPLASH_PORT", "SPLASH_MAX_CONTEXT", "SPLASH_API_KEY", "SPLASH_MAX_IMAGE_PIXELS", "SPLASH_NO_WEBUI",
				"SPLASH_ALLOWED_ORIGIN", "SPLASH_MAX_CONNECTIONS", "SPLASH_MAX_CONNECTIONS_PER_IP",
				"SPLASH_ALLOW_REMOTE_MEDIA", "SPLASH_MAX_MEDIA_BYTES", "SPLASH_MAX_PDF_PAGES"} {
				t.Setenv(k, tc.env[k])
			}
			var f serveFlags
			if err := ff.Parse(serveFlagSet(&f), tc.args, ff.WithEnvVarPrefix(envPrefix)); err != nil {
				t.Fatal(err)
			}
			if !tc.check(&f) {
				t.Fatalf("flags %+v", f)
			}
		})
	}
}

// TestServeRejectsBadFlagsBeforeLoading: every bad value is refused naming
// its flag, before the (here nonexistent) model is looked at.
func TestServeRejectsBadFlagsBeforeLoading(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--spec", "maybe"}, "--spec"},
		{[]string{"--port", "70000"}, "--port"},
		{[]string{"--max-image-pixels", "0"}, "--max-image-pixels"},
		{[]string{"--max-image-pixels", "-5"}, "--max-image-pixels"},
		{[]string{"--kv-block-size", "0"}, "--kv-block-size"},
		{[]string{"--max-running", "-1"}, "--max-running"},
		{[]string{"--max-context", "lots"}, "--max-context"},
		{[]string{"--max-memory", "12Q"}, "--max-memory"},
		{[]string{"--kv-memory", "-1G"}, "--kv-memory"},
		{[]string{"--max-body", "0"}, "--max-body"},
		{[]string{"--max-media-bytes", "0"}, "--max-media-bytes"},
		{[]string{"--max-media-bytes", "lots"}, "--max-media-bytes"},
		{[]string{"--max-pdf-pages", "0"}, "--max-pdf-pages"},
		{[]string{"--threads", "-2"}, "--threads"},
		{[]string{"--max-connections", "-1"}, "--max-connections"},
		{[]string{"--max-connections-per-ip", "-1"}, "--max-connections-per-ip"},
		{[]string{"--allowed-origin", "localhost:3000"}, "--allowed-origin"},
		{[]string{"--allowed-origin", "*"}, "--allowed-origin"},
		{[]string{"--tool-parser", "mistral"}, "--tool-parser"},
		{[]string{"--quant", "q2"}, "--quant"},
		{[]string{"--kv-cache-type", "q4"}, "--kv-cache-type"},
		{[]string{"--max-prefill-with-decode", "-1"}, "--max-prefill-with-decode"},
		{[]string{"--prefill-by-attention", "--max-prefill-with-decode", "0"}, "--prefill-by-attention"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var errw bytes.Buffer
			args := append([]string{"serve", "--model", "/nonexistent/model/dir"}, tc.args...)
			err := run(context.Background(), args, &stdio{in: strings.NewReader(""), out: &errw, err: &errw})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "nonexistent") {
				t.Fatalf("the model was looked at before the flags were checked: %v", err)
			}
		})
	}
}

// TestServeRejectsUnknownKernelsBeforeLoading: a SPLASH_KERNELS this CPU
// cannot run is refused, listing the sets it can, before the model loads;
// one it can run is taken.
func TestServeRejectsUnknownKernelsBeforeLoading(t *testing.T) {
	t.Setenv("SPLASH_KERNELS", "avx9000")
	var errw bytes.Buffer
	err := run(context.Background(), []string{"serve", "--model", "/nonexistent/model/dir"}, &stdio{in: strings.NewReader(""), out: &errw, err: &errw})
	if err == nil || !strings.Contains(err.Error(), "SPLASH_KERNELS=avx9000") || !strings.Contains(err.Error(), "portable") {
		t.Fatalf("err = %v, want one naming SPLASH_KERNELS and the sets this CPU runs", err)
	}
	if strings.Contains(err.Error(), "nonexistent") {
		t.Fatalf("the model was looked at before SPLASH_KERNELS was checked: %v", err)
	}
	for _, set := range cpu.KernelSets() {
		t.Setenv("SPLASH_KERNELS", set)
		if d, err := chooseDevice("auto", 0, false); err != nil || d.opts.Kernels != set || d.driver.Name != "cpu" {
			t.Errorf("SPLASH_KERNELS=%s: device %+v, error %v", set, d.opts, err)
		}
	}
}

// TestServeRejectsUnknownBackendBeforeLoading: --backend names a backend
// this build offers, or auto; anything else is refused, listing them,
// before the model loads.
func TestServeRejectsUnknownBackendBeforeLoading(t *testing.T) {
	for _, tc := range []struct {
		backend, want string
	}{
		{"tpu", `unknown backend "tpu" (want auto or one of cpu)`},
		{"cpu", "nonexistent"}, // chosen: the model is looked at next
		{"auto", "nonexistent"},
	} {
		var errw bytes.Buffer
		err := run(context.Background(), []string{"serve", "--backend", tc.backend, "--model", "/nonexistent/model/dir"}, &stdio{in: strings.NewReader(""), out: &errw, err: &errw})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--backend %s: err = %v, want one containing %q", tc.backend, err, tc.want)
		}
	}
}
