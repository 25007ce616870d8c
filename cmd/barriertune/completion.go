package main

import (
	"github.com/spf13/cobra"
)

// registerCompletions makes the shell complete the values of the named
// flags from fixed lists (algorithms, policies, methods, formats).
func registerCompletions(cmd *cobra.Command, values map[string][]string) {
	for flag, vals := range values {
		vals := vals
		err := cmd.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return vals, cobra.ShellCompDirectiveNoFileComp
		})
		if err != nil {
			panic(err) // programmer error: the flag does not exist or has a completion already
		}
	}
}
