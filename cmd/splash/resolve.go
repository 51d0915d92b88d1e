package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/peterbourgon/ff/v4"

	"github.com/splash-inference/splash/model/hub"
)

// loadModelSpec loads --model: a package or checkpoint directory, or a
// Hugging Face repository (owner/repo[@revision]) resolved through the HF
// cache and downloaded when missing (see package hub). A checkpoint is
// packed into the cache first when cache is not nil, else served in place.
func loadModelSpec(ctx context.Context, s *stdio, spec string, cache *packCache) (*loadedModel, error) {
	dir, err := resolveModel(ctx, s, spec)
	if err != nil {
		return nil, err
	}
	// A directory names its model, except in the HF cache, where it is a
	// commit sha: there the repository does.
	name := filepath.Base(filepath.Clean(dir))
	if dir != spec {
		if ref, err := hub.ParseRef(spec); err == nil {
			name = ref.RepoID()
		}
	}
	if cache != nil {
		if dir, err = cache.packageFor(s, dir, name); err != nil {
			return nil, fmt.Errorf("model %s: %w", spec, err)
		}
	}
	m, err := loadModelDir(dir)
	if err != nil {
		return nil, err
	}
	if m.name == filepath.Base(filepath.Clean(dir)) {
		m.name = name
	}
	return m, nil
}

// resolveModel returns the directory spec names, downloading from the hub
// with a progress bar on stderr when the cache lacks it.
func resolveModel(ctx context.Context, s *stdio, spec string) (string, error) {
	opts := hub.OptionsFromEnv(os.Getenv)
	bar := &progressBar{w: s.err}
	opts.Progress = bar.update
	dir, err := hub.NewResolver(opts).Resolve(ctx, spec)
	bar.finish()
	if err != nil {
		return "", fmt.Errorf("model %s: %w", spec, err)
	}
	return dir, nil
}

// newPullCmd is `splash pull owner/repo[@revision]`: download a model into
// the HF cache ahead of `splash serve`, printing its snapshot directory.
func newPullCmd(s *stdio) *ff.Command {
	return &ff.Command{
		Name:      "pull",
		Usage:     "splash pull OWNER/REPO[@REVISION]",
		ShortHelp: "download a model from the Hugging Face hub into the HF cache",
		LongHelp: "Fetches only what Splash needs (a Splash package, or config.json, safetensors weights and tokenizer files),\n" +
			"resuming interrupted downloads. Reads HF_HUB_CACHE, HF_HOME, HF_ENDPOINT, HF_TOKEN and HF_HUB_OFFLINE.",
		Flags: ff.NewFlagSet("pull"),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) != 1 {
				return errors.New("pull: want exactly one OWNER/REPO[@REVISION]")
			}
			if _, err := os.Stat(args[0]); err == nil {
				return fmt.Errorf("pull: %s is a local directory; serve it with --model", args[0])
			}
			dir, err := resolveModel(ctx, s, args[0])
			if err != nil {
				return fmt.Errorf("pull: %w", err)
			}
			fmt.Fprintln(s.out, dir)
			return nil
		},
	}
}

// progressBar draws one line per file on w, redrawn in place with \r; it
// redraws only when the whole percentage changes, so a fast download does
// not flood a log file.
type progressBar struct {
	w       io.Writer
	file    string
	percent int
	drawn   bool
}

const barWidth = 30

func (b *progressBar) update(p hub.Progress) {
	if p.File != b.file {
		b.finish()
		b.file, b.percent = p.File, -1
	}
	pct := 100
	if p.Total > 0 {
		pct = int(p.Done * 100 / p.Total)
	}
	if pct == b.percent {
		return
	}
	b.percent = pct
	filled := pct * barWidth / 100
	count := ""
	if p.Files > 0 {
		count = fmt.Sprintf("[%d/%d] ", p.Index, p.Files)
	}
	fmt.Fprintf(b.w, "\r%s%s %s%s %3d%% %s/%s", count, p.File, strings.Repeat("█", filled), strings.Repeat("░", barWidth-filled),
		pct, mib(p.Done), mib(p.Total))
	b.drawn = true
}

// finish ends the current line.
func (b *progressBar) finish() {
	if b.drawn {
		fmt.Fprintln(b.w)
		b.drawn = false
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
