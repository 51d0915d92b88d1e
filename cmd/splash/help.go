package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/peterbourgon/ff/v4"
	"github.com/peterbourgon/ff/v4/ffhelp"
)

// envPrefix is the prefix of the environment variables that set flags:
// --max-context is also SPLASH_MAX_CONTEXT.
const envPrefix = "SPLASH"

// envVar is the environment variable that sets a flag, named the way ff
// derives it (upper case, dashes to underscores, prefixed).
func envVar(flag string) string {
	return envPrefix + "_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(flag))
}

// helpText is `splash [CMD] --help`: ff's command help, with a flags table
// that also names each flag's environment variable, so a user configuring
// a service finds SPLASH_* names without reading the source.
func helpText(cmd *ff.Command) string {
	var sb strings.Builder
	var help ffhelp.Help
	title := cmd.Name
	if cmd.ShortHelp != "" {
		title += " -- " + cmd.ShortHelp
	}
	help = append(help, ffhelp.NewSection("COMMAND", title))
	if cmd.Usage != "" {
		help = append(help, ffhelp.NewSection("USAGE", cmd.Usage))
	}
	if cmd.LongHelp != "" {
		help = append(help, ffhelp.NewUntitledSection(cmd.LongHelp))
	}
	if len(cmd.Subcommands) > 0 {
		help = append(help, ffhelp.NewSubcommandsSection(cmd.Subcommands))
	}
	sb.WriteString(help.String())
	if lines := flagLines(cmd.Flags); len(lines) > 0 {
		sb.WriteString("\n" + ffhelp.NewSection("FLAGS (flag, environment variable, meaning)", lines...).String())
	}
	return sb.String()
}

// flagLines renders one aligned line per flag: spec, env var, usage and
// default.
func flagLines(fs ff.Flags) []string {
	if fs == nil {
		return nil
	}
	var buf strings.Builder
	tw := tabwriter.NewWriter(&buf, 0, 2, 2, ' ', 0)
	n := 0
	fs.WalkFlags(func(f ff.Flag) error {
		name, ok := f.GetLongName()
		if !ok {
			return nil
		}
		spec := "--" + name
		if p := f.GetPlaceholder(); p != "" {
			spec += " " + p
		}
		usage := f.GetUsage()
		if def := f.GetDefault(); def != "" {
			usage += fmt.Sprintf(" (default: %s)", def)
		}
		fmt.Fprintf(tw, "%s\t$%s\t%s\n", spec, envVar(name), usage)
		n++
		return nil
	})
	tw.Flush()
	if n == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}
