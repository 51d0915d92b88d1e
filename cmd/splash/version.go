package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/peterbourgon/ff/v4"
)

// newVersionCmd is `splash version`: the build (module version and VCS
// revision when the binary was built from a checkout), the Go toolchain and
// platform, and the compute kernels this machine selects, so a bug report
// carries everything needed to reproduce a speed or numerics difference.
func newVersionCmd(s *stdio) *ff.Command {
	return &ff.Command{
		Name:      "version",
		Usage:     "splash version",
		ShortHelp: "print the build, platform and the kernels this CPU selects",
		Flags:     ff.NewFlagSet("version"),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return errors.New("version: takes no arguments")
			}
			d, err := chooseDevice("auto", 1, false)
			if err != nil {
				return err
			}
			be, err := d.New()
			if err != nil {
				return err
			}
			defer be.Close()
			fmt.Fprintf(s.out, "splash %s\n%s %s/%s, %d CPUs, kernels %s\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH,
				runtime.NumCPU(), be.Name())
			return nil
		},
	}
}

// buildVersion is the module version, or the VCS revision (with "+dirty"
// for uncommitted changes) for a binary built from a checkout.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown build)"
	}
	v := info.Main.Version
	var rev, dirty string
	for _, st := range info.Settings {
		switch st.Key {
		case "vcs.revision":
			rev = st.Value
		case "vcs.modified":
			if st.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return fmt.Sprintf("%s (%s%s)", v, rev, dirty)
	}
	return v
}
