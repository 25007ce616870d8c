package barriers

import "errors"

// ErrBroken is what Wait panics with (wrapped) and WaitContext returns on a
// broken barrier.
//
// TODO(hybrid): helper "lib" defines ErrBroken for the whole package; this
// file goes away when lib's branch is on main.
var ErrBroken = errors.New("barriers: broken barrier")
