// barriertune::barrier against std::barrier's specified behaviours
// ([thread.barrier]), for the test in cbarrier_test.go. Built with
// -DUSE_STD it runs the same checks on std::barrier, which shows that
// they test what the standard says. Exit 0 and "ok" when all hold.
#include "barriertune.h"

#include <atomic>
#include <barrier>
#include <cstdio>
#include <thread>
#include <vector>

struct noop {
	void operator()() noexcept {}
};

#if defined(USE_STD)
template <class F = noop>
using barrier = std::barrier<F>;
#else
template <class F = noop>
using barrier = barriertune::barrier<F>;
#endif

static std::atomic<int> bad;

// CHECK reports a failed condition (the first ten).
#define CHECK(cond, ...)                                      \
	do {                                                  \
		if (!(cond) && bad.fetch_add(1) < 10) {       \
			std::fprintf(stderr, __VA_ARGS__);    \
			std::fprintf(stderr, "\n");           \
		}                                             \
	} while (0)

// The completion runs once per phase, in one thread, after every arrival
// of the phase and before any thread of it is released: every thread
// reads the phase count the completion wrote, and data written before
// arriving is visible to it.
static void completion_once(int n, int phases)
{
	std::atomic<int> completions{0}, inside{0}, arrivals{0};
	std::vector<int> data(n);
	int seen_total = 0; // written by the completion only
	auto done = [&]() noexcept {
		CHECK(inside.fetch_add(1) == 0, "two completions at once");
		int a = arrivals.load();
		CHECK(a == n * (completions.load() + 1), "completion after %d arrivals, want %d", a, n * (completions.load() + 1));
		int sum = 0;
		for (int v : data)
			sum += v;
		seen_total = sum;
		completions.fetch_add(1);
		inside.fetch_sub(1);
	};
	barrier<decltype(done)> b(n, done);
	std::vector<std::thread> ts;
	for (int id = 0; id < n; id++) {
		ts.emplace_back([&, id] {
			for (int p = 0; p < phases; p++) {
				data[id] = p + 1;
				arrivals.fetch_add(1);
				b.arrive_and_wait();
				CHECK(completions.load() == 2 * p + 1, "thread %d released in phase %d with %d completions", id, 2 * p, completions.load());
				CHECK(seen_total == n * (p + 1), "the completion saw %d, want %d", seen_total, n * (p + 1));
				arrivals.fetch_add(1);
				b.arrive_and_wait(); // nobody writes data before all have read
			}
		});
	}
	for (auto &t : ts)
		t.join();
	CHECK(completions.load() == 2 * phases, "%d completions for %d phases", completions.load(), 2 * phases);
}

// arrive returns a token; wait(token) returns once that phase completed,
// and arrive(update) counts update arrivals.
static void split_and_update()
{
	std::atomic<int> completions{0};
	auto done = [&]() noexcept { completions.fetch_add(1); };
	barrier<decltype(done)> b(3, done);
	std::thread t([&] {
		for (int p = 0; p < 100; p++) {
			auto tok = b.arrive(2); // two of the three arrivals
			b.wait(std::move(tok));
			CHECK(completions.load() >= p + 1, "arrive(2): released before the phase completed");
		}
	});
	for (int p = 0; p < 100; p++) {
		auto tok = b.arrive();
		b.wait(std::move(tok));
		CHECK(completions.load() >= p + 1, "arrive(): released before the phase completed");
	}
	t.join();
	CHECK(completions.load() == 100, "%d completions, want 100", completions.load());
}

// arrive_and_drop: the dropping thread counts in this phase and the
// expected count is one less from the next; the others go on alone.
static void drop(int n)
{
	std::atomic<int> completions{0};
	auto done = [&]() noexcept { completions.fetch_add(1); };
	barrier<decltype(done)> b(n, done);
	std::vector<std::thread> ts;
	for (int id = 0; id < n; id++) {
		ts.emplace_back([&, id] {
			for (int p = 0; p < id; p++)
				b.arrive_and_wait();
			b.arrive_and_drop(); // in phase id
		});
	}
	for (auto &t : ts)
		t.join();
	CHECK(completions.load() == n, "%d completions, want %d (one per phase until all dropped)", completions.load(), n);
}

// One participant: every arrive completes the phase at once.
static void alone()
{
	int completions = 0;
	auto done = [&]() noexcept { completions++; };
	barrier<decltype(done)> b(1, done);
	for (int i = 0; i < 1000; i++)
		b.arrive_and_wait();
	CHECK(completions == 1000, "%d completions alone, want 1000", completions);
	b.wait(b.arrive());
	CHECK(completions == 1001, "arrive then wait alone");
}

int main()
{
	static_assert(barrier<>::max() >= 64, "max() too small");
	completion_once(2, 2000);
	completion_once(3, 500);
	completion_once(8, 100);
	split_and_update();
	drop(2);
	drop(5);
	drop(9);
	alone();
#if !defined(USE_STD)
	bool threw = false;
	try {
		barriertune::barrier<> b(-1);
	} catch (const std::invalid_argument &) {
		threw = true;
	}
	CHECK(threw, "expected -1: no std::invalid_argument");
#endif
	if (bad.load() != 0)
		return 1;
	std::printf("ok\n");
	return 0;
}
