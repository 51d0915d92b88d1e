package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/splash-inference/splash/metal"
)

// PackOptions choose how Pack converts a checkpoint.
type PackOptions struct {
	Quant          metal.DType // F32, BF16, Q8 or Q4 for weight matrices
	Draft          string      // optional HF checkpoint of a draft model
	Name           string      // package name; defaults to the source directory's name
	DraftBlockSize int         // default speculative block size recorded in the manifest (default 4)
	Progress       io.Writer   // optional: one line per model packed
}

// PackStats summarises a Pack.
type PackStats struct {
	Tensors int
	Bytes   int64
	Elapsed time.Duration
}

// Pack converts the Hugging Face checkpoint in src into a Splash package in
// dst: weight matrices in opts.Quant (matrices whose width is not a multiple
// of metal.GroupSize fall back to bf16, or f32 for an f32 package), norm
// vectors in f32, each tensor 64-byte aligned in one weights file, plus the
// tokenizer files and a manifest with every file's SHA-256. The package is
// built in a temporary directory beside dst and renamed into place, so an
// interrupted Pack leaves nothing half-written; dst must not exist.
func Pack(src, dst string, opts PackOptions) (PackStats, error) {
	start := time.Now()
	var st PackStats
	switch opts.Quant {
	case metal.F32, metal.BF16, metal.Q8, metal.Q4:
	default:
		return st, fmt.Errorf("model: pack: quantization %s is not one of f32, bf16, q8, q4", opts.Quant)
	}
	if _, err := os.Stat(dst); err == nil {
		return st, fmt.Errorf("model: pack: %s already exists", dst)
	}
	if opts.Name == "" {
		opts.Name = filepath.Base(filepath.Clean(src))
	}
	if opts.DraftBlockSize == 0 {
		opts.DraftBlockSize = 4
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dst)), ".splash-pack-*")
	if err != nil {
		return st, fmt.Errorf("model: pack: %w", err)
	}
	defer os.RemoveAll(tmp)

	m := Manifest{FormatVersion: PackageFormatVersion, Name: opts.Name, Quant: opts.Quant.String(),
		DraftBlockSize: opts.DraftBlockSize, Tokenizer: "tokenizer.json", Files: map[string]FileEntry{}}
	target, err := packWeights(src, tmp, "target", opts.Quant, m.Files, &st, buildCheck)
	if err != nil {
		return st, err
	}
	m.Target = *target
	m.ContextLength = target.Config.MaxPositionEmbeddings
	progress(opts.Progress, "target", target, m.Files)
	if opts.Draft != "" {
		draft, kind, err := packDraft(src, opts.Draft, tmp, opts.Quant, m.Files, &st)
		if err != nil {
			return st, err
		}
		if draft.Config.VocabSize != target.Config.VocabSize {
			return st, fmt.Errorf("model: pack: draft vocab_size %d differs from the target's %d", draft.Config.VocabSize, target.Config.VocabSize)
		}
		m.Draft, m.DraftKind = draft, kind
		progress(opts.Progress, "draft", draft, m.Files)
	}
	for _, f := range []string{"tokenizer.json", "tokenizer_config.json", "generation_config.json", "preprocessor_config.json"} {
		err := copyHashed(filepath.Join(src, f), filepath.Join(tmp, f), f, m.Files)
		switch {
		case err == nil:
		case os.IsNotExist(err) && f != "tokenizer.json":
			continue
		default:
			return st, fmt.Errorf("model: pack: %s: %w", f, err)
		}
		if f == "tokenizer_config.json" {
			m.ChatTemplate = f
		}
	}
	raw, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, ManifestName), raw, 0o644); err != nil {
		return st, fmt.Errorf("model: pack: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return st, fmt.Errorf("model: pack: %w", err)
	}
	st.Elapsed = time.Since(start)
	return st, nil
}

func progress(w io.Writer, what string, wm *WeightsManifest, files map[string]FileEntry) {
	if w != nil {
		fmt.Fprintf(w, "packed %s: %s, %d tensors, %.1f MB\n", what, wm.Config.Architecture, len(wm.Tensors),
			float64(files[wm.File].Size)/1e6)
	}
}

