// conform.cpp: barriertune::barrier against what LLVM libc++'s
// [thread.barrier] tests check (libcxx/test/std/thread/thread.barrier and
// libcxx/test/libcxx/thread/thread.barrier in llvm/llvm-project), written
// anew and checked harder: many phases, several thread counts, exact
// completion counts, the order of completion and release, and every check
// over storage filled with 0x00 and with 0xAB before the barrier is
// constructed in it (the two runs must agree). For the test in
// conform_test.go. Built with -DUSE_STD the same checks run on std::barrier
// (libstdc++, libc++): they test what the standard says.
//
//   conform             every check, over zeroed and over 0xAB storage
//   conform fresh       a short run over storage never written (for
//                       valgrind: a member read before it is set shows)
//   conform arrive0     arrive(0): a build without NDEBUG must stop
//   conform arrive-over arrive(update) above the arrivals still expected
//   conform throws      (built with -DTHROWING_COMPLETION
//                       -DBARRIERTUNE_ALLOW_THROWING_COMPLETION) a
//                       completion that throws: the program must end
//
// Exit 0 and "ok" when all hold; 1 and the failures otherwise.
#include "barriertune.h"

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <unistd.h>
#include <utility>
#include <vector>

#if defined(USE_STD)
template <class F>
using bar = std::barrier<F>;
using bar0 = std::barrier<>;
#else
template <class F>
using bar = barriertune::barrier<F>;
using bar0 = barriertune::barrier<>;
#endif

static std::atomic<int> failures;
static const char *fill_name = "";

#define EXPECT(cond, ...)                                                   \
	do {                                                                \
		if (!(cond) && failures.fetch_add(1) < 20) {                \
			std::fprintf(stderr, "[%s storage] ", fill_name);   \
			std::fprintf(stderr, __VA_ARGS__);                  \
			std::fprintf(stderr, "\n");                         \
		}                                                           \
	} while (0)

// fill: the byte the storage holds before construction; -1: none (fresh
// memory from operator new, for valgrind).
static int fill = 0;

// placed constructs a barrier in storage of its own, first filled with
// fill, and destroys it and frees the storage at scope exit.
template <class B>
class placed {
public:
	template <class... A>
	explicit placed(A &&...a)
	{
		mem_ = ::operator new(sizeof(B), std::align_val_t(alignof(B)));
		if (fill >= 0)
			std::memset(mem_, fill, sizeof(B));
		try {
			b_ = ::new (mem_) B(std::forward<A>(a)...);
		} catch (...) {
			::operator delete(mem_, std::align_val_t(alignof(B)));
			throw;
		}
	}
	placed(const placed &) = delete;
	placed &operator=(const placed &) = delete;
	~placed()
	{
		b_->~B();
		::operator delete(mem_, std::align_val_t(alignof(B)));
	}
	B &operator*() { return *b_; }
	B *operator->() { return b_; }

private:
	void *mem_;
	B *b_;
};

// The trace of a run: what each check counted, compared between fills.
static std::string trace;

static void note(const char *what, long long v)
{
	trace += what;
	trace += '=';
	trace += std::to_string(v);
	trace += ' ';
}

// completion.pass.cpp counts completions over ten phases of two threads.
// Here: n threads, many phases; the completion runs exactly once per
// phase, one at a time, after all n arrivals of its phase and before any
// thread of the phase is released; what the threads wrote before
// arriving is visible to it, and what it wrote to them after release.
static void completion_once_per_phase(int n, int phases)
{
	std::atomic<long> arrivals{0}, released{0}, completions{0};
	std::atomic<int> inside{0};
	std::vector<long> data(n, 0);
	long total = 0; // written by the completion only
	auto done = [&]() noexcept {
		EXPECT(inside.fetch_add(1) == 0, "n=%d: two completions at once", n);
		long c = completions.load();
		EXPECT(arrivals.load() == n * (c + 1), "n=%d: completion %ld after %ld arrivals, want %ld", n, c, arrivals.load(), n * (c + 1));
		EXPECT(released.load() == n * c, "n=%d: completion %ld ran after %ld releases, want %ld (a thread left before it)", n, c,
		       released.load(), n * c);
		long sum = 0;
		for (long v : data)
			sum += v;
		total = sum;
		completions.fetch_add(1);
		inside.fetch_sub(1);
	};
	{
		placed<bar<decltype(done)>> b(n, done);
		std::vector<std::thread> ts;
		for (int id = 0; id < n; id++) {
			ts.emplace_back([&, id] {
				for (int p = 0; p < phases; p++) {
					if (p % 2 == 0)
						data[id] = p + 1;
					arrivals.fetch_add(1);
					b->arrive_and_wait();
					long c = completions.load();
					EXPECT(c == p + 1, "n=%d: thread %d released from phase %d after %ld completions, want %d", n, id, p, c,
					       p + 1);
					if (p % 2 == 0)
						EXPECT(total == (long)n * (p + 1), "n=%d: phase %d: the completion summed %ld, want %ld", n, p, total,
						       (long)n * (p + 1));
					released.fetch_add(1);
				}
			});
		}
		for (auto &t : ts)
			t.join();
	}
	EXPECT(completions.load() == phases, "n=%d: %ld completions for %d phases", n, completions.load(), phases);
	note("completions", completions.load());
}

