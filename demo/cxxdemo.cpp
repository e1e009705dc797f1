// SPDX-License-Identifier: MIT
/*
 * A C++ demo: templates, functions inlined at -O2, and an exception thrown
 * through several frames and caught in main.
 */
#include <cstdio>
#include <stdexcept>
#include <vector>

template <typename T>
static inline T
square(T x)
{
	return x * x;
}

template <typename T>
__attribute__((noinline)) T
sum_squares(const std::vector<T> &v)
{
	T s = 0;
	for (const T &x : v)
		s += square(x);
	return s;
}

__attribute__((noinline)) static void
level3(int depth)
{
	if (depth > 2)
		throw std::runtime_error("too deep");
}

__attribute__((noinline)) static void
level2(int depth)
{
	level3(depth + 1);
	std::printf("not reached\n");
}

__attribute__((noinline)) static void
level1(int depth)
{
	level2(depth + 1);
	std::printf("not reached\n");
}

int
main()
{
	std::vector<int> vi{ 1, 2, 3, 4 };
	std::vector<double> vd{ 0.5, 1.5 };

	std::printf("%d %.2f\n", sum_squares(vi), sum_squares(vd));
	try {
		level1(1);
	} catch (const std::exception &e) {
		std::printf("caught: %s\n", e.what());
	}
	return 0;
}
