package metal

import (
	"errors"
	"strings"
	"testing"
)

func TestDriversChoose(t *testing.T) {
	gpu := Driver{Name: "gpu", Check: func(DeviceOptions) error { return errors.New("no device") }}
	cpu := Driver{Name: "cpu", Check: func(o DeviceOptions) error {
		if o.Kernels == "bogus" {
			return errors.New("unknown kernel set")
		}
		return nil
	}}
	ds := Drivers{gpu, cpu}
	for _, tc := range []struct {
		name    string
		opts    DeviceOptions
		want    string // driver chosen, or "" for an error containing errText
		errText string
	}{
		{"auto", DeviceOptions{}, "cpu", ""},
		{"cpu", DeviceOptions{}, "cpu", ""},
		{"gpu", DeviceOptions{}, "", "backend gpu: no device"},
		{"tpu", DeviceOptions{}, "", `unknown backend "tpu" (want auto or one of gpu, cpu)`},
		{"cpu", DeviceOptions{Kernels: "bogus"}, "", "backend cpu: unknown kernel set"},
		{"auto", DeviceOptions{Kernels: "bogus"}, "", "no backend can run here (gpu: no device; cpu: unknown kernel set)"},
	} {
		d, err := ds.Choose(tc.name, tc.opts)
		if tc.want != "" {
			if err != nil || d.Name != tc.want {
				t.Errorf("Choose(%q, %+v) = %q, %v; want %q", tc.name, tc.opts, d.Name, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.errText) {
			t.Errorf("Choose(%q, %+v) error %v, want one containing %q", tc.name, tc.opts, err, tc.errText)
		}
	}
}