// arrive_and_wait.pass.cpp runs two threads through ten phases. Here: no
// thread leaves a phase before every thread has arrived in it, for
// several n (more threads than CPUs too) and many phases.
static void arrive_and_wait_holds(int n, int phases)
{
	std::atomic<long> arrivals{0};
	{
		placed<bar0> b(n);
		std::vector<std::thread> ts;
		for (int id = 0; id < n; id++) {
			ts.emplace_back([&, id] {
				for (int p = 0; p < phases; p++) {
					arrivals.fetch_add(1);
					b->arrive_and_wait();
					long a = arrivals.load();
					EXPECT(a >= (long)n * (p + 1), "n=%d: thread %d left phase %d after %ld arrivals, want %ld", n, id, p, a,
					       (long)n * (p + 1));
				}
			});
		}
		for (auto &t : ts)
			t.join();
	}
	note("arrivals", arrivals.load());
}

// arrive.pass.cpp: arrive returns a token and wait(token) returns once
// the token's phase completed; arrive(2) counts two arrivals. Here too:
// wait holds until the late arrival is in; a token of a phase that has
// already completed (the barrier has moved on to the next) returns at
// once; wait is const.
static void tokens()
{
	{
		placed<bar0> b(2);
		std::atomic<bool> late_in{false};
		auto tok = b->arrive();
		std::thread t([&] {
			std::this_thread::sleep_for(std::chrono::milliseconds(20));
			late_in.store(true);
			(void)b->arrive();
		});
		const bar0 &cb = *b;
		cb.wait(std::move(tok));
		EXPECT(late_in.load(), "wait(token) returned before the phase's last arrival");
		t.join();

		// One thread, two arrivals: the phase completes in arrive(2).
		auto tok2 = b->arrive(2);
		b->wait(std::move(tok2));
		note("tokens", 1);
	}
	{
		// The token of the preceding phase after the barrier moved on.
		std::atomic<int> completions{0};
		auto done = [&]() noexcept { completions.fetch_add(1); };
		placed<bar<decltype(done)>> b(2, done);
		auto old = b->arrive();    // phase 0, one of two
		std::thread t([&] {
			b->arrive_and_wait(); // completes phase 0
			(void)b->arrive();    // phase 1, one of two
		});
		t.join();
		b->wait(std::move(old)); // phase 0 is over: at once
		EXPECT(completions.load() == 1, "after phase 0: %d completions, want 1", completions.load());
		b->arrive_and_wait(); // completes phase 1
		EXPECT(completions.load() == 2, "after phase 1: %d completions, want 2", completions.load());
		note("old-token", completions.load());
	}
	{
		// Split arrive and wait over many phases, with updates: one
		// thread arrives for two of three, another for one.
		std::atomic<int> completions{0};
		auto done = [&]() noexcept { completions.fetch_add(1); };
		placed<bar<decltype(done)>> b(3, done);
		std::thread t([&] {
			for (int p = 0; p < 300; p++) {
				auto tk = b->arrive(2);
				b->wait(std::move(tk));
				EXPECT(completions.load() >= p + 1, "arrive(2): released from phase %d before it completed", p);
			}
		});
		for (int p = 0; p < 300; p++) {
			auto tk = b->arrive();
			b->wait(std::move(tk));
			EXPECT(completions.load() >= p + 1, "arrive(): released from phase %d before it completed", p);
		}
		t.join();
		EXPECT(completions.load() == 300, "%d completions of split phases, want 300", completions.load());
		note("split", completions.load());
	}
}

