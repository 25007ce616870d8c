package child

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// BuildLimit bounds one compilation (Compile).
const BuildLimit = time.Minute

// Compile writes src to dir/name.c and compiles it with the compiler cc,
// args first (flags, optimisation, libraries' options), then -o dir/name
// and the source, as a bounded child (Run) of at most BuildLimit. It
// returns the program's path; when the compiler fails, its output too,
// for the caller to say why.
func Compile(ctx context.Context, cc string, src []byte, dir, name string, args ...string) (string, Output, error) {
	file, bin := filepath.Join(dir, name+".c"), filepath.Join(dir, name)
	if err := os.WriteFile(file, src, 0o644); err != nil {
		return "", Output{}, fmt.Errorf("writing %s: %w", file, err)
	}
	bctx, cancel := context.WithTimeout(ctx, BuildLimit)
	defer cancel()
	out, err := Run(bctx, nil, cc, append(append([]string(nil), args...), "-o", bin, file)...)
	if err != nil {
		return "", out, err
	}
	return bin, out, nil
}
