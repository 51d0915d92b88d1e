package model

import (
	"errors"
	"fmt"
	"sort"

	"github.com/splash-inference/splash/metal"
)

// tensorSet is a Tensors over memory-mapped files it owns.
type tensorSet struct {
	tensors  map[string]*metal.Tensor
	bad      map[string]error // present but unusable (dtype or rank)
	releases []func() error
}

func newTensorSet() *tensorSet {
	return &tensorSet{tensors: map[string]*metal.Tensor{}, bad: map[string]error{}}
}

func (s *tensorSet) Tensor(name string) (*metal.Tensor, error) {
	if t, ok := s.tensors[name]; ok {
		return t, nil
	}
	if err, ok := s.bad[name]; ok {
		return nil, err
	}
	return nil, fmt.Errorf("model: no tensor %s", name)
}

func (s *tensorSet) Names() []string {
	names := make([]string, 0, len(s.tensors))
	for n := range s.tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Close unmaps every file; tensors must not be used afterwards.
func (s *tensorSet) Close() error {
	var errs []error
	for _, r := range s.releases {
		errs = append(errs, r())
	}
	s.releases, s.tensors = nil, nil
	return errors.Join(errs...)
}

// NewMemTensors returns a Tensors over tensors already in memory (random
// demo models, tests).
func NewMemTensors(m map[string]*metal.Tensor) Tensors {
	set := newTensorSet()
	for k, v := range m {
		set.tensors[k] = v
	}
	return set
}
