/* The header defines nothing a program may want for itself: no macro of
 * <cpuid.h> (bit_AVX and its kin, __cpuid), so these compile after it. */
#include "barriertune.h"

enum { bit_AVX = 1, bit_SSE2 = 2, bit_CMPXCHG16B = 3 };
#if defined(__cpuid) || defined(__cpuid_count) || defined(signature_INTEL_ebx)
#error "barriertune.h leaked a <cpuid.h> macro"
#endif

int main(void)
{
	struct barriertune_barrier b;
	int err = barriertune_barrier_init(&b, 1);
	if (err != 0)
		return 1;
	if (barriertune_barrier_wait(&b, 0) != BARRIERTUNE_BARRIER_SERIAL_THREAD)
		return 1;
	barriertune_barrier_destroy(&b);
	return bit_AVX + bit_SSE2 + bit_CMPXCHG16B == 6 ? 0 : 1;
}
