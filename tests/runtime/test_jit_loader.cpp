// The JIT's loader (runtime/jit.h, runtime/src/mapped_object.h): shared objects linked by
// jit_link_objects, made here from small LLVM modules that use each thing the loader must do
// (pointers among its own data, zero-filled pages, calls into libc and libm), and what it
// refuses, which dlopen then loads.
#include "../test_util.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <tessera/codegen/cpu_target.h>
#include <tessera/codegen/parallel_compile.h>
#include <tessera/error.h>
#include <tessera/runtime/jit.h>

using namespace tessera;
using namespace tessera::runtime;

namespace {

// A module for the JIT's target machine; `build` adds its functions.
template <class Build>
std::string shared_object_of(const std::string &name, Build build) {
    llvm::LLVMContext context;
    auto module = std::make_unique<llvm::Module>(name, context);
    std::unique_ptr<llvm::TargetMachine> tm = jit_target_machine();
    module->setDataLayout(tm->createDataLayout());
    module->setTargetTriple(tm->getTargetTriple().str());
    build(*module);
    return jit_link_objects({codegen::emit_object_code(*module, *tm)}, name);
}

llvm::Function *function(llvm::Module &m, const std::string &name, llvm::Type *result, std::vector<llvm::Type *> params) {
    return llvm::Function::Create(llvm::FunctionType::get(result, params, false), llvm::GlobalValue::ExternalLinkage, name, m);
}

// What each test's object holds:
//   message: "loaded", and `message_pointer` pointing at it (a relocation by the load address);
//   zeros: 3 pages of zero-filled memory (more than the rest of a page the file fills);
//   fill(p, n): memset(p, 7, n) with a size not known (a call into libc);
//   exponent(x): expf(x) (a call into libm, a versioned symbol).
std::string test_object(const std::string &name) {
    return shared_object_of(name, [](llvm::Module &m) {
        llvm::LLVMContext &c = m.getContext();
        llvm::IRBuilder<> b(c);
        auto *message = new llvm::GlobalVariable(m, llvm::ArrayType::get(b.getInt8Ty(), 7), true, llvm::GlobalValue::InternalLinkage,
                                                 llvm::ConstantDataArray::getString(c, "loaded"), "message");
        auto *pointer = new llvm::GlobalVariable(m, b.getPtrTy(), false, llvm::GlobalValue::InternalLinkage, message, "message_pointer");
        auto *zeros_type = llvm::ArrayType::get(b.getInt8Ty(), 3 * 4096 + 100);
        auto *zeros = new llvm::GlobalVariable(m, zeros_type, false, llvm::GlobalValue::InternalLinkage,
                                               llvm::ConstantAggregateZero::get(zeros_type), "zeros");

        llvm::Function *get_message = function(m, "get_message", b.getPtrTy(), {});
        b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", get_message));
        b.CreateRet(b.CreateLoad(b.getPtrTy(), pointer));

        llvm::Function *get_zeros = function(m, "get_zeros", b.getPtrTy(), {});
        b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", get_zeros));
        b.CreateRet(zeros);

        llvm::Function *fill = function(m, "fill", b.getVoidTy(), {b.getPtrTy(), b.getInt64Ty()});
        b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", fill));
        b.CreateMemSet(fill->getArg(0), b.getInt8(7), fill->getArg(1), llvm::MaybeAlign(1));
        b.CreateRetVoid();

        llvm::Function *exponent = function(m, "exponent", b.getFloatTy(), {b.getFloatTy()});
        b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", exponent));
        llvm::FunctionCallee expf = m.getOrInsertFunction("expf", llvm::FunctionType::get(b.getFloatTy(), {b.getFloatTy()}, false));
        llvm::CallInst *call = b.CreateCall(expf, {exponent->getArg(0)});
        call->setTailCall(false);
        b.CreateRet(call);
    });
}

// The object's functions do what they say.
void check_test_object(const JitCode &code) {
    auto get_message = reinterpret_cast<const char *(*)()>(code.lookup("get_message"));
    CHECK(std::string(get_message()) == "loaded");
    auto get_zeros = reinterpret_cast<unsigned char *(*)()>(code.lookup("get_zeros"));
    unsigned char *zeros = get_zeros();
    bool all_zero = true;
    for (int k = 0; k < 3 * 4096 + 100; ++k) all_zero = all_zero && zeros[k] == 0;
    CHECK(all_zero);
    zeros[3 * 4096 + 99] = 1;  // writable to its end
    auto fill = reinterpret_cast<void (*)(unsigned char *, int64_t)>(code.lookup("fill"));
    std::vector<unsigned char> bytes(1001, 0);
    fill(bytes.data() + 1, 999);
    CHECK(bytes[0] == 0);
    CHECK(bytes[1] == 7);
    CHECK(bytes[999] == 7);
    CHECK(bytes[1000] == 0);
    auto exponent = reinterpret_cast<float (*)(float)>(code.lookup("exponent"));
    CHECK(exponent(1.5f) == std::exp(1.5f));
    CHECK(code.find("no_such_symbol") == nullptr);
    CHECK_THROWS_AS(code.lookup("no_such_symbol"), InternalError);
}

// The number of mappings this process has.
int mapping_count() {
    std::ifstream maps("/proc/self/maps");
    int n = 0;
    for (std::string line; std::getline(maps, line);) ++n;
    return n;
}

} // namespace

