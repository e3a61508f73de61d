// A program outside the Tessera tree, built against the installed package.
#include <cstdio>

#include <tessera/tessera.h>

int main() {
    using namespace tessera;
    Var x("x");
    Func f("f");
    f(x) = x * x + 1;
    Buffer<int> out = f.realize({5});
    bool ok = out(4) == 17;
    std::printf("outside project: %s\n", ok ? "OK" : "WRONG");
    return ok ? 0 : 1;
}