// arrive_and_drop.pass.cpp: of two threads one drops, the other goes on
// alone for two phases. Here: the dropping thread counts in its phase and
// the expected count is one less for every later phase; threads drop in
// different phases; the last arrival of a phase may be a drop; a barrier
// whose threads have all dropped is destroyed cleanly.
static void drops(int n)
{
	{
		// Thread id drops in phase id: phase p has n - p arrivals.
		std::atomic<int> completions{0};
		auto done = [&]() noexcept { completions.fetch_add(1); };
		placed<bar<decltype(done)>> b(n, done);
		std::vector<std::thread> ts;
		for (int id = 0; id < n; id++) {
			ts.emplace_back([&, id] {
				for (int p = 0; p < id; p++)
					b->arrive_and_wait();
				b->arrive_and_drop();
			});
		}
		for (auto &t : ts)
			t.join();
		EXPECT(completions.load() == n, "n=%d, a drop per phase: %d completions, want %d", n, completions.load(), n);
		note("drop-each", completions.load());
	}
	{
		// Half drop in phase 0 (after a delay: the drop is the phase's last
		// arrival); the rest run 200 more phases with the smaller count
		// (with the old count they hang).
		std::atomic<int> completions{0};
		auto done = [&]() noexcept { completions.fetch_add(1); };
		placed<bar<decltype(done)>> b(n, done);
		int dropping = n / 2;
		std::vector<std::thread> ts;
		for (int id = 0; id < n; id++) {
			ts.emplace_back([&, id] {
				if (id < dropping) {
					std::this_thread::sleep_for(std::chrono::milliseconds(5));
					b->arrive_and_drop();
					return;
				}
				for (int p = 0; p < 201; p++)
					b->arrive_and_wait();
			});
		}
		for (auto &t : ts)
			t.join();
		EXPECT(completions.load() == 201, "n=%d, %d dropped in phase 0: %d completions, want 201", n, dropping, completions.load());
		note("drop-half", completions.load());
	}
}

// max.pass.cpp: max() is a positive constant expression, for the default
// completion and a lambda's. Here too: at least the header's
// BARRIERTUNE_MAX_THREADS and above 65536 (issue 43: as large as the
// counter allows), a barrier of 65539 expected arrivals (above the old
// cap) completes its phase by arrive(update), and (barriertune) a barrier
// of max() expected arrivals does. (Not for std::barrier: libstdc++'s and
// libc++'s walk their trees once per unit of an update, 12-16 s for 65539.)
static void max_is_large()
{
	auto l = []() noexcept {};
	static_assert(bar0::max() > 0, "max() not positive");
	static_assert(bar<decltype(l)>::max() > 0, "max() not positive");
	constexpr std::ptrdiff_t m = bar0::max();
	static_assert(m >= BARRIERTUNE_MAX_THREADS, "max() below BARRIERTUNE_MAX_THREADS");
	EXPECT(m > 65536, "max() is %td: no larger than the C barrier's thread cap (issue 43: as large as the counter allows)", m);
#if !defined(USE_STD)
	{
		std::ptrdiff_t big = 65539;
		if (big <= m) {
			std::atomic<int> completions{0};
			auto done = [&]() noexcept { completions.fetch_add(1); };
			placed<bar<decltype(done)>> b(big, done);
			auto t1 = b->arrive(big - 1);
			EXPECT(completions.load() == 0, "65539 expected: completed after 65538 arrivals");
			auto t2 = b->arrive(1);
			b->wait(std::move(t2));
			b->wait(std::move(t1));
			EXPECT(completions.load() == 1, "65539 expected: %d completions, want 1", completions.load());
			note("big", completions.load());
		}
	}
	{
		std::atomic<int> completions{0};
		auto done = [&]() noexcept { completions.fetch_add(1); };
		placed<bar<decltype(done)>> b(m, done);
		b->wait(b->arrive(m));
		EXPECT(completions.load() == 1, "max() expected: %d completions, want 1", completions.load());
	}
#endif
}