// packDraft packs the draft checkpoint in draftDir as dir/draft: a causal
// LM (kind "model"), or a DFlash or DFlash2 draft, whose config is
// recorded and whose weights are checked against the target in src.
func packDraft(src, draftDir, dir string, quant metal.DType, files map[string]FileEntry, st *PackStats) (*WeightsManifest, string, error) {
	raw, err := os.ReadFile(filepath.Join(draftDir, "config.json"))
	if err != nil {
		return nil, "", fmt.Errorf("model: pack draft: %s is not a Hugging Face checkpoint: %w", draftDir, err)
	}
	var arch struct {
		Architectures []string `json:"architectures"`
	}
	if json.Unmarshal(raw, &arch) != nil || len(arch.Architectures) == 0 || !IsDFlashArchitecture(arch.Architectures[0]) {
		wm, err := packWeights(draftDir, dir, "draft", quant, files, st, buildCheck)
		return wm, DraftKindModel, err
	}
	dc, err := ParseDFlashConfig(raw)
	if err != nil {
		return nil, "", fmt.Errorf("model: pack draft: %w", err)
	}
	tcfg, tts, err := OpenCheckpoint(src)
	if err != nil {
		return nil, "", fmt.Errorf("model: pack draft: %w", err)
	}
	defer tts.Close()
	target, err := Architectures().Build(tcfg, tts, nil)
	if err != nil {
		return nil, "", fmt.Errorf("model: pack draft: target: %w", err)
	}
	wm, err := packWeights(draftDir, dir, "draft", quant, files, st, func(_ *Config, ts Tensors) error {
		_, err := NewDFlashDraft(dc, ts, target, nil)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	wm.DFlash = dc
	return wm, string(dc.Kind), nil
}

// buildCheck checks every tensor the config's architecture needs, and
// its vision tower's when it has one.
func buildCheck(cfg *Config, ts Tensors) error {
	if _, err := Architectures().Build(cfg, ts, nil); err != nil {
		return err
	}
	if cfg.Vision != nil {
		_, err := NewVisionTower(cfg.Vision, ts, VisionPrefix, nil)
		return err
	}
	return nil
}

// packWeights converts the checkpoint in src into dir/<sub>/weights.bin
// once check accepts its tensors.
func packWeights(src, dir, sub string, quant metal.DType, files map[string]FileEntry, st *PackStats, check func(*Config, Tensors) error) (*WeightsManifest, error) {
	cfg, ts, err := OpenCheckpoint(src)
	if err != nil {
		return nil, fmt.Errorf("model: pack %s: %w", sub, err)
	}
	defer ts.Close()
	if err := check(cfg, ts); err != nil {
		return nil, fmt.Errorf("model: pack %s: %w", sub, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
		return nil, fmt.Errorf("model: pack: %w", err)
	}
	rel := sub + "/weights.bin"
	f, err := os.Create(filepath.Join(dir, rel))
	if err != nil {
		return nil, fmt.Errorf("model: pack: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	w := io.MultiWriter(f, h)
	wm := &WeightsManifest{Config: *cfg, File: rel}
	var off int64
	var pad [tensorAlign]byte
	tensors, err := packTensors(cfg, ts)
	if err != nil {
		return nil, fmt.Errorf("model: pack %s: %w", sub, err)
	}
	for _, pt := range tensors {
		name, t := pt.name, pt.t
		d := packedType(name, t, quant)
		q, err := metal.Quantize(d, t.Dequantize(), t.Rows, t.Cols)
		if err != nil {
			return nil, fmt.Errorf("model: pack %s: tensor %s: %w", sub, name, err)
		}
		if p := (tensorAlign - off%tensorAlign) % tensorAlign; p > 0 {
			w.Write(pad[:p])
			off += p
		}
		if _, err := w.Write(q.Data); err != nil {
			return nil, fmt.Errorf("model: pack: %w", err)
		}
		wm.Tensors = append(wm.Tensors, TensorEntry{Name: name, DType: d.String(), Rows: t.Rows, Cols: t.Cols, Offset: off, Size: int64(len(q.Data))})
		off += int64(len(q.Data))
		st.Tensors++
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("model: pack: %w", err)
	}
	st.Bytes += off
	files[rel] = FileEntry{Size: off, SHA256: hex.EncodeToString(h.Sum(nil))}
	return wm, nil
}

func copyHashed(src, dst, rel string, files map[string]FileEntry) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if err != nil {
		out.Close()
		return err
	}
	files[rel] = FileEntry{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	return out.Close()
}
