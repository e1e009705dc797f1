// SPDX-License-Identifier: MIT
// A C++ exception thrown through three frames and caught in main.
#include <stdexcept>

__attribute__((noinline)) static void
thrower(int n)
{
	if (n > 2)
		throw std::runtime_error("deep");
}

__attribute__((noinline)) static void
middle(int n)
{
	thrower(n + 1);
	thrower(n + 2);
}

int
main()
{
	int caught = 0;

	try {
		middle(1);
	} catch (const std::exception &) {
		caught = 1;
	}
	return !caught;
}
