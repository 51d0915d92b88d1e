package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/splash-inference/splash/metal"
)

// PackageFormatVersion is the splash.json format this code reads and writes.
const PackageFormatVersion = 1

// ManifestName is the manifest's file name inside a package directory.
const ManifestName = "splash.json"

// Manifest is a package's splash.json (see the package documentation).
type Manifest struct {
	FormatVersion  int              `json:"format_version"`
	Name           string           `json:"name"`
	Quant          string           `json:"quant"`
	ContextLength  int              `json:"context_length"`
	DraftBlockSize int              `json:"draft_block_size,omitempty"`
	Target         WeightsManifest  `json:"target"`
	Draft          *WeightsManifest `json:"draft,omitempty"`
	// DraftKind is what Draft holds: "model" (a causal LM, the default
	// when absent), or "dflash" or "dflash2" (a block-diffusion draft whose
	// config is Draft.DFlash).
	DraftKind    string               `json:"draft_kind,omitempty"`
	Tokenizer    string               `json:"tokenizer"`
	ChatTemplate string               `json:"chat_template"` // tokenizer_config.json, which holds the template
	Files        map[string]FileEntry `json:"files"`
}

// WeightsManifest describes one model's weight file.
type WeightsManifest struct {
	Config  Config        `json:"config"`
	File    string        `json:"file"`
	Tensors []TensorEntry `json:"tensors"`
	// DFlash is a DFlash draft's config (its layers are Config).
	DFlash *DFlashConfig `json:"dflash,omitempty"`
}

// TensorEntry locates one tensor inside a weight file.
type TensorEntry struct {
	Name   string `json:"name"`
	DType  string `json:"dtype"`
	Rows   int    `json:"rows"`
	Cols   int    `json:"cols"`
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
}

// FileEntry is the size and SHA-256 of a file of the package.
type FileEntry struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// tensorAlign is the alignment of every tensor inside a weight file.
const tensorAlign = 64

// Package is an open Splash package: its manifest and memory-mapped weights.
type Package struct {
	Dir      string
	Manifest Manifest
	Target   Tensors
	Draft    Tensors // nil without a draft
}

// OpenOptions tune OpenPackage.
type OpenOptions struct {
	// SkipChecksums skips hashing the files (sizes are still checked).
	SkipChecksums bool
}

// OpenPackage reads and verifies a package's manifest, checks every file's
// size and (unless skipped) SHA-256, and maps the weights.
func OpenPackage(dir string, opts OpenOptions) (_ *Package, err error) {
	raw, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, fmt.Errorf("model: %s is not a Splash package: %w", dir, err)
	}
	p := &Package{Dir: dir}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p.Manifest); err != nil {
		return nil, fmt.Errorf("model: %s: bad %s: %w", dir, ManifestName, err)
	}
	m := &p.Manifest
	if m.FormatVersion != PackageFormatVersion {
		return nil, fmt.Errorf("model: %s: package format version %d, this Splash reads version %d", dir, m.FormatVersion, PackageFormatVersion)
	}
	if err := m.checkDraftKind(); err != nil {
		return nil, fmt.Errorf("model: %s: %w", dir, err)
	}
	for _, f := range []string{m.Target.File, m.Tokenizer} {
		if _, ok := m.Files[f]; !ok {
			return nil, fmt.Errorf("model: %s: manifest lists no checksum for %s", dir, f)
		}
	}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	names := make([]string, 0, len(m.Files))
	for n := range m.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	mapped := map[string][]byte{}
	var releases []func() error
	for _, name := range names {
		want := m.Files[name]
		if !filepath.IsLocal(name) {
			return nil, fmt.Errorf("model: %s: manifest names file %q outside the package", dir, name)
		}
		data, release, err := mapFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("model: %s: package file %s: %w", dir, name, err)
		}
		releases = append(releases, release)
		if int64(len(data)) != want.Size {
			closeAll(releases)
			return nil, fmt.Errorf("model: %s: %s has %d bytes, the manifest says %d (truncated or replaced)", dir, name, len(data), want.Size)
		}
		if !opts.SkipChecksums {
			sum := sha256.Sum256(data)
			if hex.EncodeToString(sum[:]) != want.SHA256 {
				closeAll(releases)
				return nil, fmt.Errorf("model: %s: %s fails its SHA-256 check (corrupted)", dir, name)
			}
		}
		mapped[name] = data
	}
	// Only weight files stay mapped, each owned by its tensor set; the other
	// files were only checked.
	release := map[string]func() error{}
	for i, name := range names {
		if name == m.Target.File || (m.Draft != nil && name == m.Draft.File) {
			release[name] = releases[i]
		} else {
			releases[i]()
		}
	}
	target, err := packageTensors(&m.Target, mapped, release)
	if err != nil {
		for _, r := range release {
			r()
		}
		return nil, fmt.Errorf("model: %s: %w", dir, err)
	}
	p.Target = target
	if m.Draft != nil {
		draft, err := packageTensors(m.Draft, mapped, release)
		if err != nil {
			if r := release[m.Draft.File]; r != nil {
				r()
			}
			return nil, fmt.Errorf("model: %s: draft: %w", dir, err)
		}
		p.Draft = draft
	}
	return p, nil
}