TEST_CASE("the JIT maps its shared objects itself: own data, zero-filled pages, libc and libm calls", "[jit]") {
    std::string object = test_object("mapped_test");
    std::unique_ptr<JitCode> code = jit_load_shared_object(object, "get_message");
#if defined(__x86_64__)
    CHECK(code->loader() == "mapped");
#endif
    CHECK(code->address() == code->lookup("get_message"));
    check_test_object(*code);
}

TEST_CASE("TESSERA_JIT_LOADER=dlopen loads with the system's loader, and code loaded either way runs the same", "[jit]") {
    std::string object = test_object("dlopen_test");
    {
        test_util::ScopedEnvironment loader("TESSERA_JIT_LOADER", "dlopen");
        std::unique_ptr<JitCode> code = jit_load_shared_object(object, "get_message");
        CHECK(code->loader() == "dlopen");
        check_test_object(*code);
    }
    test_util::ScopedEnvironment loader("TESSERA_JIT_LOADER", "ld.so");
    try {
        jit_load_shared_object(object, "get_message");
        FAIL("a loader that is none was accepted");
    } catch (const Error &e) {
        CHECK_THAT(e.what(), Catch::Contains("TESSERA_JIT_LOADER=ld.so") && Catch::Contains("dlopen"));
    }
}

TEST_CASE("code with an initializer, which the JIT's loader would not run, is loaded by dlopen, which runs it", "[jit]") {
    std::string object = shared_object_of("initialized", [](llvm::Module &m) {
        llvm::LLVMContext &c = m.getContext();
        llvm::IRBuilder<> b(c);
        auto *value = new llvm::GlobalVariable(m, b.getInt32Ty(), false, llvm::GlobalValue::InternalLinkage, b.getInt32(0), "value");
        llvm::Function *init = function(m, "initialize", b.getVoidTy(), {});
        b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", init));
        b.CreateStore(b.getInt32(42), value);
        b.CreateRetVoid();
        llvm::appendToGlobalCtors(m, init, 0);
        llvm::Function *get = function(m, "get_value", b.getInt32Ty(), {});
        b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", get));
        b.CreateRet(b.CreateLoad(b.getInt32Ty(), value));
    });
    std::unique_ptr<JitCode> code = jit_load_shared_object(object, "get_value");
    CHECK(code->loader() == "dlopen");
    CHECK(reinterpret_cast<int (*)()>(code->address())() == 42);
}

TEST_CASE("bytes that are no shared object are refused by both loaders, with each one's reason", "[jit]") {
    std::string garbage(4096, 'x');
    try {
        jit_load_shared_object(garbage, "garbage_symbol");
        FAIL("garbage was loaded");
    } catch (const InternalError &e) {
        CHECK_THAT(e.what(), Catch::Contains("garbage_symbol") && Catch::Contains("could not be loaded"));
#if defined(__x86_64__)
        CHECK_THAT(e.what(), Catch::Contains("not an x86-64 ELF shared object"));
#endif
    }
}

TEST_CASE("code the JIT mapped is unmapped when its last owner goes", "[jit]") {
    std::string object = test_object("unmapped_test");
    { std::unique_ptr<JitCode> warm = jit_load_shared_object(object, "get_message"); }
    int before = mapping_count();
    for (int k = 0; k < 50; ++k) {
        std::unique_ptr<JitCode> code = jit_load_shared_object(object, "get_message");
        CHECK(std::string(reinterpret_cast<const char *(*)()>(code->address())()) == "loaded");
    }
    CHECK(mapping_count() <= before + 2);  // not 50 loads' worth (a few for the allocator)
}

TEST_CASE("each compile turns LLVM's X86 domain reassignment off again after lld reset LLVM's options", "[runtime][jit]") {
    // The pass changed no byte of 19 apps' code and took a sixth of their machine code's time
    // (codegen/src/cpu/cpu_target.cpp); lld's driver resets every LLVM option when it links,
    // as the JIT does after each compile.
    llvm::StringMap<llvm::cl::Option *> &options = llvm::cl::getRegisteredOptions();
    auto it = options.find("disable-x86-domain-reassignment");
    REQUIRE(it != options.end());
    auto *disabled = static_cast<llvm::cl::opt<bool> *>(it->second);
    for (int k = 0; k < 3; ++k) {
        shared_object_of("linked_" + std::to_string(k), [](llvm::Module &) {});  // (links with lld)
        llvm::LLVMContext context;
        auto module = std::make_unique<llvm::Module>("twice", context);
        std::unique_ptr<llvm::TargetMachine> tm = jit_target_machine();
        module->setDataLayout(tm->createDataLayout());
        module->setTargetTriple(tm->getTargetTriple().str());
        llvm::IRBuilder<> b(context);
        llvm::Function *twice = function(*module, "twice", b.getInt32Ty(), {b.getInt32Ty()});
        b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", twice));
        b.CreateRet(b.CreateShl(twice->getArg(0), 1));
        codegen::MachineCode code = codegen::compile_module(std::move(module), *tm, jit_target_machine, 1, false);
        CHECK(code.objects.size() == 1);
        INFO("compile " << k);
        CHECK(disabled->getValue());
    }
}
