package hub

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/splash-inference/splash/model"
)

// Checkpoint files besides the weights, fetched when the repository has them.
const (
	configFile       = "config.json"
	indexFile        = "model.safetensors.index.json"
	singleWeights    = "model.safetensors"
	tokenizerFile    = "tokenizer.json"
	tokenizerConfig  = "tokenizer_config.json"
	generationConfig = "generation_config.json"
)

// optionalCheckpointFiles are fetched when present and not required.
var optionalCheckpointFiles = [...]string{tokenizerFile, tokenizerConfig, generationConfig}

// fileLister reads small metadata files (splash.json, the shard index) while
// choosing what else to fetch: from the snapshot on disk, or downloaded first.
type fileLister func(name string) ([]byte, error)

// modelKind says what a repository holds.
type modelKind int

const (
	kindUnsupported modelKind = iota
	kindPackage
	kindCheckpoint
)

// classify tells a package from a checkpoint by its file names.
func classify(names []string, has func(string) bool) modelKind {
	switch {
	case has(model.ManifestName):
		return kindPackage
	case has(configFile) && (has(indexFile) || has(singleWeights) || len(topLevelSafetensors(has, names)) > 0):
		return kindCheckpoint
	}
	return kindUnsupported
}

// topLevelSafetensors lists *.safetensors in the repository root from names
// Weights in subfolders (original/, onnx/...) are
// other formats or duplicates and are never fetched.
func topLevelSafetensors(has func(string) bool, names []string) []string {
	var out []string
	for _, n := range names {
		if !strings.Contains(n, "/") && strings.HasSuffix(n, ".safetensors") && has(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// neededFiles lists every file a model in this repository needs, given the
// repository's file names and a way to read the small metadata files. The
// result is sorted, metadata first.
func neededFiles(names []string, read fileLister) ([]string, error) {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	has := func(n string) bool { return set[n] }
	switch classify(names, has) {
	case kindPackage:
		return packageFiles(has, read)
	case kindCheckpoint:
		return checkpointFiles(has, names, read)
	}
	return nil, fmt.Errorf("%w: no %s, and no %s with safetensors weights", ErrUnsupported, model.ManifestName, configFile)
}

func packageFiles(has func(string) bool, read fileLister) ([]string, error) {
	raw, err := read(model.ManifestName)
	if err != nil {
		return nil, err
	}
	var m model.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: bad %s: %v", ErrUnsupported, model.ManifestName, err)
	}
	want := map[string]bool{}
	for name := range m.Files {
		want[name] = true
	}
	for _, name := range []string{m.Target.File, m.Tokenizer, m.ChatTemplate} {
		if name != "" {
			want[name] = true
		}
	}
	if m.Draft != nil && m.Draft.File != "" {
		want[m.Draft.File] = true
	}
	out := []string{model.ManifestName}
	for name := range want {
		if !safeRelPath(name) {
			return nil, fmt.Errorf("%w: %s lists %q outside the package", ErrUnsupported, model.ManifestName, name)
		}
		if !has(name) {
			return nil, fmt.Errorf("%w: %s lists %s, which the repository lacks", ErrUnsupported, model.ManifestName, name)
		}
		out = append(out, name)
	}
	sort.Strings(out[1:])
	return out, nil
}

func checkpointFiles(has func(string) bool, names []string, read fileLister) ([]string, error) {
	out := []string{configFile}
	var weights []string
	if has(indexFile) {
		out = append(out, indexFile)
		raw, err := read(indexFile)
		if err != nil {
			return nil, err
		}
		var index struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := json.Unmarshal(raw, &index); err != nil || len(index.WeightMap) == 0 {
			return nil, fmt.Errorf("%w: %s has no weight_map", ErrUnsupported, indexFile)
		}
		seen := map[string]bool{}
		for _, shard := range index.WeightMap {
			if seen[shard] {
				continue
			}
			seen[shard] = true
			if !safeRelPath(shard) || !has(shard) {
				return nil, fmt.Errorf("%w: %s names shard %q, which the repository lacks", ErrUnsupported, indexFile, shard)
			}
			weights = append(weights, shard)
		}
		sort.Strings(weights)
	} else {
		weights = topLevelSafetensors(has, names)
	}
	for _, n := range optionalCheckpointFiles {
		if has(n) {
			out = append(out, n)
		}
	}
	return append(out, weights...), nil
}

// safeRelPath accepts a clean relative slash path that stays inside the
// snapshot, so a hostile listing cannot write elsewhere.
func safeRelPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && !strings.Contains(p, "\\") && path.Clean(p) == p &&
		p != ".." && !strings.HasPrefix(p, "../")
}
