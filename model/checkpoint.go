package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// OpenCheckpoint opens a Hugging Face checkpoint directory: config.json and
// either model.safetensors or the shards listed in
// model.safetensors.index.json, all memory-mapped.
func OpenCheckpoint(dir string) (cfg *Config, t Tensors, err error) {
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("model: %s is not a Hugging Face checkpoint: %w", dir, err)
	}
	if cfg, err = ParseHFConfig(raw); err != nil {
		return nil, nil, err
	}
	files, want, err := checkpointFiles(dir)
	if err != nil {
		return nil, nil, err
	}
	set := newTensorSet()
	defer func() {
		if err != nil {
			set.Close()
		}
	}()
	for _, f := range files {
		data, release, err := mapFile(filepath.Join(dir, f))
		if err != nil {
			return nil, nil, err
		}
		set.releases = append(set.releases, release)
		ts, bad, err := parseSafetensors(data, f)
		if err != nil {
			return nil, nil, err
		}
		for n, tt := range ts {
			if _, dup := set.tensors[n]; dup {
				return nil, nil, fmt.Errorf("model: tensor %s appears in more than one shard", n)
			}
			set.tensors[n] = tt
		}
		for n, e := range bad {
			set.bad[n] = e
		}
	}
	for name, file := range want {
		_, ok := set.tensors[name]
		if _, isBad := set.bad[name]; !ok && !isBad {
			return nil, nil, fmt.Errorf("model: model.safetensors.index.json lists tensor %s in %s, but that file does not hold it", name, file)
		}
	}
	return cfg, set, nil
}

// checkpointFiles returns the safetensors files of a checkpoint and, when
// sharded, the index's map from tensor name to file.
func checkpointFiles(dir string) ([]string, map[string]string, error) {
	idx, err := os.ReadFile(filepath.Join(dir, "model.safetensors.index.json"))
	if errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err != nil {
			return nil, nil, fmt.Errorf("model: %s has neither model.safetensors nor model.safetensors.index.json", dir)
		}
		return []string{"model.safetensors"}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	var index struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(idx, &index); err != nil {
		return nil, nil, fmt.Errorf("model: model.safetensors.index.json: %w", err)
	}
	if len(index.WeightMap) == 0 {
		return nil, nil, fmt.Errorf("model: model.safetensors.index.json has an empty weight_map")
	}
	seen := map[string]bool{}
	var files []string
	for _, f := range index.WeightMap {
		if filepath.Base(f) != f {
			return nil, nil, fmt.Errorf("model: model.safetensors.index.json names shard %q outside the checkpoint", f)
		}
		if !seen[f] {
			seen[f] = true
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				return nil, nil, fmt.Errorf("model: shard %s listed in model.safetensors.index.json is missing", f)
			}
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files, index.WeightMap, nil
}
