package model

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/splash-inference/splash/metal"
)

// Source is an opened model on disk, a Splash package or a Hugging Face
// checkpoint, ready to build: its config and weights, and where its
// tokenizer files are (the directory itself in both cases).
type Source struct {
	Kind        string // "package" or "checkpoint"
	Dir         string
	Name        string
	Config      *Config
	Tensors     Tensors
	DraftConfig *Config // nil without a draft model
	Draft       Tensors
	// DraftKind is "model", "dflash" or "dflash2" (Manifest.DraftKind);
	// a DFlash draft's config is DFlash and it is built by BuildDFlash.
	DraftKind string
	DFlash    *DFlashConfig
	Package   *Package // nil for a checkpoint
}

// Open opens the package or checkpoint in dir, telling them apart by
// splash.json and config.json.
func Open(dir string, opts OpenOptions) (*Source, error) {
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil {
		p, err := OpenPackage(dir, opts)
		if err != nil {
			return nil, err
		}
		s := &Source{Kind: "package", Dir: dir, Name: p.Manifest.Name, Config: &p.Manifest.Target.Config,
			Tensors: p.Target, Draft: p.Draft, Package: p}
		if p.Manifest.Draft != nil {
			s.DraftConfig = &p.Manifest.Draft.Config
			s.DraftKind, s.DFlash = DraftKindModel, p.Manifest.Draft.DFlash
			if s.DFlash != nil {
				s.DraftKind = string(s.DFlash.Kind)
			}
		}
		return s, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err == nil {
		cfg, ts, err := OpenCheckpoint(dir)
		if err != nil {
			return nil, err
		}
		return &Source{Kind: "checkpoint", Dir: dir, Name: filepath.Base(filepath.Clean(dir)), Config: cfg, Tensors: ts}, nil
	}
	return nil, fmt.Errorf("model: %s is neither a Splash package (no %s) nor a Hugging Face checkpoint (no config.json)", dir, ManifestName)
}

// Build constructs the target model on be.
func (s *Source) Build(be metal.Backend) (Model, error) {
	return Architectures().Build(s.Config, s.Tensors, be)
}

// BuildVision constructs the vision tower of a model that has one
// (Config.Vision), or returns nil without one.
func (s *Source) BuildVision(be metal.Backend) (*VisionTower, error) {
	if s.Config.Vision == nil {
		return nil, nil
	}
	return NewVisionTower(s.Config.Vision, s.Tensors, VisionPrefix, be)
}

// BuildDraft constructs the draft model, or returns nil without one. A
// DFlash draft is not a Model: it is refused here (see BuildDFlash).
func (s *Source) BuildDraft(be metal.Backend) (Model, error) {
	if s.Draft == nil {
		return nil, nil
	}
	if s.DFlash != nil {
		return nil, fmt.Errorf("model: %s's draft is a %s draft, not a draft model", s.Name, s.DraftKind)
	}
	return Architectures().Build(s.DraftConfig, s.Draft, be)
}

// BuildDFlash binds the package's DFlash draft to target (built by
// Build), or returns nil without one.
func (s *Source) BuildDFlash(target Model, be metal.Backend) (*DFlashDraft, error) {
	if s.DFlash == nil {
		return nil, nil
	}
	return NewDFlashDraft(s.DFlash, s.Draft, target, be)
}

// Close releases the weights; models built from s must not be used after.
func (s *Source) Close() error {
	if s.Package != nil {
		return s.Package.Close()
	}
	return s.Tensors.Close()
}
