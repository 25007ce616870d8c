/* The second translation unit of shared_a.c. */
#include "barriertune.h"

const void *unit_b_spinning(void);
const void *unit_b_process(void);

const void *unit_b_spinning(void) { return &barriertune_spinning_; }
const void *unit_b_process(void) { return &barriertune_proc_; }