func closeAll(rs []func() error) {
	for _, r := range rs {
		r()
	}
}

// packageTensors slices the tensors of w out of its mapped weight file and
// takes ownership of the file's mapping (release[w.File]).
func packageTensors(w *WeightsManifest, mapped map[string][]byte, release map[string]func() error) (*tensorSet, error) {
	data, ok := mapped[w.File]
	if !ok {
		return nil, fmt.Errorf("weights file %s is not listed in files", w.File)
	}
	set := newTensorSet()
	for _, e := range w.Tensors {
		dt, err := metal.ParseDType(e.DType)
		if err != nil {
			return nil, fmt.Errorf("tensor %s: %w", e.Name, err)
		}
		if e.Offset < 0 || e.Size < 0 || e.Offset+e.Size > int64(len(data)) {
			return nil, fmt.Errorf("tensor %s: bytes [%d, %d) outside %s (%d bytes)", e.Name, e.Offset, e.Offset+e.Size, w.File, len(data))
		}
		t := &metal.Tensor{DType: dt, Rows: e.Rows, Cols: e.Cols, Data: data[e.Offset : e.Offset+e.Size : e.Offset+e.Size]}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("tensor %s: %w", e.Name, err)
		}
		set.tensors[e.Name] = t
	}
	set.releases = []func() error{release[w.File]}
	delete(release, w.File)
	return set, nil
}

// Close unmaps the weights.
func (p *Package) Close() error {
	var err error
	if p.Target != nil {
		err = p.Target.Close()
	}
	if p.Draft != nil {
		if e := p.Draft.Close(); err == nil {
			err = e
		}
	}
	return err
}

// Draft kinds of Manifest.DraftKind.
const (
	DraftKindModel = "model"
)

// checkDraftKind checks that the draft kind names what the draft holds.
func (m *Manifest) checkDraftKind() error {
	switch m.DraftKind {
	case "", DraftKindModel:
		if m.Draft != nil && m.Draft.DFlash != nil {
			return fmt.Errorf("draft has a dflash config but draft_kind %q", m.DraftKind)
		}
	case string(DFlash), string(DFlash2):
		if m.Draft == nil || m.Draft.DFlash == nil || string(m.Draft.DFlash.Kind) != m.DraftKind {
			return fmt.Errorf("draft_kind %q needs a draft with a dflash config of that kind", m.DraftKind)
		}
		m.Draft.DFlash.Layers = m.Draft.Config
		return m.Draft.DFlash.Check()
	default:
		return fmt.Errorf("draft_kind %q is not model, dflash or dflash2", m.DraftKind)
	}
	return nil
}
