package main

import "github.com/peterbourgon/ff/v4"

// flagsAnywhere is a command's flag set that takes its flags before,
// between and after the command's arguments (`splash pack SRC DST --quant
// q4`, as the README writes it, and `splash pack --quant q4 SRC DST`),
// where ff stops at the first argument. "--" still ends the flags: what
// follows it is arguments, whatever it looks like.
type flagsAnywhere struct{ *ff.FlagSet }

// Parse parses args with their flags moved first (flagsFirst).
func (fs flagsAnywhere) Parse(args []string) error {
	return fs.FlagSet.Parse(flagsFirst(fs.FlagSet, args))
}

// flagsFirst returns args with every flag and its value before the
// arguments, each in its order, then "--" and the arguments. What is a
// flag, and which take a value (--quant q4, --quant=q4; a boolean flag
// takes one only as --special=false or --special false), is what fs's own
// parser makes of args: it parses them a stretch of flags at a time, up to
// the next argument, and is reset after. When it fails (an unknown flag, a
// bad value, a value missing, --help) the result is the flags before the
// failure and args from it on, without the arguments before it, so that
// parsing the result fails at the same flag in the same way.
func flagsFirst(fs *ff.FlagSet, args []string) []string {
	var flags, rest []string
	defer fs.Reset()
	for len(args) > 0 {
		if fs.Reset() != nil || fs.Parse(args) != nil {
			return append(flags, args...)
		}
		left := fs.GetArgs()
		used := args[:len(args)-len(left)]
		if n := len(used); n > 0 && used[n-1] == "--" { // the end of the flags
			flags, rest = append(flags, used[:n-1]...), append(rest, left...)
			break
		}
		flags = append(flags, used...)
		if len(left) == 0 {
			break
		}
		rest, args = append(rest, left[0]), left[1:]
	}
	if len(rest) == 0 {
		return flags
	}
	return append(append(flags, "--"), rest...)
}
