/* Prints the CPU identity the header reads on this target: "vendor|family|
 * model|brand" (barriertune_cpu_), or "none" where it reads none. Tests
 * point BARRIERTUNE_TEST_ROOT at a tree with a MIDR_EL1 of their own on
 * arm64. */
#include "barriertune.h"
#include <stdio.h>

int main(void)
{
	char vendor[49], brand[49];
	int family = 0, model = 0;
	if (!barriertune_cpu_(vendor, &family, &model, brand)) {
		printf("none\n");
		return 0;
	}
	printf("%s|%d|%d|%s\n", vendor, family, model, brand);
	return 0;
}