// ctor.compile.pass.cpp: the constructor is explicit. Here too: not
// copyable, the token movable, and (assert.ctor.pass.cpp's precondition,
// which barriertune checks always) a negative count is refused with
// std::invalid_argument; 0 expected is allowed.
static void construction()
{
#if !(defined(USE_STD) && defined(_LIBCPP_VERSION))
	// (libc++ 14's own std::barrier fails this: its constructor became
	// explicit later, with the test.)
	static_assert(!std::is_convertible_v<std::ptrdiff_t, bar0>, "the constructor is not explicit");
#endif
	static_assert(std::is_constructible_v<bar0, std::ptrdiff_t>, "no barrier(ptrdiff_t)");
	static_assert(!std::is_copy_constructible_v<bar0> && !std::is_copy_assignable_v<bar0>, "copyable");
	static_assert(std::is_move_constructible_v<bar0::arrival_token>, "the token does not move");
	placed<bar0> zero(0);
#if !defined(USE_STD)
	for (std::ptrdiff_t bad : {std::ptrdiff_t(-1), std::ptrdiff_t(-1000)}) {
		bool threw = false;
		try {
			placed<bar0> b(bad);
		} catch (const std::invalid_argument &) {
			threw = true;
		}
		EXPECT(threw, "expected %td: no std::invalid_argument", bad);
	}
#endif
}

// One participant: every arrival completes its phase at once.
static void alone()
{
	int completions = 0;
	auto done = [&]() noexcept { completions++; };
	placed<bar<decltype(done)>> b(1, done);
	for (int i = 0; i < 1000; i++)
		b->arrive_and_wait();
	b->wait(b->arrive());
	EXPECT(completions == 1001, "alone: %d completions, want 1001", completions);
	note("alone", completions);
}

static void all(bool quick)
{
	construction();
	max_is_large();
	alone();
	tokens();
	completion_once_per_phase(2, quick ? 50 : 3000);
	if (!quick) {
		completion_once_per_phase(3, 500);
		completion_once_per_phase(7, 200);
	}
	arrive_and_wait_holds(quick ? 2 : 5, quick ? 50 : 500);
	drops(2);
	if (!quick)
		drops(5);
}

#if defined(THROWING_COMPLETION)
// [thread.barrier.class]: the completion must be nothrow-invocable. Issue
// 43 has the header reject one that is not at compile time (the test
// builds this with -fsyntax-only and wants an error that says so); with
// BARRIERTUNE_ALLOW_THROWING_COMPLETION it builds, and a completion that
// throws ends the program ("conform throws") rather than leaving the other
// thread waiting for ever.
static int throwing_completion()
{
	auto done = []() { throw 1; };
	bar<decltype(done)> b(2, done);
	std::thread t([&] { b.arrive_and_wait(); });
	std::this_thread::sleep_for(std::chrono::milliseconds(10));
	b.arrive_and_wait();
	t.join();
	std::printf("the completion threw and the program went on\n");
	return 0;
}
#endif

// preconditions runs a call that violates arrive's precondition
// (assert.arrive.pass.cpp: update 0, update above the expected count); a
// build without NDEBUG stops the program (the header's assert), so
// "returned" is never printed.
static int preconditions(const char *what)
{
	placed<bar0> b(5);
	if (std::strcmp(what, "arrive0") == 0)
		(void)b->arrive(0);
	else
		(void)b->arrive(10);
	std::printf("%s returned\n", what);
	return 0;
}

int main(int argc, char **argv)
{
	alarm(120); // a hang fails
	if (argc > 1 && (std::strcmp(argv[1], "arrive0") == 0 || std::strcmp(argv[1], "arrive-over") == 0))
		return preconditions(argv[1]);
#if defined(THROWING_COMPLETION)
	if (argc > 1 && std::strcmp(argv[1], "throws") == 0)
		return throwing_completion();
#endif
	if (argc > 1 && std::strcmp(argv[1], "fresh") == 0) {
		fill = -1;
		fill_name = "fresh";
		all(true);
	} else {
		std::string traces[2];
		const int fills[2] = {0x00, 0xAB};
		const char *names[2] = {"0x00", "0xAB"};
		for (int k = 0; k < 2; k++) {
			fill = fills[k];
			fill_name = names[k];
			trace.clear();
			all(false);
			traces[k] = trace;
		}
		if (traces[0] != traces[1]) {
			failures.fetch_add(1);
			std::fprintf(stderr, "over 0x00 storage: %s\nover 0xAB storage: %s\n", traces[0].c_str(), traces[1].c_str());
		}
	}
	if (failures.load() != 0)
		return 1;
	std::printf("ok\n");
	return 0;
}
