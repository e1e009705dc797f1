// SPDX-License-Identifier: MIT
// Test program for mt-symbolize: templates, lambdas, virtual calls and the
// heavy inlining of the C++ standard library at -O2 -g.  Built at test
// time by build-test-programs; only its symbols and DWARF matter.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace geo {
template <typename T> struct point {
	T x, y;
	T dot(const point &o) const { return x * o.x + y * o.y; }
};

template <typename T, int N> T
power_sum(const std::vector<point<T>> &v)
{
	T s = 0;
	for (const auto &p : v) {
		T d = p.dot(p), k = 1;
		for (int i = 0; i < N; i++)
			k *= d;
		s += k;
	}
	return s;
}

struct shape {
	virtual ~shape() = default;
	virtual double area() const = 0;
};
struct square : shape {
	double s;
	explicit square(double v) : s(v) {}
	double area() const override { return s * s; }
};
struct circle : shape {
	double r;
	explicit circle(double v) : r(v) {}
	double area() const override { return 3.14159 * r * r; }
};
} // namespace geo

template <typename F> static int
apply_n(F f, int n)
{
	int acc = 0;
	for (int i = 0; i < n; i++)
		acc += f(i);
	return acc;
}

static std::map<std::string, int>
word_counts(const std::vector<std::string> &words)
{
	std::map<std::string, int> m;
	for (const auto &w : words)
		m[w]++;
	return m;
}

int
main(int argc, char **argv)
{
	std::vector<geo::point<double>> pd;
	std::vector<geo::point<int>> pi;
	for (int i = 0; i < 100 * argc; i++) {
		pd.push_back({ i * 0.5, i * 0.25 });
		pi.push_back({ i, -i });
	}
	std::sort(pd.begin(), pd.end(), [](const auto &a, const auto &b) {
		return a.x * a.y > b.x * b.y;
	});
	std::vector<std::unique_ptr<geo::shape>> shapes;
	for (int i = 0; i < 10; i++) {
		if (i % 2)
			shapes.push_back(std::make_unique<geo::square>(i));
		else
			shapes.push_back(std::make_unique<geo::circle>(i));
	}
	double total = std::accumulate(shapes.begin(), shapes.end(), 0.0,
	    [](double a, const auto &s) { return a + s->area(); });
	std::function<int(int)> sq = [argc](int x) { return x * x + argc; };
	std::vector<std::string> words(argv, argv + argc);
	words.push_back("x");
	auto wc = word_counts(words);
	std::printf("%g %g %d %d %zu\n", geo::power_sum<double, 3>(pd), total,
	    geo::power_sum<int, 2>(pi), apply_n(sq, 50), wc.size());
	return 0;
}
