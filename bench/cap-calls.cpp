// SPDX-License-Identifier: MIT
// bench/capture-speed's call-heavy C++ workload: virtual calls, small
// functions, recursion and std::map, so most blocks end in a call or a
// return.  `cap-calls N`: N rounds.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <vector>

struct Shape {
	virtual ~Shape() = default;
	virtual long area() const = 0;
};
struct Sq : Shape {
	long s;
	explicit Sq(long v) : s(v) {}
	long area() const override { return s * s; }
};
struct Rect : Shape {
	long a, b;
	Rect(long x, long y) : a(x), b(y) {}
	long area() const override { return a * b; }
};

__attribute__((noinline)) static long
fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 100, sum = 0;
	std::vector<std::unique_ptr<Shape>> v;

	for (int i = 0; i < 64; i++) {
		if (i % 2)
			v.emplace_back(new Sq(i));
		else
			v.emplace_back(new Rect(i, i + 1));
	}
	for (long r = 0; r < n; r++) {
		std::map<long, long> m;

		for (const auto &s : v)
			sum += s->area();
		for (long i = 0; i < 200; i++)
			m[(i * 7919) % 257] += i;
		for (const auto &kv : m)
			sum += kv.second;
		sum += fib(16);
	}
	std::printf("%ld\n", sum);
	return 0;
}
